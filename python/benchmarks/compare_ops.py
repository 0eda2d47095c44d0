"""topograph.ops against dgl.ops and PyG's message-passing path, in one process, on the shapes and threads of
`topo-bench kernels` (issue #34, item 7), and the per-call cost of each on a 3-node graph.

    python python/benchmarks/compare_ops.py [--threads 2] [--budget 1.5]

in an environment with torch 2.2.1, DGL 2.1.0, topograph and, optionally, torch_geometric (python/README.md,
"Against DGL and PyG", has the install lines and the figures). Never run by the build or the tests.

Graphs (bench/peers/peers.py's, 128 sentences x 128 tokens, 6 heads x 50): the Star satellite block (closed
ring, self, token, relay; sources [sat; emb; relay]), the Star relay block (sources [sat; relay]) and a window
of width 9, built once per library: a one-relation bipartite topograph.heterograph, dgl.create_block, and
(src, dst) index tensors for PyG. Ops, forward (no_grad) and forward + backward (torch.autograd.grad of every
floating input against a fixed random output gradient): copy_u_sum, u_mul_e_sum with [E, H, 1] weights,
v_dot_u, edge_softmax over [E, H], the composed attention (v_dot_u * scale -> edge_softmax -> u_mul_e_sum), and
topograph's fused sparse_attention beside the other libraries' composition.

PyG: torch_geometric.utils.scatter / softmax over the edge index, and the gather by index_select and the
elementwise products a MessagePassing layer's message() writes. Without torch_scatter or pyg_lib (compiled
extensions, not on PyPI) PyG runs those on torch's own scatter_add_ / scatter_reduce, and so does this script's
fallback when torch_geometric is missing; the output says which ran.

Every library's values and gradients are checked against topograph's before anything is timed. Timing
interleaves the libraries call by call (A, B, C, A, B, C, ...) so that a change in the machine's load hits all
of them alike; medians. Also printed: the bytes each op must at least move (features in and out, float32;
indices left out) over topograph's and DGL's times, next to torch's own copy bandwidth in this process, to
tell what is bound by memory.
"""
import os

# Both pools short-spinning: topograph and DGL share the system's libgomp, torch has its own, and libgomp's
# default spin (ms after each region) would let whichever library ran last slow the next one down
# (python/README.md, "Threads"). Set before any of them loads; topograph leaves a chosen value alone.
os.environ.setdefault("GOMP_SPINCOUNT", "1000")
os.environ.setdefault("DGLBACKEND", "pytorch")

import argparse
import statistics
import sys
import time

import topograph  # before torch (topograph/__init__.py)

import torch

# The graphs are bench/peers/peers.py's own (one definition for the C++ peers comparison and this one).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "peers"))
from peers import star_edges, window_edges  # noqa: E402

H, D, SENTENCES, N = 6, 50, 128, 128


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def dgl_style(name, ops, build, graph, **extra):
    """A library with dgl.ops' names: the five ops, the attention composed of them, the two graph builders."""
    def attention(g, q, k, v, scale):
        return ops.u_mul_e_sum(g, v, ops.edge_softmax(g, ops.v_dot_u(g, q, k) * scale))

    return {"name": name, "build": build, "graph": graph, "copy_u_sum": ops.copy_u_sum, "u_mul_e_sum": ops.u_mul_e_sum,
            "v_dot_u": ops.v_dot_u, "edge_softmax": ops.edge_softmax, "attention": attention, **extra}


def topograph_lib():
    def build(src, dst, ns, nd):  # a bipartite relation, as a DGL block: sources and destinations numbered apart
        return topograph.heterograph({("src", "e", "dst"): (src, dst)}, num_nodes_dict={"src": ns, "dst": nd})

    return dgl_style("topograph", topograph.ops, build, lambda src, dst, n: topograph.graph((src, dst), num_nodes=n),
                     fused=lambda g, q, k, v, scale: topograph.ops.sparse_attention(g, q, k, v, scale))


def dgl_lib(dgl):
    return dgl_style("DGL", dgl.ops,
                     lambda src, dst, ns, nd: dgl.create_block((src, dst), num_src_nodes=ns, num_dst_nodes=nd),
                     lambda src, dst, n: dgl.graph((src, dst), num_nodes=n))


def pyg_lib():
    """PyG's path: gather rows by the edge index, compute the message in torch, reduce with utils.scatter /
    utils.softmax. The same in torch's own ops when torch_geometric is not installed."""
    try:
        from torch_geometric.utils import scatter, softmax
        import torch_geometric
        import torch_geometric.typing as pyg_typing
        backend = "torch_scatter" if pyg_typing.WITH_TORCH_SCATTER else "torch's scatter_add_ / scatter_reduce"
        name = f"torch_geometric {torch_geometric.__version__} (utils.scatter / softmax on {backend})"
    except ImportError:
        def scatter(src, index, dim=0, dim_size=None, reduce="sum"):
            idx = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
            out = src.new_zeros((dim_size,) + src.shape[1:])
            if reduce == "sum":
                return out.scatter_add_(0, idx, src)
            return out.scatter_reduce_(0, idx, src, reduce="amax", include_self=False)

        def softmax(src, index, num_nodes=None):
            m = scatter(src.detach(), index, dim_size=num_nodes, reduce="max")
            e = (src - m.index_select(0, index)).exp()
            return e / (scatter(e, index, dim_size=num_nodes, reduce="sum") + 1e-16).index_select(0, index)

        name = ("torch_geometric not installed: PyG's utils.scatter / softmax written here in torch (scatter_add_, "
                "scatter_reduce)")

    def build(src, dst, ns, nd):
        return {"src": src, "dst": dst, "nd": nd}

    def copy_u_sum(g, x):
        return scatter(x.index_select(0, g["src"]), g["dst"], dim=0, dim_size=g["nd"], reduce="sum")

    def u_mul_e_sum(g, x, w):
        return scatter(x.index_select(0, g["src"]) * w, g["dst"], dim=0, dim_size=g["nd"], reduce="sum")

    def v_dot_u(g, q, k):
        return (q.index_select(0, g["dst"]) * k.index_select(0, g["src"])).sum(-1, keepdim=True)

    def edge_softmax(g, s):
        return softmax(s, g["dst"], num_nodes=g["nd"])

    def attention(g, q, k, v, scale):
        return u_mul_e_sum(g, v, edge_softmax(g, v_dot_u(g, q, k) * scale))

    return {"name": "PyG", "long_name": name, "build": build, "graph": lambda src, dst, n: build(src, dst, n, n),
            "copy_u_sum": copy_u_sum, "u_mul_e_sum": u_mul_e_sum, "v_dot_u": v_dot_u, "edge_softmax": edge_softmax,
            "attention": attention}


def interleaved(fns, budget_s, min_reps=5, max_reps=50):
    """Median ms of each fn, calling them in turn (one call of each per round) after one warm-up round (which
    also sizes the rounds to the budget); callers have already called each once (DGL builds its CSC then)."""
    round_s = 0.0
    for f in fns:
        t0 = time.perf_counter()
        f()
        round_s += time.perf_counter() - t0
    reps = max(min_reps, min(max_reps, int(budget_s / max(round_s, 1e-9))))
    times = [[] for _ in fns]
    for _ in range(reps):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            f()
            times[i].append((time.perf_counter() - t0) * 1e3)
    return [statistics.median(t) for t in times], reps


def check(name, want, got):
    """want / got: tuples of tensors (output, then gradients); float32 kernels summing in different orders."""
    for i, (a, b) in enumerate(zip(want, got)):
        b = b.reshape(a.shape)
        if not torch.allclose(a, b, rtol=1e-4, atol=1e-5):
            err = (a - b).abs().max().item()
            raise SystemExit(f"compare_ops: {name}: result {i} differs from topograph's by up to {err:g}")


def copy_bandwidth_gbs():
    """torch's copy of 256 MB (read + write) at this process's threads: the memory roofline in practice."""
    a = torch.empty(64 << 20).uniform_()
    b = torch.empty_like(a)
    t, _ = interleaved([lambda: b.copy_(a)], 1.0)
    return 2 * a.numel() * 4 / (t[0] * 1e-3) / 1e9


def run_graphs(libs, budget_s, rows):
    gen = torch.Generator().manual_seed(1)
    graphs = star_edges(torch, SENTENCES, N) + [window_edges(torch, SENTENCES, N, 9)]
    for tag, src, dst, ns, nd in graphs:
        gs = [lib["build"](src, dst, ns, nd) for lib in libs]
        ne = src.numel()
        q = torch.rand(nd, H, D, generator=gen) * 2 - 1
        k = torch.rand(ns, H, D, generator=gen) * 2 - 1
        v = torch.rand(ns, H, D, generator=gen) * 2 - 1
        w = torch.rand(ne, H, 1, generator=gen)
        s = torch.rand(ne, H, generator=gen) * 4 - 2
        scale = D ** -0.5
        feat = H * D * 4  # bytes of one row of features
        # (op, inputs, call(lib, g, *inputs), compulsory bytes of the forward: inputs read + output written)
        cases = [
            ("copy_u_sum", (k,), lambda L, g, x: L["copy_u_sum"](g, x), (ns + nd) * feat),
            ("u_mul_e_sum [E,H,1]", (k, w), lambda L, g, x, e: L["u_mul_e_sum"](g, x, e),
             (ns + nd) * feat + ne * H * 4),
            ("v_dot_u", (q, k), lambda L, g, a, b: L["v_dot_u"](g, a, b), (ns + nd) * feat + ne * H * 4),
            ("edge_softmax [E,H]", (s,), lambda L, g, x: L["edge_softmax"](g, x), 2 * ne * H * 4),
            ("attention composed", (q, k, v), lambda L, g, a, b, c: L["attention"](g, a, b, c, scale),
             (2 * ns + 2 * nd) * feat),
        ]
        # topograph's fused sparse_attention, against every other library's composition (the same values)
        cases.append(("attention: topograph fused", (q, k, v),
                      lambda L, g, a, b, c: L.get("fused", L["attention"])(g, a, b, c, scale), cases[-1][3]))
        for op, inputs, call, bytes_fwd in cases:
            for mode in ("forward", "fwd+bwd"):
                fns, results = [], []
                grad_out = None
                for L, g in zip(libs, gs):
                    if mode == "forward":
                        def f(L=L, g=g, call=call, inputs=inputs):
                            with torch.no_grad():
                                return (call(L, g, *inputs),)
                    else:
                        xs = [x.clone().requires_grad_() for x in inputs]
                        if grad_out is None:
                            with torch.no_grad():
                                shape = call(L, g, *inputs).shape
                            grad_out = torch.rand(shape, generator=gen)

                        def f(L=L, g=g, call=call, xs=xs):
                            out = call(L, g, *xs)
                            return (out.detach(),) + torch.autograd.grad(out, xs, grad_out.reshape(out.shape))
                    fns.append(f)
                    results.append(f())
                for L, r in zip(libs[1:], results[1:]):
                    check(f"{tag} {op} {mode} ({L['name']})", results[0], r)
                ms, reps = interleaved(fns, budget_s)
                bytes_moved = bytes_fwd * (1 if mode == "forward" else 2)  # + the gradients of all of it
                row = {"graph": tag, "op": op, "mode": mode, "reps": reps, "bytes": bytes_moved,
                       **{L["name"]: t for L, t in zip(libs, ms)}}
                rows.append(row)
                print_row(row, libs)


def print_header(libs):
    names = [L["name"] for L in libs]
    cols = "".join(f"{n + ' ms':>14}" for n in names) + "".join(f"{n + '/topo':>11}" for n in names[1:])
    print(f"{'graph':23}{'op':28}{'mode':9}{cols}{'topo GB/s':>11}{'DGL GB/s':>10}{'reps':>6}")


def print_row(r, libs):
    names = [L["name"] for L in libs]
    cols = "".join(f"{r[n]:14.3f}" for n in names) + "".join(f"{r[n] / r['topograph']:11.2f}" for n in names[1:])
    gbs = "".join(f"{r['bytes'] / (r[n] * 1e-3) / 1e9:10.1f}" for n in ("topograph", "DGL"))
    print(f"{r['graph']:23}{r['op']:28}{r['mode']:9}{cols} {gbs}{r['reps']:6d}", flush=True)


def per_call_us(f, n=10000):
    """Median over 20 batches of n / 20 calls, µs per call, after 500 warm-up calls."""
    for _ in range(500):
        f()
    per = []
    for _ in range(20):
        t0 = time.perf_counter()
        for _ in range(n // 20):
            f()
        per.append((time.perf_counter() - t0) / (n // 20) * 1e6)
    return statistics.median(per)


def overhead(libs):
    src, dst = torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])
    x, idx = torch.randn(3, 4), torch.tensor([0, 1, 2])
    xg = x.clone().requires_grad_()
    print("\nper call on a 3-node graph (x [3, 4]; topograph.graph, dgl.graph, an edge index), "
          "median of 20 batches of 500 calls:")
    floor = per_call_us(lambda: x.index_select(0, idx))
    print(f"  {'torch index_select (the floor of a torch op)':58} {floor:7.1f} us")
    for L in libs:
        g = L["graph"](src, dst, 3)
        with torch.no_grad():
            fwd = per_call_us(lambda: L["copy_u_sum"](g, x))
        bwd = per_call_us(lambda: L["copy_u_sum"](g, xg).sum().backward())
        print(f"  {L['name'] + ' copy_u_sum, no grad':58} {fwd:7.1f} us")
        print(f"  {L['name'] + ' copy_u_sum forward + .sum().backward()':58} {bwd:7.1f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--budget", type=float, default=1.5, help="seconds of timed calls per (op, mode), all libraries")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    topograph.set_num_threads(a.threads)  # the system's libgomp, which DGL's kernels use too
    import dgl
    libs = [topograph_lib(), dgl_lib(dgl), pyg_lib()]
    print(f"torch {torch.__version__}, DGL {dgl.__version__}, topograph {topograph.__version__}; "
          f"PyG: {libs[2]['long_name']}")
    print(f"threads: torch {torch.get_num_threads()}, topograph (and DGL) {topograph.get_num_threads()}; "
          f"GOMP_SPINCOUNT={os.environ.get('GOMP_SPINCOUNT')}")
    # glibc serves blocks over its mmap threshold (at most 32 MB) by fresh mmaps: each call then pays a page fault
    # per 4 KiB. torch's CPU allocator (so DGL and PyG) is plain malloc; Topograph's outputs come from its own
    # block cache (kernels/storage.cpp). MALLOC_MMAP_MAX_=0 makes glibc reuse its heap instead, for everyone.
    print(f"glibc malloc: MALLOC_MMAP_MAX_={os.environ.get('MALLOC_MMAP_MAX_', 'unset')}, "
          f"MALLOC_TRIM_THRESHOLD_={os.environ.get('MALLOC_TRIM_THRESHOLD_', 'unset')}")
    print(f"load average before: {loadavg()}")
    start = time.perf_counter()
    print(f"torch copy bandwidth (read + write, 256 MB, {a.threads} threads): {copy_bandwidth_gbs():.1f} GB/s")
    print("GB/s: the bytes an op must move (float32 features in and out; fwd+bwd: twice that, the gradients; "
          "indices not counted) / its time\n")
    print_header(libs)
    rows = []
    run_graphs(libs, a.budget, rows)
    overhead(libs)
    print(f"\nload average after: {loadavg()}; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
