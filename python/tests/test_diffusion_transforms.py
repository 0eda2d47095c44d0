"""The diffusion transforms PPR, HeatKernel, GDC and SIGNDiffusion (_diffusion.py), ToLevi and AddMetaPaths
(_levi_metapath.py), svd_pe and SVDPE (_svd_pe.py): against references written with Python loops and dense float64
algebra on the conftest graphs (multi-edges, self loops, isolated nodes), by their laws (singular pairs, the
threshold's edge count), on their error paths, and against DGL 2.1 where dgl imports (the DGL tests skip
otherwise). Where DGL 2.1 differs on purpose (parallel edges, 'rw' without in-edges, ToLevi's isolated nodes,
the random signs' generator) the DGL test shows the difference."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import math

import pytest
import torch

from conftest import GRAPHS, build, make_edges, reviews_graph, typed_graph
from test_positional import dense  # the loop-built dense adjacency the references start from

T = topograph.transforms


# --- references
def edges_of(g, etype=None):
    u, v = g.edges(etype=etype)
    return list(zip(u.tolist(), v.tolist()))


def ref_ppr(a, alpha):
    return alpha * torch.linalg.inv(torch.eye(a.shape[0], dtype=torch.float64) - (1 - alpha) * a.T)


def ref_heat(a, t, terms=90):
    """exp(t (A^T - I)) by its Taylor series (the graphs are small, so the terms fall fast enough)."""
    m = t * (a.T - torch.eye(a.shape[0], dtype=torch.float64))
    term, total = torch.eye(a.shape[0], dtype=torch.float64), torch.eye(a.shape[0], dtype=torch.float64)
    for i in range(1, terms):
        term = term @ m / i
        total = total + term
    return total


def ref_gdc(a, coefs):
    power, total = torch.eye(a.shape[0], dtype=torch.float64), torch.zeros_like(a)
    for coef in coefs:
        total = total + coef * power
        power = power @ a.T
    return total


def ref_kept(s, eps=None, avg_degree=5):
    """The edges u -> v with s[v][u] at the threshold or above (by destination, then source) and their weights:
    eps, else the (avg_degree * N)-th largest entry (everything when avg_degree > N)."""
    n = s.shape[0]
    values = sorted(s.flatten().tolist(), reverse=True)
    threshold = eps if eps is not None else (-math.inf if avg_degree > n else values[avg_degree * n - 1])
    kept = [(u, v) for v in range(n) for u in range(n) if float(s[v, u]) >= threshold]
    return kept, torch.tensor([float(s[v, u]) for u, v in kept])


def full_matrix(g, name="w"):
    """The diffused matrix S [N, N] (indexed [destination, source]) back from a result that kept every entry."""
    n = g.num_nodes()
    assert g.num_edges() == n * n
    s = torch.zeros(n, n, dtype=g.edata[name].dtype)
    u, v = g.edges()
    s[v.long(), u.long()] = g.edata[name]
    return s


DIFFUSIONS = [("PPR", (0.15,), ref_ppr), ("PPR", (0.4,), ref_ppr), ("HeatKernel", (2.0,), ref_heat),
              ("HeatKernel", (0.5,), ref_heat), ("GDC", ([0.3, 0.2, 0.1],), ref_gdc), ("GDC", ([1.0],), ref_gdc)]


# --- PPR, HeatKernel, GDC
@pytest.mark.parametrize("name,args,ref", DIFFUSIONS, ids=[f"{d[0]}{d[1]}" for d in DIFFUSIONS])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_diffusion_matrix_and_threshold(graph_name, idtype, name, args, ref, weighted):
    g, src, dst, n = build(graph_name, idtype)
    g.ndata["h"] = torch.arange(n * 2.0).view(n, 2)
    g.edata["other"] = torch.arange(src.numel())
    w = torch.rand(src.numel(), dtype=torch.float64) * 0.3 + 0.05
    if weighted:
        g.edata["w"] = w
    want = ref(dense(src, dst, n, w if weighted else None), *args)
    every = getattr(T, name)(*args, eps=-math.inf)(g)
    s = full_matrix(every)
    assert s.dtype == torch.float32
    torch.testing.assert_close(s.double(), want, atol=2e-5, rtol=1e-4)
    assert edges_of(every) == [(u, v) for v in range(n) for u in range(n)]
    distinct = s.flatten().unique()  # ascending; eps between two of them, away from float32 rounding
    middle = float(distinct[len(distinct) // 2 - 1] + distinct[len(distinct) // 2]) / 2 if len(distinct) > 1 else 0.0
    for kwargs in ({}, {"avg_degree": 1}, {"avg_degree": 2}, {"eps": middle}):
        out = getattr(T, name)(*args, **kwargs)(g)
        # the selection, from the float32 S the transform thresholds
        kept, weights = ref_kept(s, kwargs.get("eps"), kwargs.get("avg_degree", 5))
        assert edges_of(out) == kept and torch.equal(out.edata["w"], weights)
        assert out.idtype == idtype and out.num_nodes() == n and list(out.edata) == ["w"]
        assert torch.equal(out.ndata["h"], g.ndata["h"])
    if weighted:  # the weights given as [E, 1] or in another name
        g.edata["w"] = w[:, None]
        torch.testing.assert_close(full_matrix(getattr(T, name)(*args, eps=-math.inf)(g)), s)
        g.edata["weight"] = w.float()
        again = getattr(T, name)(*args, eweight_name="weight", eps=-math.inf)(g)
        torch.testing.assert_close(full_matrix(again, "weight"), s)


def test_heat_kernel_symmetric_and_directed_paths():
    src, dst, n = make_edges("multi_loop_isolated")
    for u, v in ((src, dst), (torch.cat([src, dst]), torch.cat([dst, src]))):  # matrix_exp, then eigh
        g = topograph.graph((u, v), num_nodes=n)
        got = full_matrix(T.HeatKernel(3.0, eps=-math.inf)(g)).double()
        torch.testing.assert_close(got, ref_heat(dense(u, v, n), 3.0), atol=2e-5, rtol=1e-4)


def test_diffusion_on_a_graph_without_nodes_and_a_batch():
    empty = topograph.graph(([], []), num_nodes=0)
    for transform in (T.PPR(), T.HeatKernel(), T.GDC([0.5, 0.5])):
        out = transform(empty)
        assert out.num_nodes() == 0 and out.num_edges() == 0 and out.edata["w"].shape == (0,)
    batch = topograph.batch([topograph.graph(([0], [1])), topograph.graph(([1], [0]))])
    out = T.GDC([0.0, 1.0], eps=0.5)(batch)  # A itself
    assert edges_of(out) == [(0, 1), (3, 2)] and out.batch_size == 1


def test_diffusion_errors_name_the_argument():
    g = topograph.graph(([0, 1], [1, 2]))
    for bad in (-0.1, 1.5, "0.5", None):
        with pytest.raises(topograph.DGLError, match="alpha"):
            T.PPR(alpha=bad)
    for bad in (-1.0, "2", True):
        with pytest.raises(topograph.DGLError, match="t must be"):
            T.HeatKernel(t=bad)
    for bad in ([], None, "abc", [0.1, "x"]):
        with pytest.raises(topograph.DGLError, match="coefs"):
            T.GDC(bad)
    for cls, args in (("PPR", ()), ("HeatKernel", ()), ("GDC", ([1.0],))):
        for bad in (0, -1, 2.5, True):
            with pytest.raises(topograph.DGLError, match="avg_degree"):
                getattr(T, cls)(*args, avg_degree=bad)
        with pytest.raises(topograph.DGLError, match="eps"):
            getattr(T, cls)(*args, eps="small")
        with pytest.raises(topograph.DGLError, match="eweight_name"):
            getattr(T, cls)(*args, eweight_name=None)
        with pytest.raises(topograph.DGLError, match="one node type"):
            getattr(T, cls)(*args)(typed_graph())
        with pytest.raises(topograph.DGLError, match="one node type"):
            getattr(T, cls)(*args)(topograph.to_block(g, torch.arange(3)))
        g.edata["w"] = torch.ones(2, 2)
        with pytest.raises(topograph.DGLError, match=r"\[E\] or \[E, 1\]"):
            getattr(T, cls)(*args)(g)
        del g.edata["w"]
    loops = topograph.graph(([0, 1], [0, 1]))  # A = I: I - (1 - 0) A = 0
    with pytest.raises(topograph.DGLError, match="singular"):
        T.PPR(alpha=0.0)(loops)


# --- SIGNDiffusion
def ref_sign(src, dst, n, x, k, op, w=None, alpha=0.2):
    """T^i X for i = 1..k by loops over the edges; T per op with w (1 each when None)."""
    w = [1.0] * src.numel() if w is None else [float(e) for e in w]
    edges = list(zip(src.tolist(), dst.tolist(), w))
    in_weight = [sum(e for _, v, e in edges if v == node) for node in range(n)]
    has_in = [any(v == node for _, v, _ in edges) for node in range(n)]
    norm = [(1 / math.sqrt(d) if d else 0.0) for d in in_weight]  # GCNNorm: d(u) is u's in-weight too
    x = x.double()
    h, out = x, []
    for _ in range(k):
        nxt = torch.zeros_like(x)
        for u, v, e in edges:
            nxt[v] += (norm[u] * e * norm[v] if op in ("gcn", "ppr") else e) * h[u]
        if op == "rw":
            nxt = torch.stack([nxt[v] / in_weight[v] if has_in[v] else torch.zeros_like(nxt[v]) for v in range(n)])
        if op == "ppr":
            nxt = (1 - alpha) * nxt + alpha * x
        h = nxt
        out.append(h)
    return out


@pytest.mark.parametrize("op", ["raw", "rw", "gcn", "ppr"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_sign_diffusion_by_loops(graph_name, op, weighted):
    g, src, dst, n = build(graph_name, torch.int64)
    x, w = torch.randn(n, 3), torch.rand(src.numel()) + 0.1  # float32: the kernels' type
    g.ndata["x"], g.edata["w"], g.edata["c"] = x, w, torch.arange(src.numel())
    transform = T.SIGNDiffusion(3, in_feat_name="x", out_feat_name="y", eweight_name="w" if weighted else None,
                                diffuse_op=op, alpha=0.3)
    assert transform(g) is g
    want = ref_sign(src, dst, n, x, 3, op, w if weighted else None, alpha=0.3)
    assert sorted(g.ndata) == ["x", "y_1", "y_2", "y_3"] and sorted(g.edata) == ["c", "w"]
    assert torch.equal(g.edata["w"], w) and torch.equal(g.ndata["x"], x)
    for i in range(3):
        torch.testing.assert_close(g.ndata[f"y_{i + 1}"], want[i].float(), atol=1e-5, rtol=1e-5)


def test_sign_diffusion_options():
    src, dst, n = make_edges("multi_loop_isolated")
    g = topograph.graph((src, dst), num_nodes=n)
    g.ndata["feat"] = torch.randn(n)  # 1-D: one value per node
    g.edata["w"] = torch.rand(src.numel()) + 0.1
    T.SIGNDiffusion(2, eweight_name="nope")(g)  # a weight name the graph lacks: unweighted, as DGL's
    torch.testing.assert_close(g.ndata["out_feat_2"], ref_sign(src, dst, n, g.ndata["feat"], 2, "raw")[1].float())
    T.SIGNDiffusion(2, eweight_name="w", diffuse_op="rw")(g)
    want = ref_sign(src, dst, n, g.ndata["feat"], 2, "rw", g.edata["w"])
    torch.testing.assert_close(g.ndata["out_feat_2"], want[1].float())
    assert g.ndata["out_feat_1"].shape == (n,) and bool(torch.isfinite(g.ndata["out_feat_1"]).all())
    before = sorted(g.ndata)
    T.SIGNDiffusion(0)(g)  # no steps, no features
    assert sorted(g.ndata) == before
    g.edata["w"] = g.edata["w"][:, None]  # [E, 1] weights with [N, D] features
    g.ndata["feat"] = torch.randn(n, 2)
    T.SIGNDiffusion(1, eweight_name="w", diffuse_op="rw")(g)
    torch.testing.assert_close(g.ndata["out_feat_1"],
                               ref_sign(src, dst, n, g.ndata["feat"], 1, "rw", g.edata["w"][:, 0])[0].float())


def test_sign_diffusion_errors_name_the_argument():
    g = topograph.graph(([0, 1], [1, 2]))
    with pytest.raises(topograph.DGLError, match="diffuse_op"):
        T.SIGNDiffusion(2, diffuse_op="heat")
    for bad in (-1, 1.5, None):
        with pytest.raises(topograph.DGLError, match="k must be"):
            T.SIGNDiffusion(bad)
    with pytest.raises(topograph.DGLError, match="alpha"):
        T.SIGNDiffusion(2, diffuse_op="ppr", alpha=2.0)
    with pytest.raises(topograph.DGLError, match="in_feat_name 'feat'"):
        T.SIGNDiffusion(2)(g)
    with pytest.raises(topograph.DGLError, match="one node type"):
        T.SIGNDiffusion(2)(typed_graph())


# --- svd_pe, SVDPE
@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("k", [1, 2, 4])
def test_svd_pe_holds_singular_pairs(name, k):
    g, src, dst, n = build(name, torch.int32)
    a = dense(src, dst, n)
    pe = topograph.svd_pe(g, k, padding=True, random_flip=False)
    m = min(n, k)
    assert pe.shape == (n, 2 * k) and pe.dtype == torch.float32
    assert bool((pe[:, 2 * m:] == 0).all())
    left, right = pe[:, :m].double(), pe[:, m:2 * m].double()
    singular = torch.linalg.eigvalsh(a.T @ a).flip(0).clamp(min=0).sqrt()[:m]  # descending
    # column i: sqrt(s_i) u_i and sqrt(s_i) v_i, with A v_i = s_i u_i and A^T u_i = s_i v_i
    torch.testing.assert_close(left.pow(2).sum(0), singular, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(right.pow(2).sum(0), singular, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(a @ right, left * singular, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(a.T @ left, right * singular, atol=1e-5, rtol=1e-5)


def test_svd_pe_random_flip_draws_one_torch_sign_per_node():
    g, _, _, n = build("random", torch.int64)
    plain = topograph.svd_pe(g, 3, random_flip=False)
    torch.manual_seed(11)
    flipped = topograph.svd_pe(g, 3)
    torch.manual_seed(11)
    sign = (torch.rand(n) > 0.5).float() * 2 - 1
    assert torch.equal(flipped, plain * sign[:, None]) and bool((sign < 0).any()) and bool((sign > 0).any())
    torch.manual_seed(11)
    t = topograph.SVDPE(3, feat_name="pe")
    assert t(g) is g and torch.equal(g.ndata["pe"], flipped)
    assert torch.equal(topograph.SVDPE(3, random_flip=False)(g).ndata["svd_pe"], plain)


def test_svd_pe_padding_and_errors():
    g = topograph.graph(([0, 1, 2], [1, 2, 0]))  # a cycle: singular values 1, 1, 1
    assert topograph.svd_pe(g, 3, random_flip=False).shape == (3, 6)
    with pytest.raises(ValueError, match="k=4"):
        topograph.svd_pe(g, 4)
    with pytest.raises(topograph.DGLError, match="k=4"):
        topograph.SVDPE(4)(g)
    pe = topograph.svd_pe(g, 5, padding=True)
    assert pe.shape == (3, 10) and bool((pe[:, 6:] == 0).all())
    assert topograph.svd_pe(topograph.graph(([], []), num_nodes=0), 2, padding=True).shape == (0, 4)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(topograph.DGLError, match="k must be"):
            topograph.svd_pe(g, bad)
        with pytest.raises(topograph.DGLError, match="k must be"):
            topograph.SVDPE(bad)
    with pytest.raises(topograph.DGLError, match="feat_name"):
        topograph.SVDPE(2, feat_name=None)
    with pytest.raises(topograph.DGLError, match="one node type"):
        topograph.svd_pe(typed_graph(), 1)


# --- ToLevi
def test_to_levi_by_loops(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    e = src.numel()
    g.ndata["h"], g.edata["w"] = torch.randn(n, 2), torch.randn(e, 3)
    levi = topograph.ToLevi()(g)
    assert levi.ntypes == ["edge", "node"] and levi.idtype == idtype
    assert levi.canonical_etypes == [("edge", "e2n", "node"), ("node", "n2e", "edge")]
    assert levi.num_nodes("node") == n and levi.num_nodes("edge") == e
    assert edges_of(levi, "n2e") == [(int(src[i]), i) for i in range(e)]
    assert edges_of(levi, "e2n") == [(i, int(dst[i])) for i in range(e)]
    assert torch.equal(levi.nodes["node"].data["h"], g.ndata["h"])
    assert torch.equal(levi.nodes["edge"].data["w"], g.edata["w"])
    assert not levi.edges["n2e"].data and not levi.edges["e2n"].data


def test_to_levi_refuses_other_graphs():
    with pytest.raises(topograph.DGLError, match="one node type"):
        topograph.ToLevi()(typed_graph())
    with pytest.raises(TypeError):
        topograph.ToLevi()("graph")


# --- AddMetaPaths
def reachable(g, path):
    """Pairs (u, w) joined along the path (canonical relations), by sets of walks, sorted."""
    ends = {(u, u) for u in range(g.num_nodes(path[0][0]))}
    for c in path:
        step = edges_of(g, c)
        ends = {(start, y) for start, x in ends for (a, y) in step if a == x}
    return sorted(ends)


@pytest.mark.parametrize("keep", [True, False])
def test_add_meta_paths_by_loops(keep):
    g = reviews_graph()
    paths = {"co_review": [("user", "reviews", "item"), ("item", "reviewed_by", "user")],
             "fof_item": ["follows", "follows", "reviews"]}  # edge type names work too
    out = topograph.AddMetaPaths(paths, keep_orig_edges=keep)(g)
    new = [("user", "co_review", "user"), ("user", "fof_item", "item")]
    assert sorted(out.canonical_etypes) == sorted(new + (g.canonical_etypes if keep else []))
    assert edges_of(out, new[0]) == reachable(g, paths["co_review"])
    assert edges_of(out, new[1]) == reachable(g, [g.to_canonical_etype(e) for e in paths["fof_item"]])
    for t in g.ntypes:
        assert out.num_nodes(t) == g.num_nodes(t) and torch.equal(out.nodes[t].data["h"], g.nodes[t].data["h"])
    for c in g.canonical_etypes if keep else []:
        assert edges_of(out, c) == edges_of(g, c)
        assert all(torch.equal(out.edges[c].data[k], v) for k, v in g.edges[c].data.items())
    assert not out.edges[new[0]].data


def test_add_meta_paths_errors():
    g = reviews_graph()
    for bad in ([("user", "reviews", "item")], {1: ["reviews"]}):
        with pytest.raises(topograph.DGLError, match="dict"):
            topograph.AddMetaPaths(bad)
    for bad in ([], "reviews"):
        with pytest.raises(topograph.DGLError, match="non-empty list"):
            topograph.AddMetaPaths({"m": bad})
    with pytest.raises(topograph.DGLError, match="ends at"):
        topograph.AddMetaPaths({"m": ["reviews", "reviews"]})(g)
    with pytest.raises(topograph.DGLError, match="block"):
        topograph.AddMetaPaths({"m": ["follows"]})(topograph.to_block(topograph.graph(([0], [1])), torch.tensor([1])))


def test_exported_like_dgl():
    for name in ("PPR", "HeatKernel", "GDC", "SIGNDiffusion", "ToLevi", "AddMetaPaths", "SVDPE", "svd_pe"):
        assert getattr(topograph, name) is getattr(T, name) and name in topograph.__all__ and name in T.__all__
    assert all(isinstance(t, T.BaseTransform) for t in (T.PPR(), T.ToLevi(), T.SVDPE(2), T.SIGNDiffusion(2)))


# --- against DGL 2.1
def both(src, dst, n):
    dgl = pytest.importorskip("dgl")
    return topograph.graph((src, dst), num_nodes=n), dgl.graph((src, dst), num_nodes=n)


def simple_edges(name):
    """A conftest graph without its parallel edges (the first of each kept)."""
    src, dst, n = make_edges(name)
    key = (src * n + dst).tolist()
    first = [i for i, k in enumerate(key) if k not in key[:i]]
    return src[first], dst[first], n


@pytest.mark.parametrize("name,args", [(d[0], d[1]) for d in DIFFUSIONS], ids=[f"{d[0]}{d[1]}" for d in DIFFUSIONS])
@pytest.mark.parametrize("graph", ["multi_loop_isolated", "random", "bidirected"])
def test_diffusion_like_dgl(name, args, graph):
    """Bit for bit where both run the same torch ops (PPR, GDC, HeatKernel's eigh on a symmetric matrix); a
    directed HeatKernel is torch's matrix_exp here and SciPy's expm in DGL, so the two may keep different entries
    only at the threshold (within the two's rounding of it)."""
    dgl = pytest.importorskip("dgl")
    src, dst, n = simple_edges("multi_loop_isolated" if graph == "bidirected" else graph)
    if graph == "bidirected":  # each pair u != v once each way: DGL's eigh path, the same as ours
        pairs = sorted({(u, v) for u, v in zip(src.tolist(), dst.tolist()) if u != v} |
                       {(v, u) for u, v in zip(src.tolist(), dst.tolist()) if u != v})
        src, dst = torch.tensor([p[0] for p in pairs]), torch.tensor([p[1] for p in pairs])
    graphs = both(src, dst, n)
    table = torch.rand(n, n) * 0.3 + 0.05
    w = (table + table.T)[src, dst]  # equal weights both ways (DGL's eigh reads only the upper triangle)
    exact = name != "HeatKernel" or graph == "bidirected"
    for g in graphs:
        g.ndata["h"] = torch.arange(n * 2.0).view(n, 2)
    for weighted in (False, True):
        for kwargs in ({}, {"avg_degree": 2}, {"eps": 0.01}, {"eps": -math.inf}):
            if weighted:
                for g in graphs:
                    g.edata["w"] = w
            ours, theirs = (getattr(lib, name)(*args, **kwargs)(g) for lib, g in zip((T, dgl), graphs))
            assert ours.ntypes == theirs.ntypes and list(ours.edata) == list(theirs.edata) == ["w"]
            assert torch.equal(ours.ndata["h"], theirs.ndata["h"])
            got = dict(zip(edges_of(ours), ours.edata["w"].tolist()))
            want = dict(zip(edges_of(theirs), theirs.edata["w"].tolist()))
            if exact:
                assert edges_of(ours) == edges_of(theirs) and torch.equal(ours.edata["w"], theirs.edata["w"])
                continue
            threshold = min(want.values())
            assert all(abs({**got, **want}[key] - threshold) < 1e-5 for key in got.keys() ^ want.keys())
            common = sorted(got.keys() & want.keys(), key=lambda e: (e[1], e[0]))
            assert [e for e in edges_of(ours) if e in want] == common
            torch.testing.assert_close(torch.tensor([got[e] for e in common]), torch.tensor([want[e] for e in common]),
                                       atol=1e-6, rtol=1e-5)


def test_diffusion_sums_parallel_edges_where_dgl_keeps_one():
    """Ours on a multigraph is DGL's on its simple graph with the parallel edges' weights summed."""
    dgl = pytest.importorskip("dgl")
    src, dst, n = make_edges("multi_loop_isolated")
    ours = topograph.graph((src, dst), num_nodes=n)
    merged = dgl.to_simple(dgl.graph((src, dst), num_nodes=n), return_counts="w")
    merged.edata["w"] = merged.edata["w"].float()
    for lib_name, args in (("PPR", (0.2,)), ("GDC", ([0.5, 0.3, 0.2],)), ("HeatKernel", (1.0,))):
        got, want = getattr(T, lib_name)(*args)(ours), getattr(dgl, lib_name)(*args)(merged)
        assert edges_of(got) == edges_of(want)
        torch.testing.assert_close(got.edata["w"], want.edata["w"], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("op", ["raw", "rw", "gcn", "ppr"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_sign_diffusion_like_dgl(op, weighted):
    """On a multigraph with self loops where every node has in-edges (DGL's weighted 'rw' gives NaN without)."""
    dgl = pytest.importorskip("dgl")
    src, dst, n = make_edges("multi_loop_isolated")
    src, dst = torch.cat([src, torch.arange(n)]), torch.cat([dst, torch.arange(n)])
    graphs = both(src, dst, n)
    x, w = torch.randn(n, 3), torch.rand(src.numel()) + 0.1
    for g in graphs:
        g.ndata["feat"], g.edata["w"] = x, w
    kwargs = dict(eweight_name="w" if weighted else None, diffuse_op=op, alpha=0.3)
    ours, theirs = (lib.SIGNDiffusion(3, **kwargs)(g) for lib, g in zip((T, dgl), graphs))
    assert sorted(ours.ndata) == sorted(theirs.ndata) and sorted(ours.edata) == sorted(theirs.edata)
    for key in theirs.ndata:
        torch.testing.assert_close(ours.ndata[key], theirs.ndata[key], atol=1e-5, rtol=1e-5)
    if op == "rw" and weighted:  # node 0 loses its in-edges: 0 here, NaN in DGL
        keep = dst != 0
        graphs = both(src[keep], dst[keep], n)
        for g in graphs:
            g.ndata["feat"], g.edata["w"] = x, w[keep]
        ours, theirs = (lib.SIGNDiffusion(1, **kwargs)(g) for lib, g in zip((T, dgl), graphs))
        assert bool((ours.ndata["out_feat_1"][0] == 0).all()) and bool(theirs.ndata["out_feat_1"][0].isnan().all())
        torch.testing.assert_close(ours.ndata["out_feat_1"][1:], theirs.ndata["out_feat_1"][1:])


@pytest.mark.parametrize("name", ["multi_loop_isolated", "random"])
def test_svd_pe_like_dgl(name):
    """The same pairs up to one sign per pair (LAPACK's choice) where the singular values are distinct; the
    random flips: DGL draws from NumPy, so only their magnitudes agree."""
    dgl = pytest.importorskip("dgl")
    src, dst, n = make_edges(name)
    ours, theirs = both(src, dst, n)
    k = 4
    got, want = topograph.svd_pe(ours, k, random_flip=False), dgl.svd_pe(theirs, k, random_flip=False)
    singular = got[:, :k].pow(2).sum(0)
    gaps = torch.diff(torch.cat([singular, torch.zeros(1)])).abs()
    compared = 0
    for i in range(k):
        if bool(gaps[i] > 1e-3) and (i == 0 or bool(gaps[i - 1] > 1e-3)):
            cols = [i, k + i]
            sign = 1.0 if float((got[:, cols] * want[:, cols]).sum()) >= 0 else -1.0
            torch.testing.assert_close(got[:, cols] * sign, want[:, cols], atol=1e-5, rtol=1e-5)
            compared += 1
    assert compared >= 2
    torch.testing.assert_close(got.abs().sum(1), want.abs().sum(1), atol=1e-5, rtol=1e-5)
    flipped = dgl.SVDPE(k)(theirs).ndata["svd_pe"]
    torch.testing.assert_close(flipped.abs().sum(1), want.abs().sum(1), atol=1e-5, rtol=1e-5)


def test_svd_pe_padding_like_dgl():
    dgl = pytest.importorskip("dgl")
    ours, theirs = both(torch.tensor([0, 1]), torch.tensor([1, 0]), 2)
    got, want = topograph.svd_pe(ours, 3, True, False), dgl.svd_pe(theirs, 3, True, False)
    assert got.shape == want.shape == (2, 6)
    torch.testing.assert_close(got.abs(), want.abs())
    with pytest.raises(ValueError):
        dgl.svd_pe(theirs, 3)


def test_to_levi_like_dgl():
    """Equal where the last node has an edge; DGL drops trailing isolated nodes (their features stay), ours not."""
    dgl = pytest.importorskip("dgl")
    src, dst, n = make_edges("random")
    src, dst = torch.cat([src, torch.tensor([n - 1])]), torch.cat([dst, torch.tensor([0])])
    for idtype in (torch.int32, torch.int64):
        graphs = both(src.to(idtype), dst.to(idtype), n)
        for g in graphs:
            g.ndata["h"], g.edata["w"] = torch.arange(n * 2.0).view(n, 2), torch.arange(src.numel() * 1.0)
        ours, theirs = topograph.ToLevi()(graphs[0]), dgl.ToLevi()(graphs[1])
        assert ours.ntypes == theirs.ntypes and ours.canonical_etypes == theirs.canonical_etypes
        assert ours.idtype == theirs.idtype
        for t in theirs.ntypes:
            assert ours.num_nodes(t) == theirs.num_nodes(t)
            assert sorted(ours.nodes[t].data) == sorted(theirs.nodes[t].data)
            for key, value in theirs.nodes[t].data.items():
                assert torch.equal(ours.nodes[t].data[key], value)
        for c in theirs.canonical_etypes:
            assert edges_of(ours, c) == edges_of(theirs, c)
    lonely = both(torch.tensor([0]), torch.tensor([1]), 4)
    assert topograph.ToLevi()(lonely[0]).num_nodes("node") == 4 and dgl.ToLevi()(lonely[1]).num_nodes("node") == 2


@pytest.mark.parametrize("keep", [True, False])
def test_add_meta_paths_like_dgl(keep):
    dgl = pytest.importorskip("dgl")
    paths = {"co_review": [("user", "reviews", "item"), ("item", "reviewed_by", "user")],
             "fof_item": [("user", "follows", "user"), ("user", "follows", "user"), ("user", "reviews", "item")]}
    ours, theirs = (lib.AddMetaPaths(paths, keep)(reviews_graph(lib)) for lib in (topograph, dgl))
    assert ours.canonical_etypes == theirs.canonical_etypes and ours.ntypes == theirs.ntypes
    for c in theirs.canonical_etypes:
        assert edges_of(ours, c) == edges_of(theirs, c)
        assert sorted(ours.edges[c].data) == sorted(theirs.edges[c].data)
        for key, value in theirs.edges[c].data.items():
            assert torch.equal(ours.edges[c].data[key], value)
    for t in theirs.ntypes:
        assert ours.num_nodes(t) == theirs.num_nodes(t)
        assert torch.equal(ours.nodes[t].data["h"], theirs.nodes[t].data["h"])
