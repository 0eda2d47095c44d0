"""Neighbour-sampled mini-batches, topograph against DGL 2.1, in one process, on a graph the user gives as a
Planetoid-layout .npz (edge_index [2, E], y; ../shared/data/planetoid/SOURCE.txt describes it):

    python python/benchmarks/sampler.py ../shared/data/facebook_pages/facebook_pages.npz \
        [--fanouts 10,10] [--batch 1024] [--threads 2] [--epochs 3]

in an environment with torch, DGL 2.1.0 and topograph (python/README.md, "Against DGL and PyG"). Never run by
the build or the tests. One epoch = every node once as a seed, in batches, through each library's
MultiLayerNeighborSampler + DataLoader (the blocks per layer, without feature gathering: both loaders are
asked for structure only, so the figure is the sampler's). Epochs alternate between the libraries (A, B, A,
B, ...) so that a change in the machine's load hits both; medians of seeds per second. Before timing, one
batch's blocks of each are checked for DGL's invariants (fan-outs respected, destinations leading sources,
real edges)."""
import os

os.environ.setdefault("GOMP_SPINCOUNT", "1000")
os.environ.setdefault("DGLBACKEND", "pytorch")

import argparse
import statistics
import time

import numpy as np

import topograph  # before torch: both OpenMP pools short-spinning

import torch
import dgl

from topograph.dataloading import DataLoader as TDataLoader, MultiLayerNeighborSampler as TSampler


def check(blocks, nid, fanouts, u, v, edges_by_id):
    """DGL's block invariants: destinations lead the sources, fan-outs hold, edges are the graph's."""
    for block, fanout in zip(blocks, fanouts):
        src, dst = edges_by_id(block)
        sid, did = block.srcdata[nid], block.dstdata[nid]
        assert torch.equal(sid[: block.num_dst_nodes()], did)
        assert int(block.in_degrees().max()) <= fanout
        eid = block.edata[nid].long()
        assert torch.equal(u[eid], sid[src.long()]) and torch.equal(v[eid], did[dst.long()])


def epoch(loader):
    start, seeds = time.perf_counter(), 0
    for _, out, _ in loader:
        seeds += out.numel()
    return seeds / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("npz")
    parser.add_argument("--fanouts", default="10,10")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    topograph.set_num_threads(args.threads)
    fanouts = [int(f) for f in args.fanouts.split(",")]
    data = np.load(args.npz)
    u, v = (torch.from_numpy(data["edge_index"][i]).long() for i in (0, 1))
    n = int(data["y"].shape[0])
    gt = topograph.graph((u, v), num_nodes=n)
    gd = dgl.graph((u, v), num_nodes=n)
    seeds = torch.arange(n)
    t_loader = TDataLoader(gt, seeds, TSampler(fanouts), batch_size=args.batch, shuffle=True)
    d_loader = dgl.dataloading.DataLoader(gd, seeds, dgl.dataloading.MultiLayerNeighborSampler(fanouts),
                                          batch_size=args.batch, shuffle=True, num_workers=0)
    _, _, t_blocks = next(iter(t_loader))
    _, _, d_blocks = next(iter(d_loader))
    check(t_blocks, topograph.NID, fanouts, u, v, lambda b: b.all_edges())
    check(d_blocks, dgl.NID, fanouts, u, v, lambda b: b.edges(order="eid"))
    rates = {"topograph": [], "dgl": []}
    for _ in range(args.epochs):
        rates["topograph"].append(epoch(t_loader))
        rates["dgl"].append(epoch(d_loader))
    print(f"graph {os.path.basename(args.npz)}: {n:,} nodes, {u.numel():,} edges; fan-outs {fanouts}, batch "
          f"{args.batch}, {args.threads} threads, {args.epochs} epochs each (interleaved)")
    for name, r in rates.items():
        print(f"  {name:10s} {statistics.median(r):12,.0f} seeds/s  (epochs: "
              + ", ".join(f"{x:,.0f}" for x in r) + ")")
    print(f"  topograph / dgl: {statistics.median(rates['topograph']) / statistics.median(rates['dgl']):.2f}x")


if __name__ == "__main__":
    main()
