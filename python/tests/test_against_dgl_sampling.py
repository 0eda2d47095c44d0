"""sample_neighbors and NeighborSampler against DGL 2.1 in every mode (edge_dir in / out, replace, prob, mask,
exclude_edges, where the two differ as python/README.md says; skipped where dgl does not import). The draws are
each library's own, so what is compared is what both must agree on: how many edges each seed gets (fixed by the
mode), the edges themselves where the mode leaves no choice (every edge, every positive-weight edge), that only
real, positive-weight, not excluded edges come out, and, over thousands of seeds, how often each edge is drawn
(both near the exact law, and near each other)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

dgl = pytest.importorskip("dgl")

LIBS = (topograph, dgl)
NODES = 40


def weighted_graph(lib, idtype=torch.int64):
    """A random multigraph with self loops, nodes without in- or out-edges, and weights of which a third are 0
    ('w'), the same as a boolean mask ('m')."""
    gen = torch.Generator().manual_seed(7)
    src = torch.randint(0, NODES - 3, (300,), generator=gen)  # the last 3 nodes have no out-edges
    dst = torch.randint(3, NODES, (300,), generator=gen)  # the first 3 have no in-edges
    g = lib.graph((src, dst), num_nodes=NODES, idtype=idtype)
    g.edata["w"] = torch.randint(0, 3, (300,), generator=gen).float() * 1.5
    g.edata["m"] = g.edata["w"] > 0
    return g


def drawn_per_seed(f, edge_dir):
    """{seed: sorted parent edge ids} of a frontier (a seed is the destination of an in-edge, the source of an
    out-edge)."""
    u, v = f.edges()
    out = {}
    for s, e in zip((v if edge_dir == "in" else u).tolist(), f.edata[dgl.EID].tolist()):
        out.setdefault(s, []).append(e)
    return {s: sorted(e) for s, e in out.items()}


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("prob", [None, "w", "m"])
@pytest.mark.parametrize("replace", [False, True], ids=["distinct", "replace"])
@pytest.mark.parametrize("edge_dir", ["in", "out"])
def test_sample_neighbors_counts_and_edges_like_dgl(edge_dir, replace, prob, idtype):
    dgl.seed(0)
    torch.manual_seed(0)
    seeds = torch.arange(NODES, dtype=idtype)
    graphs = [weighted_graph(lib, idtype) for lib in LIBS]
    u, v = graphs[1].edges()
    weight = graphs[1].edata["w"]
    for fanout in (2, 5, -1):
        drawn = []
        for lib, g in zip(LIBS, graphs):
            f = lib.sampling.sample_neighbors(g, seeds, fanout, edge_dir=edge_dir, prob=prob, replace=replace)
            fu, fv = f.edges()
            eid = f.edata[dgl.EID].long()
            assert f.num_nodes() == NODES and f.idtype == idtype
            assert torch.equal(u[eid], fu) and torch.equal(v[eid], fv)  # real edges, in g's direction
            if prob is not None:
                assert (weight[eid] > 0).all()
            drawn.append(drawn_per_seed(f, edge_dir))
        ours, theirs = drawn
        assert {s: len(e) for s, e in ours.items()} == {s: len(e) for s, e in theirs.items()}, fanout
        for s, edges in theirs.items():  # where the mode leaves no choice, the same edges
            candidates = ((v if edge_dir == "in" else u) == s) & ((weight > 0) if prob else True)
            if fanout == -1 or not replace and fanout >= int(candidates.sum()):
                assert ours[s] == edges == candidates.nonzero().flatten().tolist()
            if not replace:
                assert len(set(ours[s])) == len(ours[s])


def fan(lib, n, edge_dir):
    """n seeds 8.., each joined to sources 0..7 (edges into the seeds for edge_dir "in", out of them for
    "out"); edge u <-> seed i has id 8 i + u and weight u."""
    sources = torch.arange(8).repeat(n)
    seeds = 8 + torch.arange(n).repeat_interleave(8)
    g = lib.graph((sources, seeds) if edge_dir == "in" else (seeds, sources), num_nodes=8 + n)
    g.edata["w"] = sources.float()
    return g


def inclusion(n, fanout, replace, weighted):
    """Expected draws of each source 0..7 over n seeds (exact law: uniform or weights u / 28; without
    replacement one after another in proportion to the weights left)."""
    p = torch.arange(8.0) / 28 if weighted else torch.full((8,), 1 / 8)
    if replace or fanout == 1:
        return n * fanout * p
    assert fanout == 2
    second = torch.tensor([sum(p[j] * p[i] / (1 - p[j]) for j in range(8) if j != i) for i in range(8)])
    return n * (p + second)


@pytest.mark.parametrize("weighted", [False, True], ids=["uniform", "weighted"])
@pytest.mark.parametrize("replace", [False, True], ids=["distinct", "replace"])
@pytest.mark.parametrize("edge_dir", ["in", "out"])
def test_draw_frequencies_like_dgl(edge_dir, replace, weighted):
    dgl.seed(1)
    torch.manual_seed(1)
    n, fanout = 4000, 2 if not replace else 3
    expected = inclusion(n, fanout, replace, weighted)
    counts = []
    for lib in LIBS:
        f = lib.sampling.sample_neighbors(fan(lib, n, edge_dir), torch.arange(8, 8 + n), fanout, edge_dir=edge_dir,
                                          prob="w" if weighted else None, replace=replace)
        neighbours = f.edges()[0 if edge_dir == "in" else 1]
        counts.append(torch.bincount(neighbours, minlength=8 + n)[:8].double())
    sd = (expected * (1 - expected / (n * fanout))).clamp(min=1).sqrt()
    for c in counts:
        assert ((c - expected).abs() <= 5 * sd).all(), (c, expected)
    assert ((counts[0] - counts[1]).abs() <= 7 * sd).all(), counts  # two samples of one law


@pytest.mark.parametrize("prob", [None, "w"])
def test_exclude_edges_against_dgl(prob):
    """Neither library returns an excluded edge, and with every edge asked for both return the same. Below that,
    Topograph removes them before the draw (min(fanout, edges left) per seed) where DGL 2.1 draws first and
    drops them after (fewer, never more: python/README.md)."""
    dgl.seed(2)
    torch.manual_seed(2)
    excluded = torch.arange(0, 300, 3)
    g = weighted_graph(dgl)
    u, v = g.edges()
    kept = torch.ones(300, dtype=torch.bool)
    kept[excluded] = False
    if prob:
        kept &= g.edata["w"] > 0
    for fanout in (2, -1):
        drawn = []
        for lib in LIBS:
            f = lib.sampling.sample_neighbors(weighted_graph(lib), torch.arange(NODES), fanout, prob=prob,
                                              exclude_edges=excluded)
            drawn.append(drawn_per_seed(f, "in"))
            assert not set(excluded.tolist()) & set(f.edata[dgl.EID].tolist())
        ours, theirs = drawn
        if fanout == -1:
            assert ours == theirs
        for s in range(NODES):
            left = int(((v == s) & kept).sum())
            assert len(ours.get(s, [])) == (left if fanout == -1 else min(fanout, left))
            assert len(theirs.get(s, [])) <= len(ours.get(s, []))


def typed(lib):
    g = lib.heterograph({("u", "f", "u"): (torch.tensor([0, 1, 2, 3, 3, 1]), torch.tensor([1, 2, 0, 0, 1, 0])),
                         ("i", "b", "u"): (torch.tensor([0, 1, 1, 2, 2, 2]), torch.tensor([2, 2, 0, 1, 0, 3]))},
                        num_nodes_dict={"u": 4, "i": 3})
    g.edges["f"].data["w"] = torch.tensor([1.0, 0.0, 2.0, 1.0, 0.0, 3.0])  # b has none: drawn uniformly
    return g


@pytest.mark.parametrize("edge_dir", ["in", "out"])
@pytest.mark.parametrize("replace", [False, True], ids=["distinct", "replace"])
def test_heterograph_fanout_dicts_and_partial_prob_like_dgl(edge_dir, replace):
    dgl.seed(3)
    torch.manual_seed(3)
    nodes = {"u": torch.arange(4), "i": torch.arange(3)}
    per_relation = []
    for lib in LIBS:
        g = typed(lib)
        f = lib.sampling.sample_neighbors(g, nodes, {"f": 2, "b": 1}, edge_dir=edge_dir, prob="w", replace=replace)
        counts = {}
        for c in g.canonical_etypes:
            u, v = f.edges(etype=c)
            seeds = v if edge_dir == "in" else u
            counts[c] = torch.bincount(seeds.long(), minlength=g.num_nodes(c[2 if edge_dir == "in" else 0])).tolist()
            if c[1] == "f":
                assert (g.edges["f"].data["w"][f.edges["f"].data[dgl.EID].long()] > 0).all()
        per_relation.append(counts)
    assert per_relation[0] == per_relation[1]


@pytest.mark.parametrize("options", [dict(replace=True), dict(prob="w"), dict(mask="m"),
                                     dict(prob="w", replace=True)], ids=["replace", "prob", "mask", "prob_replace"])
def test_neighbor_sampler_options_like_dgl(options):
    """The seeds' block: each seed's sampled in-edges count as DGL's; every block holds only positive-weight
    edges, each destination's edges as many as the mode gives it (checked in both libraries)."""
    dgl.seed(4)
    torch.manual_seed(4)
    seeds = torch.arange(3, 23)
    last = []
    for lib in LIBS:
        g = weighted_graph(lib)
        u, v = g.edges()
        weight = g.edata["w"] if "prob" in options or "mask" in options else torch.ones(300)
        _, _, blocks = lib.dataloading.NeighborSampler([3, 2], **options).sample_blocks(g, seeds)
        for block, fanout in zip(blocks, [3, 2]):
            eid = block.edata[dgl.EID].long()
            assert (weight[eid] > 0).all()
            dst = block.dstdata[dgl.NID].long()
            candidates = torch.tensor([int(((v == d) & (weight > 0)).sum()) for d in dst.tolist()])
            expect = torch.where(candidates > 0, fanout, 0) if options.get("replace") else candidates.clamp(max=fanout)
            assert torch.equal(block.in_degrees().long(), expect)
            bu, bv = block.edges()
            assert torch.equal(u[eid], block.srcdata[dgl.NID][bu.long()]) and torch.equal(v[eid], dst[bv.long()])
        last.append(blocks[-1].in_degrees().tolist())
    assert last[0] == last[1]
