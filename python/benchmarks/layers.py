"""Forward + backward of dgl.nn layers in topograph against DGL 2.1 (when dgl imports), same weights, same inputs:

    PYTHONPATH=bench/peers/.venv/lib/python3.11/site-packages python python/benchmarks/layers.py [--nodes 20000]

A random graph (`--nodes`, `--degree` in-edges each, self loops) or, for the set readouts, a batch of graphs of
`--set-size` nodes. Each layer's two calls alternate `--reps` times after a warm-up (python/benchmarks/
exclusion.py's median_ms); medians in ms and topograph's time over DGL's. Never run by the build or the tests."""
import os

os.environ.setdefault("GOMP_SPINCOUNT", "1000")

import argparse
import sys

import topograph  # before torch: both OpenMP pools short-spinning

import torch

from exclusion import median_ms


def layers(lib, nn, d: int):
    """(name, module, call(module, graph, feats) -> tensor) for each layer compared."""
    aggs = ["mean", "max", "min", "std"]
    return [
        ("DotGatConv", nn.DotGatConv(d, d // 4, 4), lambda m, g, x, e: m(g, x)),
        ("AGNNConv", nn.AGNNConv(), lambda m, g, x, e: m(g, x)),
        ("GATv2Conv", nn.GATv2Conv(d, d // 4, 4), lambda m, g, x, e: m(g, x)),
        ("GatedGCNConv", nn.GatedGCNConv(d, d, d), lambda m, g, x, e: torch.cat([t.sum(0) for t in m(g, x, e)])),
        ("PNAConv", nn.PNAConv(d, d, aggs, ["identity", "amplification"], 2.0), lambda m, g, x, e: m(g, x)),
        ("GMMConv", nn.GMMConv(d, d, 2, 4), lambda m, g, x, e: m(g, x, e[:, :2])),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--degree", type=int, default=10)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--set-size", type=int, default=30)
    parser.add_argument("--reps", type=int, default=9)
    args = parser.parse_args()
    try:
        import dgl
    except ImportError as err:
        sys.exit(f"layers.py compares with DGL, which does not import here ({err})")
    torch.manual_seed(0)
    n, d = args.nodes, args.dim
    src = torch.randint(0, n, (n * args.degree,))
    dst = torch.arange(n).repeat_interleave(args.degree)
    graphs = {lib: lib.add_self_loop(lib.graph((src, dst), num_nodes=n)) for lib in (topograph, dgl)}
    x = torch.randn(n, d)
    e = torch.randn(graphs[topograph].num_edges(), d)
    print(f"{n:,} nodes, {graphs[topograph].num_edges():,} edges, width {d}, torch {torch.get_num_threads()} "
          f"threads, topograph {topograph.get_num_threads()}; forward + backward, medians of {args.reps} "
          f"alternated rounds, ms")
    ours, theirs = layers(topograph, topograph.nn, d), layers(dgl, dgl.nn, d)
    for (name, mt, call), (_, md, _) in zip(ours, theirs):
        mt.load_state_dict(md.state_dict())
        mt.eval(), md.eval()

        def step(module, lib):
            xs = x.clone().requires_grad_()
            call(module, graphs[lib], xs, e).sum().backward()

        t_ours, t_dgl = median_ms([lambda: step(mt, topograph), lambda: step(md, dgl)], args.reps)
        print(f"{name:14s} topograph {t_ours:8.1f}  dgl {t_dgl:8.1f}  ({t_ours / t_dgl:.2f}x)")
    sizes = [args.set_size] * max(1, n // args.set_size)
    batch = {lib: lib.batch([lib.graph(([], []), num_nodes=s) for s in sizes]) for lib in (topograph, dgl)}
    xs = torch.randn(sum(sizes), d)
    mt = topograph.nn.SetTransformerEncoder(d, 4, d // 4, 2 * d, n_layers=1).eval()
    md = dgl.nn.SetTransformerEncoder(d, 4, d // 4, 2 * d, n_layers=1).eval()
    mt.load_state_dict(md.state_dict())

    def set_step(module, lib):
        h = xs.clone().requires_grad_()
        module(batch[lib], h).sum().backward()

    t_ours, t_dgl = median_ms([lambda: set_step(mt, topograph), lambda: set_step(md, dgl)], args.reps)
    print(f"{'SetTransformer':14s} topograph {t_ours:8.1f}  dgl {t_dgl:8.1f}  ({t_ours / t_dgl:.2f}x)  "
          f"({len(sizes):,} sets of {args.set_size})")


if __name__ == "__main__":
    main()
