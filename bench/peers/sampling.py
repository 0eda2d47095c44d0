"""DGL 2.1's neighbour sampler against `topo-graph sample` on the same .npz graph (issue #36, item 2: sampling
throughput against DGL's sampler). Never imported by the build.

    python bench/peers/sampling.py GRAPH.npz --fanouts 10,25 --batch 1024 --batches 50 --threads 2 --json OUT

The graph is the one node-classify trains on (graphs.py's load_graph: every listed edge plus a self loop per
node). Batches of training nodes from a seeded shuffle; each is timed through
`dgl.dataloading.MultiLayerNeighborSampler(fanouts).sample(g, seeds)`: per layer, from the output layer down,
sample_neighbors of the current destinations and to_block, as topo-graph sample times sample_blocks. One batch
first, untimed, builds the graph's formats. Prints and writes the same JSON fields as topo-graph sample.
(python/benchmarks/sampler.py times the Python package's DataLoader against DGL's in one process instead.)
"""
import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("--fanouts", default="10,25")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--batches", type=int, default=50)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    a = ap.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ.setdefault("DGLBACKEND", "pytorch")
    import torch

    torch.set_num_threads(a.threads)
    import dgl

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from graphs import load_graph

    src, dst, n, _, _, train = load_graph(a.graph, torch)
    g = dgl.graph((src, dst), num_nodes=n)
    fanouts = [int(f) for f in a.fanouts.split(",")]
    sampler = dgl.dataloading.MultiLayerNeighborSampler(fanouts)
    ids = torch.nonzero(train, as_tuple=True)[0]
    ids = ids[torch.randperm(len(ids), generator=torch.Generator().manual_seed(a.seed))]
    at = 0

    def draw():
        nonlocal at
        take = []
        for _ in range(min(a.batch, len(ids))):
            if at == len(ids):
                at = 0
            take.append(ids[at])
            at += 1
        return torch.stack(take)

    sampler.sample(g, draw())
    ms, edges, inputs = [], 0, 0
    for _ in range(a.batches):
        seeds = draw()
        t0 = time.perf_counter()
        input_nodes, _, blocks = sampler.sample(g, seeds)
        ms.append((time.perf_counter() - t0) * 1e3)
        edges += sum(b.num_edges() for b in blocks)
        inputs += len(input_nodes)
    total = sum(ms) / 1e3
    report = {"library": f"dgl {dgl.__version__}", "fanouts": fanouts, "batch": a.batch, "batches": a.batches,
              "threads": a.threads, "median_batch_ms": sorted(ms)[len(ms) // 2],
              "seeds_per_second": a.batches * min(a.batch, len(ids)) / total,
              "sampled_edges_per_second": edges / total, "edges_per_batch": edges / a.batches,
              "input_nodes_per_batch": inputs / a.batches}
    print(json.dumps(report))
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump(report, f, indent=2)
        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
