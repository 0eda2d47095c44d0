"""topograph.sparse against dgl.sparse (when dgl imports) and torch.sparse on the calls a sparse-API model makes:

    python python/benchmarks/sparse_matrix.py [--nodes 100000] [--edges 1000000] [--dim 64] [--heads 4]

Uniform random entries. Rows, each forward + backward (the values and the dense operand require grad):
- spmm:     A @ X, X [nodes, dim] (a GCN layer's product); torch.sparse.mm on the coalesced COO beside it
            (X's gradient only: torch's for the sparse operand would be dense);
- SparseMHA: bsddmm(A, q, k^T) -> softmax -> bspmm(., v), heads x (dim / heads) (the graph transformer tutorial);
- spspmm:   D^-1/2 (A + I) D^-1/2 (the sparse GCN's normalisation; forward only).
Calls alternate `--reps` times after a warm-up (each library's structures built before timing); medians in ms,
and the bytes spmm must move (A's entries read once, X's rows gathered once per entry, the output written)
over its time. Never run by the build or the tests."""
import os

os.environ.setdefault("GOMP_SPINCOUNT", "1000")

import argparse
import sys

import topograph  # before torch: both OpenMP pools short-spinning

import torch

import topograph.sparse as tsp
from exclusion import median_ms  # the alternated-medians timer (python/benchmarks/exclusion.py)


def workloads(sp, indices, n, dim, heads, gen_seed=0):
    """The three rows' calls for one library's sparse module `sp`."""
    gen = torch.Generator().manual_seed(gen_seed)
    A = sp.spmatrix(indices, torch.rand(indices.shape[1], generator=gen).requires_grad_(), (n, n))
    X = torch.randn(n, dim, generator=gen).requires_grad_()
    q, k, v = (torch.randn(n, dim // heads, heads, generator=gen).requires_grad_() for _ in range(3))
    pattern = sp.spmatrix(indices, shape=(n, n))

    def spmm():
        (A @ X).sum().backward()

    def mha():
        attn = sp.bsddmm(pattern, q, k.transpose(1, 0)).softmax()
        sp.bspmm(attn, v).sum().backward()

    def normalise():
        with torch.no_grad():
            a_hat = pattern + sp.identity(pattern.shape)
            d = sp.diag(a_hat.sum(0)) ** -0.5
            d @ a_hat @ d

    return {"spmm": spmm, "SparseMHA": mha, "spspmm": normalise}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    torch.manual_seed(0)
    n, e = args.nodes, args.edges
    indices = torch.stack([torch.randint(0, n, (e,)), torch.randint(0, n, (e,))])
    libs = {"topograph.sparse": workloads(tsp, indices, n, args.dim, args.heads)}
    try:
        import dgl.sparse as dsp
        libs["dgl.sparse"] = workloads(dsp, indices, n, args.dim, args.heads)
    except ImportError as err:
        print(f"(dgl.sparse not importable: {err}; topograph.sparse alone)", file=sys.stderr)
    # torch's gradient for a sparse operand of torch.sparse.mm is dense (n x n): only X's here.
    coo = torch.sparse_coo_tensor(indices, torch.rand(e), (n, n)).coalesce()
    X = torch.randn(n, args.dim, requires_grad=True)

    def torch_spmm():
        torch.sparse.mm(coo, X).sum().backward()

    print(f"{n:,} nodes, {e:,} entries, dim {args.dim}, {args.heads} heads, torch {torch.get_num_threads()} threads, "
          f"topograph {topograph.get_num_threads()} threads; medians of {args.reps} alternated rounds, ms")
    for row in ("spmm", "SparseMHA", "spspmm"):
        calls = [lib[row] for lib in libs.values()] + ([torch_spmm] if row == "spmm" else [])
        names = list(libs) + (["torch.sparse.mm"] if row == "spmm" else [])
        times = median_ms(calls, args.reps)
        cells = ", ".join(f"{name} {t:.1f}" for name, t in zip(names, times))
        print(f"{row:10s} {cells}" + (f"  (topograph / dgl: {times[0] / times[1]:.2f}x)" if len(libs) > 1 else ""))
    # spmm's forward alone, with its bytes: entries (col, row, value: 20 B), X's row per entry, out written.
    A = tsp.spmatrix(indices, torch.rand(e), (n, n))
    with torch.no_grad():
        (ms,) = median_ms([lambda: A @ X], args.reps)
    moved = e * (20 + 4 * args.dim) + n * 4 * args.dim
    print(f"spmm forward alone: {ms:.2f} ms, {moved / ms / 1e6:.1f} GB/s of its {moved / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
