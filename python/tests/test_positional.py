"""The positional encodings and whole-graph matrices (random_walk_pe, lap_pe / laplacian_pe, shortest_dist, khop_adj),
the feature casts (to_half / to_float / to_double / to_bfloat16) and the transforms DropEdge, DropNode, AddEdge,
FeatMask, RowFeatNormalizer, GCNNorm, NodeShuffle, RandomWalkPE, LapPE / LaplacianPE: against references written
with Python loops and dense torch algebra on the conftest graphs (multi-edges, self loops, isolated nodes, nodes
without out-edges), by their laws (probabilities in [0, 1], L v = lambda v, breadth-first distances, the exact
keep / mask rates), on their error paths, and against DGL 2.1 where dgl imports (the DGL tests skip otherwise)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import collections
import math

import pytest
import torch

from conftest import build, make_edges, typed_graph

T = topograph.transforms


# --- references
def dense(src, dst, n, weight=None):
    """A[u][v]: the number of edges u -> v (or their summed weight), float64, by a loop over the edges."""
    a = torch.zeros(n, n, dtype=torch.float64)
    for e, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        a[u, v] += 1.0 if weight is None else float(weight[e])
    return a


def ref_random_walk_pe(a, k):
    rows = a.sum(1, keepdim=True)
    step = torch.where(rows != 0, a / torch.where(rows != 0, rows, 1), 0)
    power, out = torch.eye(a.shape[0], dtype=torch.float64), []
    for _ in range(k):
        power = power @ step
        out.append(power.diagonal())
    return torch.stack(out, -1).float() if out else torch.zeros(a.shape[0], 0)


def ref_laplacian(src, dst, n):
    a = dense(src, dst, n)
    indeg = torch.bincount(dst, minlength=n).double().clamp(min=1)
    return torch.eye(n, dtype=torch.float64) - a / indeg.sqrt()[:, None] / indeg.sqrt()[None, :]


def ref_bfs(src, dst, n, root):
    out = [[] for _ in range(n)]
    for u, v in zip(src.tolist(), dst.tolist()):
        out[u].append(v)
    dist, queue = [-1] * n, collections.deque([root])
    dist[root] = 0
    while queue:
        u = queue.popleft()
        for v in out[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist


def ref_paths(src, dst, n, dist, floyd_warshall):
    """DGL 2.1's paths, by loops: SciPy's predecessors (Dijkstra: j's highest-numbered in-neighbour one hop
    nearer; Floyd-Warshall: the classic triple loop, strict improvements) and, per hop, the lowest edge id."""
    pairs = list(zip(src.tolist(), dst.tolist()))
    if floyd_warshall:
        d = [[0 if i == j else (1 if (i, j) in pairs else math.inf) for j in range(n)] for i in range(n)]
        pred = [[i if (i != j and (i, j) in pairs) else -1 for j in range(n)] for i in range(n)]
        for k in range(n):
            for i in range(n):
                for j in range(n):
                    if d[i][k] + d[k][j] < d[i][j]:
                        d[i][j], pred[i][j] = d[i][k] + d[k][j], pred[k][j]
    else:
        pred = [[max([u for u, v in pairs if v == j and dist[i][u] == dist[i][j] - 1], default=-1)
                 if dist[i][j] > 0 else -1 for j in range(n)] for i in range(n)]
    longest = max([max(row) for row in dist], default=0)
    paths = [[[-1] * longest for _ in range(n)] for _ in range(n)]
    for i in range(n):
        for j in range(n):
            node = j
            for s in range(dist[i][j] - 1, -1, -1):
                before = pred[i][node]
                paths[i][j][s] = pairs.index((before, node))
                node = before
    return paths


def edges_of(g, etype=None):
    u, v = g.edges(etype=etype)
    return list(zip(u.tolist(), v.tolist()))


def symmetric(name):
    """A conftest graph with every edge also reversed (parallel edges and self loops kept, doubled)."""
    src, dst, n = make_edges(name)
    return torch.cat([src, dst]), torch.cat([dst, src]), n


# --- random_walk_pe
def test_random_walk_pe_is_the_walks_return_probability(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    pe = topograph.transforms.random_walk_pe(g, 4)
    assert pe.shape == (n, 4) and pe.dtype == torch.float32
    torch.testing.assert_close(pe, ref_random_walk_pe(dense(src, dst, n), 4), atol=1e-6, rtol=1e-5)
    assert bool(((pe >= 0) & (pe <= 1 + 1e-6)).all())
    no_out = torch.bincount(src, minlength=n) == 0
    assert bool((pe[no_out] == 0).all())  # a walk from a node without out-edges never returns


def test_random_walk_pe_weights_sum_over_parallel_edges(graph_name):
    g, src, dst, n = build(graph_name, torch.int64)
    w = torch.rand(src.numel()) + 0.1
    g.edata["w"] = w.view(-1, 1)  # [E, 1] as well as [E]
    want = ref_random_walk_pe(dense(src, dst, n, w), 3)
    torch.testing.assert_close(T.random_walk_pe(g, 3, eweight_name="w"), want, atol=1e-6, rtol=1e-5)
    transformed = T.RandomWalkPE(3, feat_name="rw", eweight_name="w")(g)
    assert transformed is g and torch.allclose(g.ndata["rw"], want, atol=1e-6)


# --- lap_pe
@pytest.mark.parametrize("name", ["multi_loop_isolated", "random"])
def test_lap_pe_vectors_are_eigenvectors_of_the_laplacian(name):
    src, dst, n = symmetric(name)
    g = topograph.graph((src, dst), num_nodes=n)
    laplacian = ref_laplacian(src, dst, n)
    k = 3
    pe, eigval = T.lap_pe(g, k, return_eigval=True)
    assert pe.shape == (n, k) and pe.dtype == torch.float32 and eigval.shape == (k,) and eigval.dtype == torch.float32
    torch.testing.assert_close(eigval.double(), torch.linalg.eigvalsh(laplacian)[1:k + 1], atol=1e-6, rtol=1e-5)
    vec = pe.double()
    torch.testing.assert_close(laplacian @ vec, vec * eigval.double(), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(vec.T @ vec, torch.eye(k, dtype=torch.float64), atol=1e-5, rtol=1e-5)


def test_lap_pe_signs_are_random_and_seeded():
    src, dst, n = symmetric("random")
    g = topograph.graph((src, dst), num_nodes=n)
    draws = []
    for seed in range(8):
        torch.manual_seed(seed)
        draws.append(T.lap_pe(g, 4))
    torch.manual_seed(3)
    assert torch.equal(T.lap_pe(g, 4), draws[3])
    for d in draws:
        torch.testing.assert_close(d.abs(), draws[0].abs())
    signs = torch.stack([torch.sign((d * draws[0]).sum(0)) for d in draws])  # [8, 4]: each column's sign vs seed 0
    assert bool((signs.abs() == 1).all()) and bool((signs == -1).any())


def test_lap_pe_directed_takes_real_parts_in_numpy_order():
    g = topograph.graph(([0, 1, 2, 3, 0, 4], [1, 2, 3, 0, 2, 4]), num_nodes=6)
    src, dst = (t.to(torch.int64) for t in g.edges())
    values = torch.linalg.eigvals(ref_laplacian(src, dst, 6))
    order = sorted(range(6), key=lambda i: (float(values[i].real), float(values[i].imag)))
    _, eigval = T.lap_pe(g, 4, return_eigval=True)
    torch.testing.assert_close(eigval.double(), values.real[order[1:5]], atol=1e-6, rtol=1e-5)


def test_lap_pe_padding_and_the_error_without_it():
    g = topograph.graph(([0, 1, 1, 2], [1, 0, 2, 1]))  # a path of 3 nodes, both ways
    pe, eigval = T.lap_pe(g, 5, padding=True, return_eigval=True)
    assert pe.shape == (3, 5) and bool((pe[:, 2:] == 0).all()) and bool(eigval[2:].isnan().all())
    torch.testing.assert_close(eigval[:2], torch.tensor([1.0, 2.0]))
    for k in (3, 5):
        with pytest.raises(topograph.DGLError, match="padding=True"):
            T.lap_pe(g, k)
    with pytest.warns(FutureWarning, match="lap_pe"):
        torch.manual_seed(0)
        old = T.laplacian_pe(g, 2)
    torch.manual_seed(0)
    assert torch.equal(old, T.lap_pe(g, 2))


def test_lap_pe_transform_sets_features_on_the_graph():
    src, dst, n = symmetric("random")
    g = topograph.graph((src, dst), num_nodes=n)
    torch.manual_seed(1)
    pe, eigval = T.lap_pe(g, 3, return_eigval=True)
    torch.manual_seed(1)
    assert T.LapPE(3, feat_name="lap", eigval_name="ev")(g) is g
    assert torch.equal(g.ndata["lap"], pe) and torch.equal(g.ndata["ev"], eigval.expand(n, 3))
    with pytest.warns(FutureWarning, match="LapPE"):
        T.LaplacianPE(2)
    small = topograph.graph(([0, 1], [1, 0]))
    assert T.LapPE(3, padding=True)(small).ndata["PE"].shape == (2, 3)


# --- shortest_dist
def test_shortest_dist_is_breadth_first(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    dist = T.shortest_dist(g)
    assert dist.dtype == torch.int64 and dist.tolist() == [ref_bfs(src, dst, n, r) for r in range(n)]
    for root in (0, n - 1):
        assert T.shortest_dist(g, root=root).tolist() == ref_bfs(src, dst, n, root)


@pytest.mark.parametrize("density", ["sparse", "dense"])  # SciPy's Dijkstra, or its Floyd-Warshall (E >= N^2/4)
def test_shortest_dist_paths_follow_scipy_and_the_lowest_edge_id(density):
    gen = torch.Generator().manual_seed(11)
    for trial in range(6):
        n = 9
        e = int(torch.randint(8, 19, (1,), generator=gen)) if density == "sparse" else 21 + trial
        src, dst = torch.randint(0, n - 1, (e,), generator=gen), torch.randint(0, n - 1, (e,), generator=gen)
        g = topograph.graph((src, dst), num_nodes=n)  # node 8 isolated; parallel edges and self loops likely
        dist, paths = T.shortest_dist(g, return_paths=True)
        want = [ref_bfs(src, dst, n, r) for r in range(n)]
        assert dist.tolist() == want
        assert paths.tolist() == ref_paths(src, dst, n, want, floyd_warshall=density == "dense")
        for i in range(n):  # the laws: each path chains from i to j in dist[i][j] edges, then -1s
            for j in range(n):
                hops = [x for x in paths[i, j].tolist() if x >= 0]
                assert len(hops) == max(want[i][j], 0) and paths[i, j, len(hops):].eq(-1).all()
                ends = [i] + [int(dst[x]) for x in hops]
                assert all(int(src[x]) == a for x, a in zip(hops, ends)) and (not hops or ends[-1] == j)
        d0, p0 = T.shortest_dist(g, root=3, return_paths=True)
        sparse_paths = ref_paths(src, dst, n, want, floyd_warshall=False)[3]
        assert d0.tolist() == want[3] and p0.tolist() == [row[:p0.shape[1]] for row in sparse_paths]


def test_shortest_dist_edge_cases():
    empty = topograph.graph(([], []), num_nodes=3)
    dist, paths = T.shortest_dist(empty, return_paths=True)
    assert dist.tolist() == [[0, -1, -1], [-1, 0, -1], [-1, -1, 0]] and paths.shape == (3, 3, 0)
    assert T.shortest_dist(topograph.graph(([], []), num_nodes=0), return_paths=True)[1].shape == (0, 0, 0)
    g = topograph.graph(([0, 1], [1, 2]))
    assert T.shortest_dist(g, root=torch.tensor(1)).tolist() == [-1, 0, 1]
    for root in (-1, 3, 1.0, True):
        with pytest.raises(topograph.DGLError, match="root"):
            T.shortest_dist(g, root=root)


# --- khop_adj and the casts
def test_khop_adj_counts_walks(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    a = dense(src, dst, n)
    power = torch.eye(n, dtype=torch.float64)
    for k in range(4):
        got = T.khop_adj(g, k)
        assert got.dtype == torch.float32 and torch.equal(got, power.float())
        power = power @ a
    with pytest.raises(topograph.DGLError, match="k must be"):
        T.khop_adj(g, -1)


def test_casts_change_only_floating_features():
    g, src, _, n = build("multi_loop_isolated", torch.int64)
    g.ndata["h"], g.ndata["i"] = torch.randn(n, 2, dtype=torch.float64), torch.arange(n)
    g.edata["w"], g.edata["b"] = torch.randn(src.numel()).half(), torch.ones(src.numel(), dtype=torch.bool)
    for cast, dtype in ((T.to_float, torch.float32), (T.to_double, torch.float64), (T.to_half, torch.float16),
                        (T.to_bfloat16, torch.bfloat16)):
        h = cast(g)
        assert h is not g and edges_of(h) == edges_of(g)
        assert h.ndata["h"].dtype == dtype and h.edata["w"].dtype == dtype
        assert h.ndata["i"] is g.ndata["i"] and h.edata["b"] is g.edata["b"]
        torch.testing.assert_close(h.ndata["h"].double(), g.ndata["h"], atol=5e-2, rtol=1e-2)
    assert g.ndata["h"].dtype == torch.float64 and g.edata["w"].dtype == torch.float16  # g unchanged
    typed = T.to_double(typed_graph())
    assert typed.nodes["user"].data["h"].dtype == torch.float64 and typed.edges["plays"].data["w"].dtype == \
        torch.float64


# --- the random augmentations
def numbered(name="random", idtype=torch.int64):
    g, src, dst, n = build(name, idtype)
    g.ndata["id"], g.ndata["h"] = torch.arange(n), torch.randn(n, 3)
    g.edata["id"], g.edata["e"] = torch.arange(src.numel()), torch.randn(src.numel(), 2)
    return g, list(zip(src.tolist(), dst.tolist())), n


def test_drop_edge_keeps_a_subsequence_at_rate_1_minus_p(idtype):
    g, old, n = numbered(idtype=idtype)
    kept = T.DropEdge(0)(g)
    assert kept is not g and edges_of(kept) == old and kept.edata["e"] is g.edata["e"]
    gone = T.DropEdge(1.0)(g)
    assert gone.num_edges() == 0 and gone.num_nodes() == n and gone.ndata["h"] is g.ndata["h"]
    ids = T.DropEdge(0.5)(g).edata["id"].tolist()
    assert ids == sorted(set(ids))
    big = topograph.graph((torch.randint(0, 50, (4000,)), torch.randint(0, 50, (4000,))))
    dropped = 4000 - T.DropEdge(0.3)(big).num_edges()
    assert abs(dropped - 1200) < 4 * math.sqrt(4000 * 0.3 * 0.7)


def test_drop_edge_and_node_on_a_heterograph():
    g = typed_graph()
    assert T.DropEdge(1)(g).num_edges() == 0 and T.DropNode(1)(g).num_nodes() == 0
    assert T.DropNode(0)(g).num_nodes("user") == 3 and g.num_edges("follows") == 4


def test_drop_node_takes_the_nodes_edges_along(idtype):
    g, old, n = numbered(idtype=idtype)
    torch.manual_seed(4)
    h = T.DropNode(0.4)(g)
    kept = h.ndata["id"].tolist()
    assert kept == sorted(kept) and 0 < len(kept) < n and h.idtype == idtype
    relabel = {old_id: new_id for new_id, old_id in enumerate(kept)}
    want = sorted((relabel[u], relabel[v]) for u, v in old if u in relabel and v in relabel)
    assert sorted(edges_of(h)) == want
    assert torch.equal(h.ndata["h"], g.ndata["h"][kept]) and h.edata["e"].shape[0] == len(want)
    assert T.DropNode(1)(g).num_nodes() == 0 and edges_of(T.DropNode(0)(g)) == old


def test_add_edge_appends_int_e_times_ratio_random_edges(idtype):
    g, old, n = numbered(idtype=idtype)
    assert T.AddEdge(0)(g) is g
    h = T.AddEdge(0.5)(g)
    new = edges_of(h)
    assert len(new) == len(old) + int(len(old) * 0.5) and new[:len(old)] == old and h.idtype == idtype
    assert all(0 <= u < n and 0 <= v < n for u, v in new[len(old):])
    assert bool((h.edata["e"][len(old):] == 0).all()) and torch.equal(h.edata["e"][:len(old)], g.edata["e"])
    assert g.num_edges() == len(old)
    typed = T.AddEdge(1.0)(typed_graph())
    assert typed.num_edges("follows") == 8 and typed.num_edges("plays") == 6 and typed.num_edges("rated") == 0


def test_feat_mask_zeroes_whole_columns_in_place():
    g, _, n = numbered()
    g.ndata["x"] = torch.rand(n, 400) + 1
    before = g.ndata["x"].clone()
    assert T.FeatMask(0, node_feat_names=["x"])(g) is g and torch.equal(g.ndata["x"], before)
    x = g.ndata["x"]
    assert T.FeatMask(0.3, node_feat_names=["x"], edge_feat_names=["e"])(g) is g and g.ndata["x"] is x
    zero = (x == 0).all(0)
    assert bool((zero | (x == before).all(0)).all())  # each column all zero or untouched
    assert abs(int(zero.sum()) - 120) < 4 * math.sqrt(400 * 0.3 * 0.7)
    T.FeatMask(1.0, edge_feat_names=["e"])(g)
    assert bool((g.edata["e"] == 0).all())
    typed = T.FeatMask(1.0, node_feat_names=["h"])(typed_graph())
    assert bool((typed.nodes["user"].data["h"] == 0).all()) and bool((typed.nodes["game"].data["h"] == 0).all())


def test_node_shuffle_permutes_rows_alike_and_keeps_the_structure():
    g, old, n = numbered()
    h = T.NodeShuffle()(g)
    perm = h.ndata["id"]
    assert sorted(perm.tolist()) == list(range(n)) and edges_of(h) == old
    assert torch.equal(h.ndata["h"], g.ndata["h"][perm]) and torch.equal(g.ndata["id"], torch.arange(n))
    assert h.edata["e"] is g.edata["e"]


# --- the feature transforms
def test_row_feat_normalizer_divides_by_the_clamped_row_sum():
    g, _, n = numbered()
    g.ndata["x"] = torch.rand(n, 5) * 2
    g.ndata["x"][0] = 0.1  # a row summing to 0.5 stays
    x, want = g.ndata["x"], g.ndata["x"] / g.ndata["x"].sum(-1, keepdim=True).clamp(min=1)
    assert T.RowFeatNormalizer(node_feat_names=["x"])(g) is g
    assert g.ndata["x"] is x and torch.allclose(x, want)  # in place, as DGL's
    e = g.edata["e"]
    shifted = e - e.min()
    T.RowFeatNormalizer(subtract_min=True, edge_feat_names=["e"])(g)
    assert torch.allclose(g.edata["e"], shifted / shifted.sum(-1, keepdim=True).clamp(min=1))
    with pytest.raises(topograph.DGLError, match="floating"):
        T.RowFeatNormalizer(node_feat_names=["id"])(g)


def test_gcn_norm_weights(graph_name):
    g, src, dst, n = build(graph_name, torch.int64)
    indeg = torch.bincount(dst, minlength=n).double()
    inv = torch.where(indeg > 0, indeg.rsqrt(), 0)
    assert T.GCNNorm("norm")(g) is g
    torch.testing.assert_close(g.edata["norm"], (inv[src] * inv[dst]).float())
    w = torch.rand(src.numel(), dtype=torch.float64)
    g.edata["w"] = w
    wdeg = torch.zeros(n, dtype=torch.float64).index_add(0, dst, w)
    winv = torch.where(wdeg > 0, wdeg.rsqrt(), 0)
    T.GCNNorm()(g)
    torch.testing.assert_close(g.edata["w"], winv[src] * w * winv[dst])
    typed = T.GCNNorm()(typed_graph())  # only user -> user; in-weights 3, 0, 3 (node 1: 0 -> weight 0)
    torch.testing.assert_close(typed.edges["follows"].data["w"], torch.tensor([0.0, 0.0, 2 / 3, 1.0]))
    assert torch.equal(typed.edges["plays"].data["w"], torch.arange(3.0) + 10)


# --- bad input
def test_errors_name_the_argument():
    hetero = typed_graph()
    for fn in (T.random_walk_pe, T.lap_pe, T.khop_adj):
        with pytest.raises(topograph.DGLError, match="one node type"):
            fn(hetero, 2)
    with pytest.raises(topograph.DGLError, match="one node type"):
        T.shortest_dist(hetero)
    g, _, _ = numbered()
    for k in (0, -2, True, 1.5):
        for fn in (T.random_walk_pe, T.lap_pe):
            with pytest.raises(topograph.DGLError, match="k must be"):
                fn(g, k)
        for cls in (T.RandomWalkPE, T.LapPE):
            with pytest.raises(topograph.DGLError, match="k must be"):
                cls(k)
    with pytest.raises(topograph.DGLError, match="eweight_name 'nope'"):
        T.random_walk_pe(g, 2, eweight_name="nope")
    with pytest.raises(topograph.DGLError, match=r"\[E\] or \[E, 1\]"):
        T.random_walk_pe(g, 2, eweight_name="e")
    for p in (-0.1, 1.5, "0.5", None):
        for cls in (T.DropEdge, T.DropNode, T.FeatMask):
            with pytest.raises(topograph.DGLError, match="p must be"):
                cls(p)
    with pytest.raises(topograph.DGLError, match="ratio"):
        T.AddEdge(-0.5)
    with pytest.raises(topograph.DGLError, match="node_feat_names names 'nope'"):
        T.FeatMask(0.5, node_feat_names=["nope"])(g)
    with pytest.raises(topograph.DGLError, match="edge_feat_names names 'nope'"):
        T.RowFeatNormalizer(edge_feat_names=["nope"])(g)
    with pytest.raises(topograph.DGLError, match="list of feature names"):
        T.FeatMask(0.5, node_feat_names="h")
    with pytest.raises(topograph.DGLError, match="no columns"):
        T.FeatMask(0.5, node_feat_names=["id"])(g)
    block = topograph.to_block(g, torch.arange(g.num_nodes()))
    for transform in (T.DropEdge(), T.AddEdge(), T.FeatMask(), T.GCNNorm(), T.NodeShuffle()):
        with pytest.raises(topograph.DGLError, match="before to_block"):
            transform(block)


# --- against DGL 2.1
def both(src, dst, n):
    dgl = pytest.importorskip("dgl")
    return topograph.graph((src, dst), num_nodes=n), dgl.graph((src, dst), num_nodes=n)


def test_random_walk_pe_and_khop_adj_like_dgl(graph_name):
    dgl = pytest.importorskip("dgl")
    src, dst, n = make_edges(graph_name)
    ours, theirs = both(src, dst, n)
    torch.testing.assert_close(T.random_walk_pe(ours, 5), dgl.random_walk_pe(theirs, 5), atol=1e-6, rtol=1e-5)
    for k in (0, 1, 3):
        assert torch.equal(T.khop_adj(ours, k), dgl.khop_adj(theirs, k))
    w = torch.rand(src.numel()) + 0.1
    ours.edata["w"], theirs.edata["w"] = w, w
    key = src * n + dst
    multiplicity = (key[:, None] == key[None, :]).sum(1).float()
    # DGL 2.1 weighs u -> v by (number of edges u -> v) * (their summed weight): ours with weights * multiplicity
    ours.edata["w"] = w * multiplicity
    torch.testing.assert_close(T.random_walk_pe(ours, 3, "w"), dgl.random_walk_pe(theirs, 3, "w"))
    first = torch.tensor([int((key == k).nonzero()[0]) for k in key.unique().tolist()], dtype=torch.int64)
    simple = both(src[first], dst[first], n)  # without parallel edges the two agree as they are
    for g in simple:
        g.edata["w"] = w[first]
    if first.numel() != 1:  # DGL 2.1 squeezes a lone edge's weight [1] to a scalar, which SciPy refuses
        torch.testing.assert_close(T.random_walk_pe(simple[0], 3, "w"), dgl.random_walk_pe(simple[1], 3, "w"))


@pytest.mark.parametrize("n,k", [(12, 3), (12, 10), (5, 4), (4, 6)])  # DGL's ARPACK path, its dense path, padding
def test_lap_pe_like_dgl(n, k):
    dgl = pytest.importorskip("dgl")
    gen = torch.Generator().manual_seed(n + k)
    src, dst = torch.randint(0, n, (3 * n,), generator=gen), torch.randint(0, n, (3 * n,), generator=gen)
    ours, theirs = both(torch.cat([src, dst]), torch.cat([dst, src]), n)
    pe, eigval = T.lap_pe(ours, k, padding=True, return_eigval=True)
    dpe, deigval = dgl.lap_pe(theirs, k, padding=True, return_eigval=True)
    torch.testing.assert_close(eigval, deigval, atol=1e-4, rtol=1e-4, equal_nan=True)
    spectrum = torch.linalg.eigvalsh(ref_laplacian(torch.cat([src, dst]), torch.cat([dst, src]), n))
    gap = (spectrum[:, None] - spectrum[None, :]).abs().masked_fill(torch.eye(n, dtype=torch.bool), math.inf)
    simple = gap.min(1).values > 1e-3
    assert bool(simple[0]) and bool(simple[1:k + 1].any())  # the graphs are chosen to compare some vectors
    for c in range(k):  # compare |vectors| (signs are random) where the eigenvalue (and the one left out) is simple
        if c >= n - 1:
            assert bool((pe[:, c] == 0).all()) and bool((dpe[:, c] == 0).all())
        elif bool(simple[c + 1]):
            torch.testing.assert_close(pe[:, c].abs(), dpe[:, c].abs(), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("edges", [10, 14, 20, 25, 40])  # Dijkstra below N^2/4 = 25, Floyd-Warshall from it
def test_shortest_dist_like_dgl(edges):
    dgl = pytest.importorskip("dgl")
    gen = torch.Generator().manual_seed(edges)
    for _ in range(4):
        src, dst = torch.randint(0, 10, (edges,), generator=gen), torch.randint(0, 10, (edges,), generator=gen)
        ours, theirs = both(src, dst, 10)
        for root in (None, 0, 7):
            got, want = T.shortest_dist(ours, root, True), dgl.shortest_dist(theirs, root, True)
            assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


def test_casts_and_feature_transforms_like_dgl():
    dgl = pytest.importorskip("dgl")
    src, dst, n = make_edges("multi_loop_isolated")
    graphs = both(src, dst, n)
    feats = (torch.randn(n, 4, dtype=torch.float64), torch.arange(n), torch.rand(src.numel()))
    for g in graphs:
        g.ndata["h"], g.ndata["i"], g.edata["w"] = (f.clone() for f in feats)
    for cast in ("to_float", "to_double", "to_half"):
        ours, theirs = getattr(T, cast)(graphs[0]), getattr(dgl, cast)(graphs[1])
        assert {k: v.dtype for k, v in ours.ndata.items()} == {k: v.dtype for k, v in theirs.ndata.items()}
        assert ours.edata["w"].dtype == theirs.edata["w"].dtype
    ours, theirs = (lib.RowFeatNormalizer(True, ["h"], ["w"])(g) for lib, g in zip((T, dgl.transforms), graphs))
    torch.testing.assert_close(ours.ndata["h"], theirs.ndata["h"])
    for name in ("w", "norm"):
        ours, theirs = (lib.GCNNorm(name)(g) for lib, g in zip((T, dgl.transforms), graphs))
        torch.testing.assert_close(ours.edata[name], theirs.edata[name])
    typed = [typed_graph(lib) for lib in (topograph, dgl)]
    ours, theirs = (lib.GCNNorm()(g) for lib, g in zip((T, dgl.transforms), typed))
    for c in theirs.canonical_etypes:
        for key, value in theirs.edges[c].data.items():
            torch.testing.assert_close(ours.edges[c].data[key], value)


@pytest.mark.parametrize("name,args", [("DropEdge", (0.3,)), ("DropNode", (0.3,)), ("AddEdge", (0.5,)),
                                       ("NodeShuffle", ()), ("FeatMask", (0.5, ["h"], ["e"]))])
def test_random_transforms_draw_as_dgl(name, args):
    """Both libraries draw these from torch's generator in the same order (Bernoulli masks per relation or node
    type, randint sources then destinations, randperm per type), so one seed gives the same result; DropNode's
    remaining edges come in another order in DGL (remove_nodes), so its edges are compared as sets."""
    dgl = pytest.importorskip("dgl")
    src, dst, n = make_edges("random")
    out = []
    for lib, g in zip((T, dgl.transforms), both(src, dst, n)):
        g.ndata["h"], g.edata["e"] = torch.arange(n * 6.0).view(n, 6), torch.arange(src.numel() * 4.0).view(-1, 4)
        torch.manual_seed(5)
        out.append(getattr(lib, name)(*args)(g))
    ours, theirs = out
    assert ours.num_nodes() == theirs.num_nodes() and torch.equal(ours.ndata["h"], theirs.ndata["h"])
    pairs = [sorted(zip(*(t.tolist() for t in g.edges()), g.edata["e"].tolist())) for g in out]
    assert pairs[0] == pairs[1]
    if name != "DropNode":
        assert edges_of(ours) == edges_of(theirs) and torch.equal(ours.edata["e"], theirs.edata["e"])
