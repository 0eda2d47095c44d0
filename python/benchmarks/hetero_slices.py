"""Relation slices under hetero message passing: an RGCN-style two-layer HeteroGraphConv (a GraphConv per
relation), forward + backward + Adam step, on a 10k-node heterograph of 3 relations (60k edges each), 50
iterations (best of 3), and the cost of one g[etype] (HeteroGraphConv takes one per relation per layer).

    build/python-venv/bin/python python/benchmarks/hetero_slices.py [threads]
"""
import sys
import time

import topograph  # before torch: both OpenMP pools wait briefly (topograph/__init__.py)

import torch
import topograph.nn as nn

torch.manual_seed(0)
torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
COUNTS = {"user": 5000, "item": 3000, "tag": 2000}
E = 60000
g = topograph.heterograph({
    ("user", "follows", "user"): (torch.randint(0, 5000, (E,)), torch.randint(0, 5000, (E,))),
    ("user", "clicks", "item"): (torch.randint(0, 5000, (E,)), torch.randint(0, 3000, (E,))),
    ("item", "tagged", "tag"): (torch.randint(0, 3000, (E,)), torch.randint(0, 2000, (E,)))}, COUNTS)
x = {t: torch.randn(n, 64) for t, n in COUNTS.items()}


def layer(out):
    return nn.HeteroGraphConv({e: nn.GraphConv(64, out, norm="right", allow_zero_in_degree=True)
                               for e in g.etypes}, aggregate="sum")


first, second = layer(64), layer(16)
opt = torch.optim.Adam([*first.parameters(), *second.parameters()], 1e-3)


def step():
    h = {t: torch.relu(v) for t, v in first(g, x).items()}
    loss = sum(v.pow(2).mean() for v in second(g, {**x, **h}).values())
    opt.zero_grad()
    loss.backward()
    opt.step()


for _ in range(5):
    step()
runs = []
for _ in range(3):
    start = time.perf_counter()
    for _ in range(50):
        step()
    runs.append(time.perf_counter() - start)
start = time.perf_counter()
for _ in range(1000):
    for c in g.canonical_etypes:
        g[c]
slice_us = (time.perf_counter() - start) / (1000 * len(g.canonical_etypes)) * 1e6
print(f"50 iterations: best {min(runs):.3f} s ({min(runs) / 50 * 1e3:.2f} ms each); g[etype]: {slice_us:.1f} us")
