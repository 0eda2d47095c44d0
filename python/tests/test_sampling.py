"""Neighbour sampling and neighbour-sampled mini-batches, as dgl.sampling / dgl.dataloading: each seed keeps
min(fanout, in-degree) distinct in-edges of the graph (fanout draws with replace, its out-edges by edge_dir="out",
only positive-weight edges in proportion with prob, never exclude_edges; errors naming the argument); the draws
follow torch's generator (or `seed`); blocks per layer chain (a layer's sources are the next one's
destinations), carry features and the graph's edge ids; a 2-layer GraphSAGE-style mean over the blocks equals
the same mean over the sampled edges. And
global_uniform_negative_sampling: pairs that are no edge (nor self loop), distinct and sorted as DGL's, uniform
over the free pairs, GlobalUniform drawing through it."""
import pytest
import torch

import topograph
import topograph.function as fn
from topograph.dataloading import DataLoader, MultiLayerFullNeighborSampler, MultiLayerNeighborSampler, NeighborSampler
from topograph.sampling import sample_neighbors

NID, EID = topograph.NID, topograph.EID


def ring_with_chords(n=30):
    src = list(range(n)) + [(i * 7) % n for i in range(n)] + [0] * 5
    dst = [(i + 1) % n for i in range(n)] + [(i * 3 + 1) % n for i in range(n)] + [5] * 5  # node 5: in-degree 7+
    g = topograph.graph((torch.tensor(src), torch.tensor(dst)), num_nodes=n)
    g.ndata["x"] = torch.randn(n, 4)
    g.edata["w"] = torch.arange(float(len(src))).unsqueeze(1)
    return g


def test_sample_neighbors_fanout_edges_and_features():
    g = ring_with_chords()
    u, v = g.all_edges()
    seeds = torch.tensor([5, 1, 12])
    f = sample_neighbors(g, seeds, 3, seed=1)
    assert f.num_nodes() == g.num_nodes() and torch.equal(f.ndata["x"], g.ndata["x"])
    fu, fv = f.all_edges()
    eid = f.edata[EID]
    assert torch.equal(u[eid], fu) and torch.equal(v[eid], fv)      # real edges, with their ids in g
    assert torch.equal(f.edata["w"].flatten(), eid.float())            # their features
    degrees = g.in_degrees(seeds)
    for s, d in zip(seeds.tolist(), degrees.tolist()):
        picked = eid[fv == s]
        assert picked.numel() == min(3, d) and picked.unique().numel() == picked.numel()
    everything = sample_neighbors(g, seeds, -1)
    assert everything.num_edges() == int(degrees.sum())
    torch.manual_seed(4)
    a = sample_neighbors(g, torch.arange(30), 2).edata[EID]
    torch.manual_seed(4)
    assert torch.equal(sample_neighbors(g, torch.arange(30), 2).edata[EID], a)  # torch's generator decides


def test_sampled_blocks_chain_and_a_two_layer_mean_matches_the_sampled_edges():
    g = ring_with_chords()
    sampler = MultiLayerNeighborSampler([2, 3])
    torch.manual_seed(0)
    seeds = torch.tensor([5, 9])
    input_nodes, output_nodes, blocks = sampler.sample(g, seeds)
    assert torch.equal(output_nodes, seeds) and len(blocks) == 2
    assert torch.equal(blocks[1].dstdata[NID], seeds)
    assert torch.equal(blocks[0].dstdata[NID], blocks[1].srcdata[NID])   # layer l's sources feed layer l+1
    assert torch.equal(blocks[0].srcdata[NID], input_nodes)
    n_dst = blocks[0].num_dst_nodes()
    assert torch.equal(blocks[0].srcdata[NID][:n_dst], blocks[0].dstdata[NID])  # destinations lead the sources
    torch.testing.assert_close(blocks[0].srcdata["x"], g.ndata["x"][input_nodes])
    u, v = g.all_edges()
    for block, fanout in zip(blocks, [2, 3]):
        bu, bv = block.all_edges()
        eid = block.edata[EID]
        assert torch.equal(u[eid], block.srcdata[NID][bu]) and torch.equal(v[eid], block.dstdata[NID][bv])
        assert (block.in_degrees() <= fanout).all()
    # message passing through the blocks = a mean over the sampled in-edges, written out
    h = blocks[0].srcdata["x"]
    for block in blocks:
        with block.local_scope():
            block.srcdata["h"] = h
            block.update_all(fn.copy_u("h", "m"), fn.mean("m", "h"))
            h = block.dstdata["h"]
    x = g.ndata["x"]
    first = {int(d): x[u[blocks[0].edata[EID][blocks[0].all_edges()[1] == i]]].mean(0)
             if (blocks[0].all_edges()[1] == i).any() else torch.zeros(4)
             for i, d in enumerate(blocks[0].dstdata[NID])}
    b1u, b1v = blocks[1].all_edges()
    for i, s in enumerate(seeds.tolist()):
        srcs = blocks[1].srcdata[NID][b1u[b1v == i]].tolist()
        expect = torch.stack([first[j] for j in srcs]).mean(0) if srcs else torch.zeros(4)
        torch.testing.assert_close(h[i], expect)


def test_dataloader_batches_cover_the_seeds_once():
    g = ring_with_chords()
    loader = DataLoader(g, torch.arange(30), MultiLayerNeighborSampler([2]), batch_size=8, shuffle=True)
    assert len(loader) == 4
    seen = torch.cat([out for _, out, _ in loader])
    assert sorted(seen.tolist()) == list(range(30))
    assert len(DataLoader(g, torch.arange(30), MultiLayerNeighborSampler([2]), batch_size=8, drop_last=True)) == 3
    h = topograph.heterograph({("u", "f", "u"): ([0, 1, 2], [1, 2, 0]), ("i", "b", "u"): ([0, 1], [2, 2])})
    loader = DataLoader(h, {"u": torch.arange(3)}, MultiLayerNeighborSampler([{"f": 1, "b": -1}]), batch_size=2)
    batches = list(loader)
    assert [sorted(out["u"].tolist()) for _, out, _ in batches] == [[0, 1], [2]]
    assert batches[1][2][0].num_edges(("i", "b", "u")) == 2  # fanout -1 on b: both items into user 2


def test_sampling_errors():
    g = ring_with_chords()
    with pytest.raises(ValueError, match="repeated"):
        sample_neighbors(g, torch.tensor([1, 1]), 2)
    with pytest.raises(ValueError, match="outside"):
        sample_neighbors(g, torch.tensor([30]), 2)
    with pytest.raises(ValueError, match=">= -1"):
        sample_neighbors(g, torch.tensor([1]), -2)
    with pytest.raises(TypeError, match="must be an int"):
        sample_neighbors(g, torch.tensor([1]), 2.5)
    with pytest.raises(topograph.DGLError, match="edge_dir must be 'in' or 'out', got 'both'"):
        sample_neighbors(g, torch.tensor([1]), 2, edge_dir="both")
    h = topograph.heterograph({("u", "f", "u"): ([0], [1]), ("i", "b", "u"): ([0], [1])})
    with pytest.raises(ValueError, match="names no value"):
        sample_neighbors(h, {"u": [1]}, {"f": 1})
    with pytest.raises(ValueError, match="at least one layer"):
        MultiLayerNeighborSampler([])


# --- sample_neighbors' and NeighborSampler's options: replace, edge_dir="out", prob, exclude_edges


def fan(n, weights=None):
    """Sources 0..7 into each of n destinations 8..: edge u -> 8 + i has id 8 i + u, weight u (w: 'w')."""
    src = torch.arange(8).repeat(n)
    dst = 8 + torch.arange(n).repeat_interleave(8)
    g = topograph.graph((src, dst), num_nodes=8 + n)
    g.edata["w"] = src.float() if weights is None else weights
    return g


def per_seed(f, by_source=False):
    """{seed: sorted edge ids drawn}: the seed is each edge's destination (its source with by_source)."""
    u, v = f.all_edges()
    out = {}
    for s, e in zip((u if by_source else v).tolist(), f.edata[EID].tolist()):
        out.setdefault(s, []).append(e)
    return {s: sorted(e) for s, e in out.items()}


def test_sample_neighbors_with_replacement_draws_fanout_from_any_non_empty_row():
    g = ring_with_chords()
    u, v = g.all_edges()
    seeds = torch.arange(30)
    f = sample_neighbors(g, seeds, 9, replace=True, seed=3)
    fu, fv = f.all_edges()
    eid = f.edata[EID]
    assert torch.equal(u[eid], fu) and torch.equal(v[eid], fv)
    drawn = per_seed(f)
    degrees = g.in_degrees(seeds)
    assert all(len(drawn.get(s, [])) == (9 if d > 0 else 0) for s, d in zip(seeds.tolist(), degrees.tolist()))
    assert any(len(set(e)) < len(e) for e in drawn.values())  # in-degree 2 or 3 < 9: repeats
    assert sample_neighbors(g, seeds, -1, replace=True).num_edges() == g.num_edges()  # -1: every edge once
    torch.manual_seed(8)
    a = sample_neighbors(g, seeds, 2, replace=True).edata[EID]
    torch.manual_seed(8)
    assert torch.equal(sample_neighbors(g, seeds, 2, replace=True).edata[EID], a)
    drawn = sample_neighbors(fan(3000), torch.arange(8, 3008), 4, replace=True, seed=4)
    counts = torch.bincount(drawn.all_edges()[0], minlength=8)
    assert (counts - 1500).abs().max() < 200, counts  # uniform over the 8 sources: 1500 each, sd ~36


def test_sample_neighbors_by_out_edges_keeps_their_direction():
    g = ring_with_chords()
    u, v = g.all_edges()
    seeds = torch.tensor([0, 7, 14])
    f = g.sample_neighbors(seeds, 2, edge_dir="out", seed=1)  # also DGL's method form
    fu, fv = f.all_edges()
    assert torch.equal(u[f.edata[EID]], fu) and torch.equal(v[f.edata[EID]], fv)
    drawn = per_seed(f, by_source=True)
    for s, d in zip(seeds.tolist(), g.out_degrees(seeds).tolist()):
        assert len(drawn[s]) == min(2, d) and len(set(drawn[s])) == len(drawn[s])
    assert set(fu.tolist()) == set(seeds.tolist())
    h = topograph.heterograph({("u", "f", "u"): ([0, 1, 2], [1, 2, 0]), ("i", "b", "u"): ([0, 1, 1], [2, 2, 0])})
    f = sample_neighbors(h, {"i": [1]}, -1, edge_dir="out")
    assert f.num_edges("f") == 0 and sorted(f.edges["b"].data[EID].tolist()) == [1, 2]


def test_sample_neighbors_by_prob_never_draws_a_zero_weight_and_follows_the_weights():
    g = fan(4000)
    seeds = torch.arange(8, 4008)
    for replace in (False, True):
        src = sample_neighbors(g, seeds, 1, prob="w", replace=replace, seed=5).all_edges()[0]
        counts = torch.bincount(src, minlength=8).double()
        expected = 4000 * torch.arange(8.0) / 28  # u / 28 of the draws
        assert counts[0] == 0 and (counts - expected).abs().max() < 5 * (expected.max() ** 0.5), counts
    for fanout in (7, 10, -1):  # at or above the 7 positive edges: exactly those
        f = sample_neighbors(g, torch.tensor([8, 9]), fanout, prob="w")
        assert per_seed(f) == {8: list(range(1, 8)), 9: list(range(9, 16))}
    f = sample_neighbors(g, torch.tensor([8]), 20, prob="w", replace=True)
    assert f.num_edges() == 20 and 0 not in f.all_edges()[0].tolist()
    # [E, 1], float64 and boolean masks read the same way; a row of zero weights draws nothing
    mask = torch.zeros(8 * 4000, dtype=torch.bool)
    mask[8:16] = True  # node 9's edges only
    for name, value in [("m", mask), ("m1", mask.double().unsqueeze(1))]:
        g.edata[name] = value
        assert per_seed(sample_neighbors(g, torch.tensor([8, 9]), 3, prob=name, replace=True)).keys() == {9}


def test_prob_on_some_relations_draws_the_others_uniformly():
    h = topograph.heterograph({("u", "f", "u"): ([0, 1, 2], [1, 2, 0]), ("i", "b", "u"): ([0, 1, 1], [2, 2, 0])})
    h.edges["f"].data["w"] = torch.tensor([1.0, 0.0, 1.0])  # f's edge 1 -> 2 never; b has no weights
    f = sample_neighbors(h, {"u": [0, 1, 2]}, 5, prob="w")
    assert sorted(f.edges["f"].data[EID].tolist()) == [0, 2] and f.num_edges("b") == 3


def test_sample_neighbors_exclude_edges_are_never_drawn():
    g = ring_with_chords()
    u, v = g.all_edges()
    into_5 = (v == 5).nonzero().flatten()
    excluded = into_5[:4]
    f = sample_neighbors(g, torch.tensor([5, 6]), -1, exclude_edges=excluded)
    eid = f.edata[EID]
    assert not set(excluded.tolist()) & set(eid.tolist())
    assert sorted(eid[f.all_edges()[1] == 5].tolist()) == sorted(into_5[4:].tolist())
    assert torch.equal(f.edata["w"].flatten(), eid.float()) and torch.equal(u[eid], f.all_edges()[0])
    w = g.edata["w"].clone()
    f = sample_neighbors(g, torch.tensor([5]), 2, prob="w", exclude_edges=excluded)  # weights follow the kept edges
    assert f.num_edges() == 2 and not set(excluded.tolist()) & set(f.edata[EID].tolist())
    assert torch.equal(g.edata["w"], w)  # the excluded edges' zero weights are a copy's
    kept = into_5[4:]
    for replace in (False, True):  # min(fanout, edges left) distinct, or fanout draws among them; none when none left
        for _ in range(5):
            f = sample_neighbors(g, torch.tensor([5]), len(kept) + 2, replace=replace, exclude_edges=excluded)
            eid = f.edata[EID]
            assert set(eid.tolist()) <= set(kept.tolist())
            assert len(eid) == (len(kept) + 2 if replace else len(kept)) and (replace or len(set(eid.tolist())) == len(kept))
        f = sample_neighbors(g, torch.tensor([5]), 3, replace=replace, exclude_edges=into_5)
        assert f.num_edges() == 0
    seen = torch.zeros(g.num_edges())  # each edge left equally likely: 1,200 draws of one among them
    torch.manual_seed(0)
    for _ in range(1200):
        seen[sample_neighbors(g, torch.tensor([5]), 1, exclude_edges=excluded).edata[EID]] += 1
    assert seen[excluded].sum() == 0 and seen[kept].min() > 1200 / len(kept) * 0.6
    h = topograph.heterograph({("u", "f", "u"): ([0, 1, 2], [1, 2, 0]), ("i", "b", "u"): ([0, 1, 1], [2, 2, 0])})
    f = sample_neighbors(h, {"u": [0, 1, 2]}, -1, exclude_edges={"b": [1]})
    assert sorted(f.edges["b"].data[EID].tolist()) == [0, 2] and f.num_edges("f") == 3


def test_sampling_option_errors_name_the_argument():
    g = ring_with_chords()
    seeds = torch.tensor([5])
    with pytest.raises(topograph.DGLError, match="prob names the edge feature 'p', which no relation"):
        sample_neighbors(g, seeds, 2, prob="p")
    with pytest.raises(TypeError, match="prob must name an edge feature"):
        sample_neighbors(g, seeds, 2, prob=g.edata["w"])
    g.edata["wide"] = torch.ones(g.num_edges(), 2)
    with pytest.raises(topograph.DGLError, match=r"prob feature 'wide' .* one value per edge .* got shape \[65, 2\]"):
        sample_neighbors(g, seeds, 2, prob="wide")
    g.edata["count"] = torch.ones(g.num_edges(), dtype=torch.int64)
    with pytest.raises(TypeError, match="prob feature 'count' .* got torch.int64"):
        sample_neighbors(g, seeds, 2, prob="count")
    g.edata["negative"] = g.edata["w"].clone()
    last_into_5 = int((g.all_edges()[1] == 5).nonzero().max())
    g.edata["negative"][last_into_5] = -1.0
    with pytest.raises(ValueError, match=f"prob of relation .* has weight -1 at edge {last_into_5}"):
        sample_neighbors(g, seeds, 2, prob="negative")
    with pytest.raises(ValueError, match="prob of relation .* weight nan"):
        g.edata["nan"] = torch.full((g.num_edges(),), float("nan"))
        MultiLayerNeighborSampler([2], prob="nan").sample(g, seeds)
    with pytest.raises(topograph.DGLError, match="edge_dir must be 'in' or 'out', got 'up'"):
        MultiLayerNeighborSampler([2], edge_dir="up")
    with pytest.raises(ValueError, match="mutually exclusive"):
        NeighborSampler([2], prob="w", mask="m")


def test_neighbor_sampler_options_in_blocks():
    g = ring_with_chords()
    u, v = g.all_edges()
    seeds = torch.tensor([5, 9])
    torch.manual_seed(2)
    _, _, blocks = NeighborSampler([3, 4], edge_dir="out").sample(g, seeds)
    for block, fanout in zip(blocks, [3, 4]):  # drawn out-edges, turned round: neighbour -> seed
        bu, bv = block.all_edges()
        eid = block.edata[EID]
        assert torch.equal(u[eid], block.dstdata[NID][bv]) and torch.equal(v[eid], block.srcdata[NID][bu])
        assert torch.equal(block.in_degrees(), torch.minimum(g.out_degrees(block.dstdata[NID]),
                                                             torch.tensor(fanout)))
    with blocks[1].local_scope():  # messages reach the seeds through them
        blocks[1].srcdata["h"] = blocks[1].srcdata["x"]
        blocks[1].update_all(fn.copy_u("h", "m"), fn.sum("m", "h"))
        assert blocks[1].dstdata["h"].shape == (2, 4)
    g.edata["p"] = (u % 2 == 0).float()  # only edges from even sources
    for replace in (False, True):
        _, _, blocks = NeighborSampler([2, 3], prob="p", replace=replace).sample(g, seeds)
        for block in blocks:
            assert (u[block.edata[EID]] % 2 == 0).all()
    _, _, blocks = NeighborSampler([5], replace=True).sample(g, seeds)
    assert torch.equal(blocks[0].in_degrees(), torch.full((2,), 5))  # fanout draws, with repeats
    excluded = (v == 5).nonzero().flatten()
    _, _, blocks = NeighborSampler([-1], mask="p").sample(g, seeds, exclude_eids=excluded)
    eid = blocks[0].edata[EID]
    assert not set(excluded.tolist()) & set(eid.tolist())
    assert sorted(eid.tolist()) == sorted(((v == 9) & (u % 2 == 0)).nonzero().flatten().tolist())
    assert len(list(DataLoader(g, torch.arange(30), MultiLayerFullNeighborSampler(2, edge_dir="out"),
                               batch_size=16))) == 2


# --- global_uniform_negative_sampling (and GlobalUniform, which draws through it)
global_uniform_negative_sampling = topograph.sampling.global_uniform_negative_sampling


def as_pairs(src, dst):
    return list(zip(src.tolist(), dst.tolist()))


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_global_uniform_negative_pairs_are_distinct_sorted_non_edges(idtype):
    torch.manual_seed(0)
    g = ring_with_chords().astype(idtype)
    existing = set(as_pairs(*g.edges()))
    src, dst = global_uniform_negative_sampling(g, 200)
    pairs = as_pairs(src, dst)
    # 200 of the 811 free pairs: the draws repeat some, dropped as DGL drops them, so a few under 200
    assert src.dtype == dst.dtype == idtype and 190 <= len(pairs) <= 200
    assert not set(pairs) & existing and all(u != v for u, v in pairs)
    assert pairs == sorted(set(pairs), key=lambda p: (p[1], p[0]))  # distinct, by (destination, source), as DGL's
    torch.manual_seed(1)
    with_loops = as_pairs(*g.global_uniform_negative_sampling(400, exclude_self_loops=False))
    assert any(u == v for u, v in with_loops) and not set(with_loops) & existing
    torch.manual_seed(2)
    drawn = as_pairs(*g.global_uniform_negative_sampling(2000, replace=True))
    assert len(drawn) == 2000 and len(set(drawn)) < 2000 and not set(drawn) & existing
    assert drawn != sorted(drawn, key=lambda p: (p[1], p[0]))  # in draw order


def test_global_uniform_negative_pairs_are_uniform_over_the_free_pairs():
    torch.manual_seed(3)
    g = topograph.graph(([0, 1, 2, 2], [1, 2, 0, 3]), num_nodes=4)
    free = {(u, v) for u in range(4) for v in range(4) if u != v} - set(as_pairs(*g.edges()))  # 8 pairs
    drawn = as_pairs(*global_uniform_negative_sampling(g, 16000, replace=True))
    counts = {p: drawn.count(p) for p in free}
    assert set(drawn) == free and len(drawn) == 16000
    assert all(abs(c - 2000) < 200 for c in counts.values()), counts  # 2000 each; sd ~42


def test_global_uniform_negative_sampling_on_dense_graphs_and_relations():
    torch.manual_seed(4)
    complete = topograph.graph((torch.arange(3).repeat_interleave(3), torch.arange(3).repeat(3)))
    src, dst = global_uniform_negative_sampling(complete, 5, exclude_self_loops=False)
    assert src.numel() == dst.numel() == 0 and src.dtype == complete.idtype
    one_free = topograph.graph(([0, 0, 1], [1, 0, 1]), num_nodes=2)  # only (1, 0) is no edge and no loop
    assert as_pairs(*global_uniform_negative_sampling(one_free, 4)) == [(1, 0)]
    assert set(as_pairs(*global_uniform_negative_sampling(one_free, 5, replace=True))) == {(1, 0)}
    hg = topograph.heterograph({("a", "x", "b"): ([0, 0], [1, 2]), ("b", "y", "b"): ([0], [1])}, {"a": 2, "b": 4})
    pairs = as_pairs(*hg.global_uniform_negative_sampling(10, etype="x"))  # two types: (0, 0) is no self loop
    assert pairs == [(0, 0), (1, 0), (1, 1), (1, 2), (0, 3), (1, 3)]  # every free pair, by (destination, source)
    assert as_pairs(*global_uniform_negative_sampling(complete, 0)) == []
    # redundancy: more slots than DGL's bound find more of the 90 free pairs of an edgeless graph of 10 nodes
    empty = topograph.graph(([], []), num_nodes=10)
    few = global_uniform_negative_sampling(empty, 60, redundancy=0.0)[0].numel()
    many = global_uniform_negative_sampling(empty, 60, redundancy=10.0)[0].numel()
    assert few < 60 and many == 60


def test_global_uniform_sampler_draws_through_the_function():
    g = ring_with_chords()
    torch.manual_seed(5)
    by_sampler = topograph.dataloading.negative_sampler.GlobalUniform(4, replace=True)(g, torch.tensor([3, 1, 7]))
    torch.manual_seed(5)
    by_function = global_uniform_negative_sampling(g, 12, replace=True)
    assert as_pairs(*by_sampler) == as_pairs(*by_function)


def test_global_uniform_negative_sampling_errors():
    g = ring_with_chords()
    hg = topograph.heterograph({("a", "x", "b"): ([0], [1]), ("b", "y", "b"): ([0], [1])})
    with pytest.raises(topograph.DGLError, match="the graph has 2 relations"):
        global_uniform_negative_sampling(hg, 3)
    with pytest.raises(topograph.DGLError, match="num_samples must be an int >= 0, got -1"):
        global_uniform_negative_sampling(g, -1)
    with pytest.raises(topograph.DGLError, match="num_samples must be an int >= 0, got 2.5"):
        g.global_uniform_negative_sampling(2.5)
    with pytest.raises(topograph.DGLError, match="redundancy must be None or a number >= 0, got -0.5"):
        global_uniform_negative_sampling(g, 3, redundancy=-0.5)
    with pytest.raises(ValueError, match="not defined for a block"):
        global_uniform_negative_sampling(topograph.to_block(g), 3)


def test_select_topk_and_pinsage_samplers():
    """select_topk against a per-node sort (ties by edge id) and DGL 2.1; the PinSAGE samplers on walks that
    leave no choice (a cycle), and on a user-item graph (neighbours share a user, at most num_neighbors each)."""
    gen = torch.Generator().manual_seed(0)
    u, v = torch.randint(0, 8, (40,), generator=gen), torch.randint(0, 8, (40,), generator=gen)
    w = torch.randint(0, 4, (40,), generator=gen).float()
    g = topograph.graph((u, v), num_nodes=8)
    g.edata["w"] = w
    picked = topograph.sampling.select_topk(g, 2, "w")
    want = []
    for node in range(8):
        ids = [e for e in range(40) if int(v[e]) == node]
        want += sorted(ids, key=lambda e: (-float(w[e]), e))[:2]
    assert sorted(picked.edata[topograph.EID].tolist()) == sorted(want) and picked.num_nodes() == 8
    with pytest.raises(topograph.DGLError, match="no edge weight"):
        topograph.sampling.select_topk(g, 2, "x")
    ring = topograph.graph((torch.arange(6), (torch.arange(6) + 1) % 6))
    sampler = topograph.sampling.RandomWalkNeighborSampler(ring, num_traversals=3, termination_prob=0.0,
                                                           num_random_walks=4, num_neighbors=2)
    nb = sampler(torch.tensor([0, 4]))
    src, dst = nb.edges()
    assert sorted(zip(dst.tolist(), src.tolist())) == [(0, 1), (0, 2), (4, 0), (4, 1)]  # 4 reaches 5, 0, 1: ties by id
    assert nb.edata["weights"].tolist() == [4, 4, 4, 4]
    users, items = torch.tensor([0, 0, 1, 1, 2, 2, 3]), torch.tensor([0, 1, 1, 2, 3, 4, 4])
    h = topograph.heterograph({("user", "buys", "item"): (users, items), ("item", "bought-by", "user"): (items, users)})
    pins = topograph.sampling.PinSAGESampler(h, "item", "user", num_traversals=2, termination_prob=0.3,
                                            num_random_walks=10, num_neighbors=2)
    nb = pins(torch.arange(5))
    share = {(a, b) for a, x in zip(items.tolist(), users.tolist()) for b, y in zip(items.tolist(), users.tolist())
             if x == y}
    reach = set(share) | {(a, c) for a, b in share for b2, c in share if b == b2}  # within two traversals
    src, dst = nb.edges()
    assert all((d, s) in reach for s, d in zip(src.tolist(), dst.tolist()))
    assert bool((torch.bincount(dst, minlength=5) <= 2).all()) and int(nb.edata["weights"].min()) >= 1
    try:
        import dgl
    except ImportError:
        return
    gd = dgl.graph((u, v), num_nodes=8)
    gd.edata["w"] = w
    for kwargs in ({}, {"edge_dir": "out"}, {"ascending": True}, {"nodes": torch.tensor([1, 3])}):
        assert sorted(topograph.sampling.select_topk(g, 2, "w", **kwargs).edata[topograph.EID].tolist()) == \
            sorted(dgl.sampling.select_topk(gd, 2, "w", **kwargs).edata[dgl.EID].tolist())
