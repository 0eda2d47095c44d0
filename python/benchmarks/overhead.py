"""The binding's own cost per call: topograph ops on a 3-node graph (the kernels' work is negligible there), next
to torch's index_select on the same tensors as the floor any torch op pays.

    build/python-venv/bin/python python/benchmarks/overhead.py
"""
import time

import topograph  # before torch: both OpenMP pools wait briefly (topograph/__init__.py)

import torch


def per_call_us(f, n=20000):
    for _ in range(1000):
        f()
    start = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - start) / n * 1e6


def main():
    torch.set_num_threads(1)
    topograph.set_num_threads(1)
    g = topograph.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])), num_nodes=3)
    x, s, idx = torch.randn(3, 4), torch.randn(3, 2), torch.tensor([0, 1, 2])
    xg = x.clone().requires_grad_()
    rows = [
        ("torch index_select (floor)", lambda: x.index_select(0, idx)),
        ("copy_u_sum", lambda: topograph.ops.copy_u_sum(g, x)),
        ("u_dot_v", lambda: topograph.ops.u_dot_v(g, x, x)),
        ("edge_softmax", lambda: topograph.ops.edge_softmax(g, s)),
        ("copy_u_sum, input requires grad (forward)", lambda: topograph.ops.copy_u_sum(g, xg)),
        ("copy_u_sum forward + backward", lambda: topograph.ops.copy_u_sum(g, xg).sum().backward()),
        ("torch index_select forward + backward", lambda: xg.index_select(0, idx).sum().backward()),
    ]
    for name, f in rows:
        print(f"{name:45s} {per_call_us(f):7.1f} us")


if __name__ == "__main__":
    main()
