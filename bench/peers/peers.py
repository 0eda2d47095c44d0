"""Times the peers a user would pick on the shapes and threads of topo-bench (run by bench/peers/run.sh,
inside the virtual environment it makes; never imported by the build).

kernels: DGL's gspmm (copy_u sum, u_mul_e sum), gsddmm (v . u), edge_softmax forward and backward, and the
         attention composition (v_dot_u -> edge_softmax -> u_mul_e_sum) forward and forward + backward, on the
         three topologies of `topo-bench kernels`: 128 sentences of n = 128, 6 heads x 50 —
         the Star satellite block (closed ring, self, token, relay: sources [sat; emb; relay]), the Star relay
         block (each relay reads its n satellites and itself: sources [sat; relay]) and a window of width 9.
models:  fastNLP's StarTransformer and PyTorch's nn.TransformerEncoder (d = 300, 6 heads, 2 layers, FFN 4d,
         token embedding of 10,000 + learned positions as ours, sentence feature = relay (Star) or mean
         (dense) + max over tokens), inference and a training step (forward + backward of a linear loss, no
         optimizer update) on min(128, 16384 / n) sentences of length n, as `topo-bench models`.
Timing: 2 warm-up calls (models: 1), then the median of calls until ~0.5 s (at least 5, at most 200; past
~1.5 s at least 3), as topo-bench's harness.
Writes JSON: {"versions": ..., "threads": T, "load_average_start/end": ..., "results": [{"name", "median_ms", ...}]}.
"""
import argparse
import json
import os
import statistics
import sys
import time


def timed(fn, target_s=0.5, min_reps=5, max_reps=200, max_total_s=1.5, warmup=2):
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        times.append((t1 - t0) * 1e3)
        elapsed = t1 - start
        if len(times) >= max_reps or (len(times) >= min_reps and elapsed >= target_s) or (len(times) >= 3 and elapsed >= max_total_s):
            break
    times.sort()
    return {"median_ms": statistics.median(times), "min_ms": times[0], "max_ms": times[-1], "reps": len(times)}


def load():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def star_edges(torch, sentences, n):
    """(name, src, dst, num_src, num_dst) of the Star satellite and relay blocks (models/star_transformer/
    topology.hpp): satellites read [sat; emb; relay], each relay its n satellites and itself."""
    tokens = sentences * n
    tok = torch.arange(tokens)
    sent, pos = tok // n, tok % n
    prev, nxt = sent * n + (pos - 1) % n, sent * n + (pos + 1) % n
    # Satellite sources: sat [0, N), emb [N, 2N), relay [2N, 2N + sentences).
    src = torch.cat([prev, tok, nxt, tokens + tok, 2 * tokens + sent])
    dst = torch.cat([tok] * 5)
    order = torch.argsort(dst, stable=True)  # by destination: prev, self, next, token, relay
    sat = ("ring+relay satellites", src[order], dst[order], 2 * tokens + sentences, tokens)
    # Relay sources: sat [0, N), relay [N, N + sentences).
    rsrc = torch.cat([tok, tokens + torch.arange(sentences)])
    rdst = torch.cat([sent, torch.arange(sentences)])
    order = torch.argsort(rdst, stable=True)
    relay = ("ring+relay relay", rsrc[order], rdst[order], tokens + sentences, sentences)
    return [sat, relay]


def window_edges(torch, sentences, n, width):
    """(name, src, dst, num_src, num_dst) of a window of `width` within each sentence."""
    half = (width - 1) // 2
    tok = torch.arange(sentences * n)
    pos = tok % n
    src, dst = [], []
    for off in range(-half, half + 1):
        keep = (pos + off >= 0) & (pos + off < n)
        src.append(tok[keep] + off)
        dst.append(tok[keep])
    src, dst = torch.cat(src), torch.cat(dst)
    order = torch.argsort(dst, stable=True)
    return (f"window w={width}", src[order], dst[order], sentences * n, sentences * n)


def star_blocks(torch, dgl, sentences, n):
    """The satellite and relay blocks of topo-bench's Star topology."""
    return [dgl.create_block((src, dst), num_src_nodes=ns, num_dst_nodes=nd)
            for _, src, dst, ns, nd in star_edges(torch, sentences, n)]


def window_block(torch, dgl, sentences, n, width):
    _, src, dst, ns, nd = window_edges(torch, sentences, n, width)
    return dgl.create_block((src, dst), num_src_nodes=ns, num_dst_nodes=nd)


def bench_kernels(torch, dgl, results):
    H, D, sentences, n = 6, 50, 128, 128
    sat, relay = star_blocks(torch, dgl, sentences, n)
    graphs = [("ring+relay satellites", sat), ("ring+relay relay", relay), ("window w=9", window_block(torch, dgl, sentences, n, 9))]
    ops = dgl.ops
    g_ = torch.Generator().manual_seed(1)
    for tag, g in graphs:
        ns, nd, ne = g.num_src_nodes(), g.num_dst_nodes(), g.num_edges()
        u = torch.rand(ns, H, D, generator=g_) * 2 - 1
        q = torch.rand(nd, H, D, generator=g_) * 2 - 1
        v = torch.rand(ns, H, D, generator=g_) * 2 - 1
        w = torch.rand(ne, H, 1, generator=g_)
        logits = torch.rand(ne, H, generator=g_) * 4 - 2
        shape = {"dst": nd, "src": ns, "edges": ne, "heads": H, "head_dim": D}

        def add(name, fn):
            r = timed(fn)
            r.update(name=f"kernels/{tag} {name}", **shape)
            results.append(r)
            print(f"  {r['name']}: {r['median_ms']:.3f} ms", file=sys.stderr)

        with torch.no_grad():
            add("gspmm copy_u sum", lambda: ops.copy_u_sum(g, u))
            add("gspmm u_mul_e sum [E,H,1]", lambda: ops.u_mul_e_sum(g, u, w))
            add("gsddmm dot (q_v . k_u)", lambda: ops.v_dot_u(g, q, u))
            add("edge_softmax", lambda: ops.edge_softmax(g, logits))
            add("attention composed", lambda: ops.u_mul_e_sum(g, v, ops.edge_softmax(g, ops.v_dot_u(g, q, u) * (D ** -0.5))))
        x = logits.clone().requires_grad_(True)
        y = ops.edge_softmax(g, x)
        gy = torch.rand_like(y)
        add("edge_softmax backward", lambda: torch.autograd.grad(y, x, gy, retain_graph=True))
        qv, kv, vv = (t.clone().requires_grad_(True) for t in (q, u, v))
        r = torch.rand(nd, H, D, generator=g_)

        def fwd_bwd():
            s = ops.v_dot_u(g, qv * (D ** -0.5), kv)
            out = ops.u_mul_e_sum(g, vv, ops.edge_softmax(g, s))
            (out * r).sum().backward()
            qv.grad = kv.grad = vv.grad = None

        add("attention composed fwd+bwd", fwd_bwd)


def bench_models(torch, sizes, results):
    from fastNLP.modules.torch.encoder import StarTransformer
    d, heads, layers, vocab = 300, 6, 2, 10000

    class Embed(torch.nn.Module):
        def __init__(self, max_len):
            super().__init__()
            self.tok = torch.nn.Embedding(vocab, d)
            self.pos = torch.nn.Embedding(max_len, d)

        def forward(self, ids):
            return self.tok(ids) + self.pos(torch.arange(ids.shape[1]))[None]

    class Star(torch.nn.Module):
        def __init__(self, max_len):
            super().__init__()
            self.embed = Embed(max_len)
            self.enc = StarTransformer(hidden_size=d, num_layers=layers, num_head=heads, head_dim=d // heads,
                                       dropout=0.0, max_len=None)

        def forward(self, ids):
            mask = torch.ones(ids.shape, dtype=torch.bool)
            nodes, relay = self.enc(self.embed(ids), mask)
            return relay + nodes.max(1)[0]

    class Dense(torch.nn.Module):
        def __init__(self, max_len):
            super().__init__()
            self.embed = Embed(max_len)
            layer = torch.nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0, batch_first=True)
            self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

        def forward(self, ids):
            h = self.enc(self.embed(ids))
            return h.mean(1) + h.max(1)[0]

    for n in sizes:
        b = max(1, min(128, 16384 // n))
        ids = torch.randint(0, vocab, (b, n), generator=torch.Generator().manual_seed(n))
        r = torch.rand(b, d)
        for label, model in (("fastNLP StarTransformer", Star(n)), ("torch TransformerEncoder", Dense(n))):
            def infer():
                with torch.no_grad():
                    model(ids)

            def step():
                model.zero_grad(set_to_none=True)
                (model(ids) * r).sum().backward()

            for what, fn in (("inference", infer), ("train step", step)):
                res = timed(fn, warmup=1)  # steps of seconds: one warm-up call, at least 3 timed (max_total_s)
                res.update(name=f"models/{label} {what} n={n}", n=n, measured_sentences=b)
                results.append(res)
                print(f"  {res['name']}: {res['median_ms']:.1f} ms", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--sizes", default="128,512,2048")
    ap.add_argument("--skip-dgl", action="store_true")
    ap.add_argument("--skip-models", action="store_true")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(a.threads)
    versions = {"python": sys.version.split()[0], "torch": torch.__version__}
    out = {"threads": a.threads, "load_average_start": load(), "results": [], "versions": versions,
           "not_run": {}}
    if not a.skip_dgl:
        try:
            import dgl
            versions["dgl"] = dgl.__version__
            bench_kernels(torch, dgl, out["results"])
        except Exception as e:  # DGL missing or broken: say so in the report, time the rest
            out["not_run"]["dgl"] = f"{type(e).__name__}: {e}"
    if not a.skip_models:
        try:
            import fastNLP
            versions["fastNLP"] = getattr(fastNLP, "__version__", "unknown")
            bench_models(torch, [int(s) for s in a.sizes.split(",")], out["results"])
        except Exception as e:
            out["not_run"]["models"] = f"{type(e).__name__}: {e}"
    out["load_average_end"] = load()
    tmp = a.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=2)
    os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
