"""Graph mutation (add_nodes, add_edges, remove_nodes, in place and functional), rand_graph, khop_in_subgraph /
khop_out_subgraph, GlobalUniform and as_edge_prediction_sampler (on a graph and a heterograph), against
plain-Python references: edge lists, feature padding, relabelling, excluded edges, with the awkward cases
(nothing added, edges to new nodes, every node removed, two relations, batches, int32)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from conftest import reviews_graph

NID, EID = topograph.NID, topograph.EID
U = [0, 1, 2, 3, 2, 4]
V = [1, 2, 3, 0, 0, 4]


def edges_of(g, etype=None):
    u, v = g.edges(etype=etype)
    return list(zip(u.tolist(), v.tolist()))


def sample_graph(idtype=torch.int64):
    g = topograph.graph((torch.tensor(U), torch.tensor(V)), num_nodes=6, idtype=idtype)
    g.ndata["x"] = torch.arange(12.0).view(6, 2)
    g.edata["w"] = torch.arange(6.0) + 10
    return g


@pytest.fixture(params=[torch.int32, torch.int64], ids=["int32", "int64"])
def idtype(request):
    return request.param


# --- add_nodes
def test_add_nodes_pads_features_and_keeps_edges(idtype):
    g = sample_graph(idtype)
    h = topograph.add_nodes(g, 3, data={"x": torch.full((3, 2), 7.0), "y": torch.ones(3)})
    assert g.num_nodes() == 6 and h.num_nodes() == 9 and h.idtype == idtype
    assert edges_of(h) == list(zip(U, V))
    assert h.ndata["x"].tolist() == g.ndata["x"].tolist() + [[7.0, 7.0]] * 3
    assert h.ndata["y"].tolist() == [0.0] * 6 + [1.0] * 3  # a new field: zeros for the old nodes
    assert h.edata["w"] is g.edata["w"]
    g.add_nodes(2)  # in place, no data: zeros
    assert g.num_nodes() == 8 and g.ndata["x"][6:].tolist() == [[0.0, 0.0]] * 2 and g.in_degrees().numel() == 8


def test_add_zero_nodes_is_a_copy():
    g = sample_graph()
    h = topograph.add_nodes(g, 0)
    assert h is not g and h.num_nodes() == 6 and edges_of(h) == edges_of(g)
    h.ndata["z"] = torch.zeros(6)
    assert "z" not in g.ndata


def test_add_nodes_errors():
    g = sample_graph()
    with pytest.raises(topograph.DGLError, match="num must be an int >= 0, got -1"):
        g.add_nodes(-1)
    with pytest.raises(topograph.DGLError, match=r"data\['x'\] must be a tensor of 2 rows"):
        g.add_nodes(2, data={"x": torch.zeros(3, 2)})
    with pytest.raises(topograph.DGLError, match=r"data\['x'\] has rows of shape \(3,\)"):
        g.add_nodes(2, data={"x": torch.zeros(2, 3)})
    hg = two_relations()
    with pytest.raises(topograph.DGLError, match="name one"):
        hg.add_nodes(1)
    assert g.num_nodes() == 6  # a failed mutation leaves the graph as it was


# --- add_edges
def test_add_edges_creates_nodes_and_pads(idtype):
    g = sample_graph(idtype)
    g.add_edges(torch.tensor([5, 8]), torch.tensor([8, 1]), data={"w": torch.tensor([1.0, 2.0])})
    assert g.num_nodes() == 9 and g.idtype == idtype
    assert edges_of(g) == list(zip(U, V)) + [(5, 8), (8, 1)]
    assert g.edata["w"].tolist() == [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 1.0, 2.0]
    assert g.ndata["x"].shape == (9, 2) and g.ndata["x"][6:].abs().sum() == 0
    h = topograph.add_edges(g, 1, [2, 3])  # one id pairs with each of the other side's
    assert edges_of(h)[-2:] == [(1, 2), (1, 3)] and h.edata["w"][-2:].tolist() == [0.0, 0.0]
    assert g.num_edges() == 8


def test_add_edges_nothing_and_errors():
    g = sample_graph()
    assert edges_of(topograph.add_edges(g, [], [])) == edges_of(g)
    with pytest.raises(topograph.DGLError, match="node id -1 is negative"):
        g.add_edges([-1], [0])
    with pytest.raises(topograph.DGLError, match="2 source ids but 3 destination ids"):
        g.add_edges([0, 1], [0, 1, 2])
    with pytest.raises(topograph.DGLError, match="must be integers"):
        g.add_edges(torch.tensor([0.5]), torch.tensor([1.0]))
    with pytest.raises(topograph.DGLError, match="does not fit idtype torch.int32"):
        topograph.add_edges(sample_graph(torch.int32), [0], [2 ** 31])
    assert g.num_edges() == 6


def two_relations():
    return topograph.heterograph({("u", "a", "v"): ([0, 1, 2], [1, 0, 1]), ("v", "b", "u"): ([0, 1], [2, 2])},
                                 num_nodes_dict={"u": 3, "v": 2})


def test_mutations_on_two_relations():
    hg = two_relations()
    hg.nodes["u"].data["h"] = torch.arange(3.0)
    hg.edges["b"].data["w"] = torch.tensor([5.0, 6.0])
    hg.add_nodes(2, ntype="v")
    assert hg.num_nodes("v") == 4 and hg.num_nodes("u") == 3
    hg.add_edges([3], [4], etype="a")  # u 3 and v 4 created
    assert (hg.num_nodes("u"), hg.num_nodes("v")) == (4, 5)
    assert edges_of(hg, "a") == [(0, 1), (1, 0), (2, 1), (3, 4)] and edges_of(hg, "b") == [(0, 2), (1, 2)]
    assert hg.nodes["u"].data["h"].tolist() == [0.0, 1.0, 2.0, 0.0]
    assert hg.edges["b"].data["w"].tolist() == [5.0, 6.0]
    sub = topograph.remove_nodes(hg, [0, 2], ntype="u", store_ids=True)
    assert sub.num_nodes("u") == 2 and sub.num_nodes("v") == 5
    # u 1 -> 0, u 3 -> 1: a's edges from u 1 and 3 stay, b's into u 2 go
    assert edges_of(sub, "a") == [(0, 0), (1, 4)] and edges_of(sub, "b") == []
    assert sub.nodes["u"].data[NID].tolist() == [1, 3] and sub.nodes["v"].data[NID].tolist() == list(range(5))
    assert sub.edges["a"].data[EID].tolist() == [1, 3] and sub.edges["b"].data[EID].tolist() == []
    assert sub.nodes["u"].data["h"].tolist() == [1.0, 0.0]


# --- remove_nodes
def remove_reference(u, v, n, removed):
    keep = [i for i in range(n) if i not in set(removed)]
    new = {old: i for i, old in enumerate(keep)}
    kept = [e for e, (a, b) in enumerate(zip(u, v)) if a in new and b in new]
    return keep, kept, [(new[u[e]], new[v[e]]) for e in kept]


@pytest.mark.parametrize("removed", [[1], [4, 0], [5], [2, 2], list(range(6))])
def test_remove_nodes_relabels(removed, idtype):
    g = sample_graph(idtype)
    keep, kept, expected = remove_reference(U, V, 6, removed)
    h = topograph.remove_nodes(g, torch.tensor(removed), store_ids=True)
    assert h.num_nodes() == len(keep) and edges_of(h) == expected and h.idtype == idtype
    assert h.ndata[NID].tolist() == keep and h.edata[EID].tolist() == kept
    assert h.ndata[NID].dtype == idtype
    assert h.ndata["x"].tolist() == [g.ndata["x"][i].tolist() for i in keep]
    assert h.edata["w"].tolist() == [g.edata["w"][e].item() for e in kept]
    g.remove_nodes(removed)  # in place, store_ids=False (DGL's default): no ids
    assert edges_of(g) == expected and NID not in g.ndata and EID not in g.edata


def test_remove_nodes_errors():
    g = sample_graph()
    with pytest.raises(topograph.DGLError, match=r"id 6 out of range \[0, 6\)"):
        g.remove_nodes([6])
    with pytest.raises(topograph.DGLError, match="boolean mask"):
        g.remove_nodes(torch.ones(6, dtype=torch.bool))
    assert g.num_nodes() == 6 and topograph.remove_nodes(g, []).num_nodes() == 6


def test_batched_graph_remove_keeps_batch_add_forgets_it():
    a, b = sample_graph(), topograph.graph(([0, 1], [1, 2]), num_nodes=3)
    b.ndata["x"], b.edata["w"] = torch.zeros(3, 2), torch.zeros(2)
    bg = topograph.batch([a, b])
    h = topograph.remove_nodes(bg, [1, 7])  # a's node 1, b's node 1
    assert h.batch_size == 2 and h.batch_num_nodes().tolist() == [5, 2] and h.batch_num_edges().tolist() == [4, 0]
    parts = topograph.unbatch(h)
    assert edges_of(parts[0]) == remove_reference(U, V, 6, [1])[2] and edges_of(parts[1]) == []
    h = topograph.remove_nodes(bg, list(range(6, 9)))  # every node of b
    assert h.batch_num_nodes().tolist() == [6, 0] and h.batch_num_edges().tolist() == [6, 0]
    for grown in (topograph.add_nodes(bg, 1), topograph.add_edges(bg, [0], [8])):  # as DGL 2.1: one graph
        assert grown.batch_size == 1 and grown.batch_num_nodes().tolist() == [grown.num_nodes()]


def test_in_place_mutation_keeps_old_views():
    g = sample_graph()
    view = g["_E"]
    g.add_edges([0], [5])
    assert g.num_edges() == 7 and view.num_edges() == 6


# --- rand_graph
def test_rand_graph_draws_distinct_pairs(idtype):
    torch.manual_seed(5)
    g = topograph.rand_graph(7, 30, idtype=idtype)
    assert g.num_nodes() == 7 and g.num_edges() == 30 and g.idtype == idtype
    assert len(set(edges_of(g))) == 30
    full = topograph.rand_graph(4, 16)
    assert sorted(edges_of(full)) == [(a, b) for a in range(4) for b in range(4)]
    torch.manual_seed(5)
    assert edges_of(topograph.rand_graph(7, 30, idtype=idtype)) == edges_of(g)  # torch's seed repeats it
    big = topograph.rand_graph(100_000, 50)  # the rejection path
    assert len(set(edges_of(big))) == 50 and big.num_nodes() == 100_000
    assert topograph.rand_graph(0, 0).num_nodes() == 0
    with pytest.raises(topograph.DGLError, match="num_edges 17 exceeds the 16"):
        topograph.rand_graph(4, 17)
    with pytest.raises(topograph.DGLError, match="num_nodes must be an int >= 0"):
        topograph.rand_graph(-1, 0)


def test_rand_graph_is_uniform():
    torch.manual_seed(0)
    counts = torch.zeros(3, 3)
    for _ in range(600):
        for a, b in edges_of(topograph.rand_graph(3, 2)):
            counts[a, b] += 1
    assert counts.sum() == 1200 and (counts - 1200 / 9).abs().max() < 45  # ~133 each, sd ~11


# --- khop subgraphs
def khop_reference(u, v, seeds, k, inward):
    reached, last = set(seeds), set(seeds)
    for _ in range(k):
        last = {a for a, b in zip(u, v) if b in last} if inward else {b for a, b in zip(u, v) if a in last}
        reached |= last
    return sorted(reached)


@pytest.mark.parametrize("k", [0, 1, 2, 5])
@pytest.mark.parametrize("inward", [True, False])
def test_khop_subgraph(k, inward):
    g = sample_graph()
    fn = topograph.khop_in_subgraph if inward else topograph.khop_out_subgraph
    seeds = [3, 1]
    sub, where = fn(g, torch.tensor(seeds), k)
    nodes = khop_reference(U, V, seeds, k, inward)
    assert sub.ndata[NID].tolist() == nodes
    assert where.tolist() == [nodes.index(s) for s in seeds]
    induced = sorted((nodes.index(a), nodes.index(b)) for a, b in zip(U, V) if a in nodes and b in nodes)
    assert sorted(edges_of(sub)) == induced
    plain = fn(g, seeds, k, relabel_nodes=False)
    assert plain.num_nodes() == 6 and plain.num_edges() == len(induced)


def test_khop_with_a_huge_k_stops_once_nothing_new_is_reached():
    """k = 10**12 on a cycle: the walk ends when a hop reaches no new node (it looped k times: unbounded)."""
    import time

    cycle = topograph.graph(([0, 1, 2, 3], [1, 2, 3, 0]))
    start = time.perf_counter()
    sub, where = topograph.khop_out_subgraph(cycle, torch.tensor([0]), 10**12)
    assert time.perf_counter() - start < 10
    assert sub.ndata[NID].tolist() == [0, 1, 2, 3] and where.tolist() == [0]
    assert topograph.khop_in_subgraph(sample_graph(), [3, 1], 10**9)[0].ndata[NID].tolist() == \
        khop_reference(U, V, [3, 1], 50, True)


def test_khop_on_two_relations_and_errors():
    hg = two_relations()
    sub, where = topograph.khop_in_subgraph(hg, {"u": [2]}, 2)
    # u 2 <- v 0, v 1 (b); v 0 <- u 1 and v 1 <- u 0, u 2 (a)
    assert sub.nodes["u"].data[NID].tolist() == [0, 1, 2] and sub.num_nodes("v") == 2
    assert isinstance(where, dict) and where["u"].tolist() == [2]
    with pytest.raises(topograph.DGLError, match="k must be an int >= 0"):
        topograph.khop_out_subgraph(sample_graph(), [0], -1)
    with pytest.raises(topograph.DGLError, match="give nodes as"):
        topograph.khop_out_subgraph(hg, [0], 1)
    with pytest.raises(topograph.DGLError, match=r"id 9 out of range"):
        topograph.khop_out_subgraph(sample_graph(), [9], 1)


# --- GlobalUniform and as_edge_prediction_sampler
def test_global_uniform_pairs_are_no_edges():
    torch.manual_seed(1)
    g = sample_graph()
    existing = set(edges_of(g))
    src, dst = topograph.dataloading.negative_sampler.GlobalUniform(3)(g, torch.tensor([0, 1, 2]))
    pairs = list(zip(src.tolist(), dst.tolist()))
    assert len(pairs) == 9 and len(set(pairs)) == 9 and src.dtype == g.idtype
    assert not set(pairs) & existing and all(a != b for a, b in pairs)
    dense = topograph.graph(([0, 0, 1], [1, 0, 1]), num_nodes=2)  # only (1, 0) is free: fewer pairs, as DGL's
    s, d = topograph.dataloading.negative_sampler.GlobalUniform(4)(dense, [0, 1])
    assert list(zip(s.tolist(), d.tolist())) == [(1, 0)]
    s, d = topograph.dataloading.negative_sampler.GlobalUniform(5, replace=True)(dense, [0])
    assert set(zip(s.tolist(), d.tolist())) == {(1, 0)} and s.numel() == 5
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        topograph.dataloading.negative_sampler.GlobalUniform(0)


def test_edge_prediction_sampler_batches():
    torch.manual_seed(2)
    u = torch.tensor([0, 1, 2, 3, 4, 5, 6, 7])
    v = (u + 1) % 8
    g = topograph.graph((torch.cat([u, v]), torch.cat([v, u])), num_nodes=8)  # edge e's reverse: e +- 8
    g.ndata["x"] = torch.arange(8.0)
    g.edata["label"] = torch.arange(16.0)
    reverse = torch.cat([torch.arange(8, 16), torch.arange(0, 8)])
    sampler = topograph.dataloading.as_edge_prediction_sampler(
        topograph.dataloading.MultiLayerFullNeighborSampler(2), exclude="reverse_id", reverse_eids=reverse,
        negative_sampler=topograph.dataloading.negative_sampler.Uniform(2))
    loader = topograph.dataloading.DataLoader(g, torch.arange(16), sampler, batch_size=5, shuffle=True)
    seen = []
    for input_nodes, pair, neg, blocks in loader:
        eids = pair.edata[EID]
        seen += eids.tolist()
        nid = pair.ndata[NID]
        gu, gv = g.find_edges(eids)
        pu, pv = pair.edges()
        assert nid[pu].tolist() == gu.tolist() and nid[pv].tolist() == gv.tolist()
        assert pair.edata["label"].tolist() == eids.float().tolist() and pair.ndata["x"].tolist() == nid.float().tolist()
        assert neg.num_nodes() == pair.num_nodes() and neg.num_edges() == 2 * len(eids)
        nu, _ = neg.edges()
        assert nid[nu].tolist() == gu.repeat_interleave(2).tolist()  # Uniform keeps each edge's source
        assert blocks[-1].dstdata[NID].tolist() == nid.tolist() and input_nodes.tolist() == blocks[0].srcdata[NID].tolist()
        excluded = set(eids.tolist()) | set(reverse[eids].tolist())
        for block in blocks:
            assert not excluded & set(block.edata[EID].tolist())
        # every other in-edge of the last layer's destinations is there (full neighbourhoods)
        want = sorted(e for e in range(16) if int(g.find_edges(e)[1]) in set(nid.tolist()) and e not in excluded)
        assert sorted(blocks[-1].edata[EID].tolist()) == want
    assert sorted(seen) == list(range(16))


def test_edge_prediction_sampler_errors():
    g = sample_graph()
    base = topograph.dataloading.MultiLayerFullNeighborSampler(1)
    with pytest.raises(ValueError, match="needs reverse_eids"):
        topograph.dataloading.as_edge_prediction_sampler(base, exclude="reverse_id")
    with pytest.raises(ValueError, match="exclude='reverse_types' needs reverse_etypes"):
        topograph.dataloading.as_edge_prediction_sampler(base, exclude="reverse_types")
    with pytest.raises(ValueError, match="exclude must be"):
        topograph.dataloading.as_edge_prediction_sampler(base, exclude="everything")
    sampler = topograph.dataloading.as_edge_prediction_sampler(base, exclude="self")
    with pytest.raises(topograph.DGLError, match=r"edge id 6 out of range \[0, 6\)"):
        sampler.sample(g, torch.tensor([6]))
    with pytest.raises(topograph.DGLError, match=r"the graph has relations .*: give seed edges as \{etype: ids\}"):
        sampler.sample(two_relations(), torch.tensor([0]))
    with pytest.raises(topograph.DGLError, match="edge id 9 out of range"):
        topograph.dataloading.DataLoader(g, torch.tensor([9]), sampler)
    input_nodes, pair, blocks = sampler.sample(g, [5])  # the self loop 4 -> 4, excluded from its own block
    assert pair.ndata[NID].tolist() == [4] and blocks[0].num_edges() == 0


def test_find_exclude_eids_and_spot_target():
    """find_exclude_eids by each rule; SpotTarget leaves out only seed edges at an end of in-degree below the
    threshold (and their reverses), so blocks keep the edges at well-connected nodes."""
    dl = topograph.dataloading
    u = torch.tensor([0, 0, 0, 0, 1, 2, 3, 4])  # node 0 is a hub: in-degree 4 after the reverses
    v = torch.tensor([1, 2, 3, 4, 5, 5, 5, 6])
    g = topograph.graph((torch.cat([u, v]), torch.cat([v, u])), num_nodes=7)  # edge e's reverse: e +- 8
    reverse = torch.cat([torch.arange(8, 16), torch.arange(0, 8)])
    seeds = torch.tensor([0, 7, 4])
    assert dl.find_exclude_eids(g, seeds, None) is None
    assert dl.find_exclude_eids(g, seeds, "self").tolist() == [0, 7, 4]
    assert dl.find_exclude_eids(g, seeds, "reverse_id", reverse_eids=reverse).tolist() == [0, 7, 4, 8, 15, 12]
    assert dl.find_exclude_eids(g, seeds, lambda e: e[:1]).tolist() == [0]
    assert dl.find_exclude_eids(g, seeds, torch.tensor([3])).tolist() == [3]  # fixed ids, as DGL's
    hg = two_relations()
    typed = dl.find_exclude_eids(hg, {hg.canonical_etypes[0]: torch.tensor([1])}, "reverse_types",
                                 reverse_etypes={hg.canonical_etypes[0]: hg.canonical_etypes[1]})
    assert {k: t.tolist() for k, t in typed.items()} == {hg.canonical_etypes[0]: [1], hg.canonical_etypes[1]: [1]}
    with pytest.raises(ValueError, match="needs reverse_eids"):
        dl.find_exclude_eids(g, seeds, "reverse_id")

    degrees = g.in_degrees()
    spot = dl.SpotTarget(g, exclude="reverse_id", degree_threshold=2, reverse_eids=reverse)
    src, dst = g.find_edges(torch.arange(16))
    low = [e for e in range(16) if min(int(degrees[src[e]]), int(degrees[dst[e]])) < 2]
    want = sorted(set(low) | {int(reverse[e]) for e in low})
    assert want == [7, 15]  # 4 -> 6 and its reverse: node 6 has in-degree 1, every other node 2 or more
    assert sorted(spot(torch.arange(16)).tolist()) == [7, 7, 15, 15]  # each seed and its reverse, as DGL's
    sampler = dl.as_edge_prediction_sampler(dl.MultiLayerFullNeighborSampler(1), exclude=spot)
    _, pair, blocks = sampler.sample(g, torch.arange(16))
    assert not set(want) & set(blocks[0].edata[EID].tolist())
    assert set(range(16)) - set(want) == set(blocks[0].edata[EID].tolist())  # every other edge stays
    with pytest.raises(topograph.DGLError, match="one node type and one relation"):
        dl.SpotTarget(hg, exclude="self")
    with pytest.raises(ValueError, match="exclude must be"):
        dl.SpotTarget(g, exclude="everything")


# --- as_edge_prediction_sampler on a heterograph
def test_edge_prediction_sampler_on_a_heterograph_excludes_reverse_types():
    torch.manual_seed(3)
    g = reviews_graph()
    relations = g.canonical_etypes
    reverse = {"reviews": "reviewed_by", "reviewed_by": "reviews"}
    sampler = topograph.dataloading.as_edge_prediction_sampler(
        topograph.dataloading.MultiLayerFullNeighborSampler(2), exclude="reverse_types", reverse_etypes=reverse,
        negative_sampler=topograph.dataloading.negative_sampler.Uniform(2), prefetch_labels=["stars"])
    seeds = {"reviews": torch.arange(7), "follows": torch.arange(4)}
    loader = topograph.dataloading.DataLoader(g, seeds, sampler, batch_size=4, shuffle=True)
    seen = {c: [] for c in relations}
    for input_nodes, pair, neg, blocks in loader:
        assert pair.ntypes == neg.ntypes == g.ntypes and pair.canonical_etypes == neg.canonical_etypes == relations
        nid = {t: pair.nodes[t].data[NID] for t in g.ntypes}
        excluded = {c: set() for c in relations}
        for c in relations:
            s, e, d = c
            eids = pair.edges[c].data[EID]
            seen[c] += eids.tolist()
            gu, gv = g.find_edges(eids, etype=c)
            pu, pv = pair.edges(etype=c)
            assert nid[s][pu].tolist() == gu.tolist() and nid[d][pv].tolist() == gv.tolist()  # the seeds, in order
            nu, _ = neg.edges(etype=c)
            assert neg.num_edges(c) == 2 * eids.numel() and nid[s][nu].tolist() == gu.repeat_interleave(2).tolist()
            excluded[c] |= set(eids.tolist())
            if e in reverse:  # edge i of a relation is the reverse of edge i of the other
                excluded[g.to_canonical_etype(reverse[e])] |= set(eids.tolist())
        assert pair.edges["reviews"].data["stars"].tolist() == pair.edges["reviews"].data[EID].float().tolist()
        assert pair.nodes["item"].data["h"].tolist() == (-nid["item"].float()).tolist()
        for t in g.ntypes:
            assert blocks[-1].dstnodes[t].data[NID].tolist() == nid[t].tolist()
            assert input_nodes[t].tolist() == blocks[0].srcnodes[t].data[NID].tolist()
        for block in blocks:
            for c in relations:
                assert not excluded[c] & set(block.edges[c].data[EID].tolist())
        for c in relations:  # every other in-edge of the last layer's destinations is there (full neighbourhoods)
            dst_nodes = set(nid[c[2]].tolist())
            _, v = g.edges(etype=c)
            want = sorted(e for e in range(g.num_edges(c)) if int(v[e]) in dst_nodes and e not in excluded[c])
            assert sorted(blocks[-1].edges[c].data[EID].tolist()) == want
    assert {c: sorted(ids) for c, ids in seen.items()} == {("item", "reviewed_by", "user"): [],
                                                           ("user", "follows", "user"): [0, 1, 2, 3],
                                                           ("user", "reviews", "item"): list(range(7))}


def test_edge_prediction_sampler_numbers_pair_nodes_as_compact_graphs():
    """Per node type by first appearance: relation after relation (canonical order), sources then destinations,
    the positive edges before the negative pairs (a sampler given by hand here)."""
    g = reviews_graph()

    def negatives(graph, eids):
        assert set(eids) == {("item", "reviewed_by", "user"), ("user", "reviews", "item")}  # canonical, as DGL's
        return {"follows": (torch.tensor([4]), torch.tensor([2])), "reviews": (torch.tensor([1]), torch.tensor([2]))}

    sampler = topograph.dataloading.as_edge_prediction_sampler(topograph.dataloading.MultiLayerFullNeighborSampler(1),
                                                               negative_sampler=negatives)
    _, pair, neg, _ = sampler.sample(g, {"reviews": torch.tensor([3]), "reviewed_by": torch.tensor([1])})
    # positives: reviewed_by 1 (item 0 -> user 1), reviews 3 (user 3 -> item 2); negatives: follows 4 -> 2,
    # reviews 1 -> 2: items [0, 2], users [1, 3, 4, 2]
    assert pair.nodes["item"].data[NID].tolist() == [0, 2] and pair.nodes["user"].data[NID].tolist() == [1, 3, 4, 2]
    assert edges_of(neg, "follows") == [(2, 3)] and edges_of(neg, "reviews") == [(0, 1)]
    assert neg.num_edges("reviewed_by") == 0 and edges_of(pair, "reviewed_by") == [(0, 0)]


def test_edge_prediction_sampler_reverse_ids_per_relation():
    g = reviews_graph()
    # follows' reverse ids by hand (edge i and 3 - i), reviews' own (each its own reverse, for the test)
    reverse_eids = {"follows": torch.tensor([3, 2, 1, 0]), "reviews": torch.arange(7)}
    sampler = topograph.dataloading.as_edge_prediction_sampler(
        topograph.dataloading.MultiLayerFullNeighborSampler(1), exclude="reverse_id", reverse_eids=reverse_eids)
    _, pair, blocks = sampler.sample(g, {"follows": torch.tensor([0]), "reviews": torch.tensor([5])})
    follows = set(blocks[0].edges["follows"].data[EID].tolist())
    assert not {0, 3} & follows and 5 not in blocks[0].edges["reviews"].data[EID].tolist()


def test_edge_prediction_sampler_heterograph_errors():
    g = reviews_graph()
    base = topograph.dataloading.MultiLayerFullNeighborSampler(1)
    as_sampler = topograph.dataloading.as_edge_prediction_sampler
    with pytest.raises(topograph.DGLError, match="give seed edges as"):
        as_sampler(base).sample(g, torch.tensor([0]))
    with pytest.raises(topograph.DGLError, match=r"give edge ids as \{etype: ids\}"):
        topograph.dataloading.DataLoader(g, torch.tensor([0]), as_sampler(base))
    with pytest.raises(topograph.DGLError, match=r"\('user', 'follows', 'user'\) edge id 4 out of range \[0, 4\)"):
        as_sampler(base).sample(g, {"follows": torch.tensor([4])})
    with pytest.raises(topograph.DGLError, match="name relation .* twice"):
        as_sampler(base).sample(g, {"follows": [0], ("user", "follows", "user"): [1]})
    with pytest.raises(topograph.DGLError, match=r"edge 5 of \('user', 'reviews', 'item'\) has no reverse in "
                                                 r"\('user', 'follows', 'user'\), which has 4 edges"):
        as_sampler(base, exclude="reverse_types", reverse_etypes={"reviews": "follows"}).sample(g, {"reviews": [5]})
    with pytest.raises(topograph.DGLError, match=r"reverse_eids has no entry for relation \('user', 'reviews'"):
        as_sampler(base, exclude="reverse_id", reverse_eids={"follows": torch.arange(4)}).sample(g, {"reviews": [0]})
    with pytest.raises(topograph.DGLError, match="give reverse_eids as"):
        as_sampler(base, exclude="reverse_id", reverse_eids=torch.arange(7)).sample(g, {"reviews": [0]})
    with pytest.raises(topograph.DGLError, match="must return"):
        as_sampler(base, negative_sampler=lambda graph, eids: (torch.tensor([0]), torch.tensor([0]))).sample(
            g, {"reviews": [0]})
    with pytest.raises(topograph.DGLError, match=r"negative \('user', 'reviews', 'item'\) destination id 3 out"):
        as_sampler(base, negative_sampler=lambda graph, eids: {"reviews": (torch.tensor([0]), torch.tensor([3]))}
                   ).sample(g, {"reviews": [0]})
    with pytest.raises(topograph.DGLError, match="prefetch_labels names 'label'"):
        as_sampler(base, prefetch_labels=["label"]).sample(g, {"reviews": [0]})
    with pytest.raises(topograph.DGLError, match=r"prefetch_labels names 'stars', no edge feature of follows"):
        as_sampler(base, prefetch_labels={"follows": ["stars"]}).sample(g, {"reviews": [0]})


def test_compact_graphs_and_rand_bipartite():
    """compact_graphs: DGL's node order (always_preserve, then graph by graph, relation by relation, sources then
    destinations, first appearance), features gathered, NID the old ids; held to DGL 2.1 where it imports.
    rand_bipartite: distinct pairs within the counts."""
    def cases(lib):
        g = lib.graph((torch.tensor([5, 2, 7, 2]), torch.tensor([3, 9, 5, 1])), num_nodes=12)
        g.ndata["h"], g.edata["w"] = torch.arange(12.0), torch.arange(4.0)
        g2 = lib.graph((torch.tensor([0, 10]), torch.tensor([10, 4])), num_nodes=12)
        h = lib.heterograph({("u", "r", "v"): (torch.tensor([3, 1]), torch.tensor([0, 4])),
                             ("v", "s", "u"): (torch.tensor([2]), torch.tensor([5]))}, {"u": 6, "v": 5})
        return [lib.compact_graphs(g), lib.compact_graphs(g, always_preserve=torch.tensor([11, 9])),
                *lib.compact_graphs([g, g2]), lib.compact_graphs(h)]

    def summary(g):
        return ([(t, g.nodes[t].data[topograph.NID].tolist()) for t in g.ntypes],
                [(c, [x.tolist() for x in g.edges(etype=c)]) for c in g.canonical_etypes])

    ours = cases(topograph)
    first = ours[0]
    assert first.ndata[topograph.NID].tolist() == [5, 2, 7, 3, 9, 1]
    assert first.ndata["h"].tolist() == [5, 2, 7, 3, 9, 1] and first.edata["w"].tolist() == [0, 1, 2, 3]
    assert [x.tolist() for x in first.edges()] == [[0, 1, 2, 1], [3, 4, 0, 5]]
    assert ours[1].ndata[topograph.NID][:2].tolist() == [11, 9] and ours[3].num_nodes() == 9
    with pytest.raises(topograph.DGLError, match="node 20"):
        topograph.compact_graphs(first, always_preserve=torch.tensor([20]))
    r = topograph.rand_bipartite("u", "e", "v", 5, 7, 20)
    u, v = r.edges()
    assert r.ntypes == ["u", "v"] and len(set(zip(u.tolist(), v.tolist()))) == 20 and int(v.max()) < 7
    with pytest.raises(topograph.DGLError, match="exceeds"):
        topograph.rand_bipartite("u", "e", "v", 2, 3, 7)
    try:
        import dgl
    except ImportError:
        return
    assert [summary(g) for g in ours] == [summary(g) for g in cases(dgl)]


def test_merge():
    """dgl.merge's documented example and its rules (edges concatenated with their features, node counts the
    largest, later graphs' node rows winning), against DGL 2.1 where it imports."""
    def make(lib):
        g = lib.graph((torch.tensor([0, 1]), torch.tensor([2, 3])))
        g.ndata["x"], g.edata["w"] = torch.zeros(4), torch.tensor([1.0, 2.0])
        h = lib.graph((torch.tensor([1, 2]), torch.tensor([0, 4])))
        h.ndata["x"], h.ndata["y"], h.edata["w"] = torch.ones(5), torch.arange(5.0), torch.tensor([3.0, 4.0])
        return lib.merge([g, h]), lib.merge([h, g])

    m, m2 = make(topograph)
    assert [x.tolist() for x in m.edges()] == [[0, 1, 1, 2], [2, 3, 0, 4]] and m.num_nodes() == 5
    assert m.ndata["x"].tolist() == [1.0] * 5 and m.ndata["y"].tolist() == [0, 1, 2, 3, 4]
    assert m.edata["w"].tolist() == [1.0, 2.0, 3.0, 4.0] and m2.ndata["x"].tolist() == [0, 0, 0, 0, 1]
    with pytest.raises(topograph.DGLError, match="empty"):
        topograph.merge([])
    try:
        import dgl
    except ImportError:
        return
    for ours, theirs in zip((m, m2), make(dgl)):
        assert [x.tolist() for x in ours.edges()] == [x.tolist() for x in theirs.edges()]
        for key in ("x", "y"):
            assert ours.ndata[key].tolist() == theirs.ndata[key].tolist()
        assert ours.edata["w"].tolist() == theirs.edata["w"].tolist()
