"""What excluding edges costs the neighbour sampler (sample_neighbors' exclude_edges, NeighborSampler's
exclude_eids, as as_edge_prediction_sampler passes them), on a generated graph:

    python python/benchmarks/exclusion.py [--nodes 1000000] [--edges 10000000] [--seeds 1024] [--excluded 1024]

Uniform random edges; one batch of distinct seeds; `--excluded` random edge ids left out. The two calls, with
and without the exclusion, alternate `--reps` times after a warm-up (the graph's CSC is built before timing,
and alternating lets a change of the machine's load hit both); medians in ms and their ratio are printed.
Never run by the build or the tests."""
import os

os.environ.setdefault("GOMP_SPINCOUNT", "1000")

import argparse
import statistics
import time

import topograph  # before torch: both OpenMP pools short-spinning

import torch


def median_ms(calls, reps: int) -> list:
    """Each call's median time over reps rounds, the calls alternating within a round."""
    for call in calls:
        call()
    times = [[] for _ in calls]
    for _ in range(reps):
        for call, spent in zip(calls, times):
            start = time.perf_counter()
            call()
            spent.append((time.perf_counter() - start) * 1e3)
    return [statistics.median(t) for t in times]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--seeds", type=int, default=1024)
    parser.add_argument("--excluded", type=int, default=1024)
    parser.add_argument("--fanouts", default="10,25")
    parser.add_argument("--reps", type=int, default=25)
    args = parser.parse_args()
    torch.manual_seed(0)
    n, e = args.nodes, args.edges
    g = topograph.graph((torch.randint(0, n, (e,)), torch.randint(0, n, (e,))), num_nodes=n)
    g.create_formats_()
    seeds = torch.randperm(n)[: args.seeds]
    excluded = torch.randint(0, e, (args.excluded,))
    fanouts = [int(f) for f in args.fanouts.split(",")]
    sampler = topograph.dataloading.NeighborSampler(fanouts)
    rows = [
        (f"sample_neighbors, fan-out {fanouts[-1]}",
         lambda: topograph.sampling.sample_neighbors(g, seeds, fanouts[-1]),
         lambda: topograph.sampling.sample_neighbors(g, seeds, fanouts[-1], exclude_edges=excluded)),
        (f"NeighborSampler({fanouts}).sample", lambda: sampler.sample(g, seeds),
         lambda: sampler.sample(g, seeds, excluded)),
    ]
    print(f"{n:,} nodes, {e:,} edges, {seeds.numel():,} seeds, {excluded.numel():,} excluded edges, "
          f"{topograph.get_num_threads()} threads")
    for name, plain, excluding in rows:
        a, b = median_ms([plain, excluding], args.reps)
        print(f"{name}: {a:.2f} ms, with the exclusion {b:.2f} ms ({b / a:.2f}x)")


if __name__ == "__main__":
    main()
