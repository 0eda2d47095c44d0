"""DGL's relation slices g[s, e, d] with ':' (topograph/_slice.py): several relations merged into one, against
Python loops over the relations (nodes type after type, edges relation after relation, NTYPE / NID / ETYPE / EID
and their dtypes, the features every type holds), one relation matched as the shared view, and the errors.
tests/test_against_dgl_hetero.py holds the same slices to DGL 2.1."""
import pytest
import torch

import topograph
import topograph.function as fn

ANY = slice(None)
# two relations named AB2 (from A1 and from A2), two from B to B, C a type of no relation
RELATIONS = {("A1", "AB1", "B"): ([0, 1, 2], [1, 2, 3]), ("A1", "AB2", "B"): ([1, 2, 3], [3, 4, 5]),
             ("A2", "AB2", "B"): ([1, 3, 5], [2, 4, 6]), ("B", "BA", "A1"): ([0, 6], [3, 0]),
             ("B", "BB", "B"): ([0, 1], [1, 2]), ("B", "BB2", "B"): ([5], [5])}
COUNTS = {"A1": 4, "A2": 6, "B": 7, "C": 2}


def typed(lib=topograph, idtype=torch.int64):
    """RELATIONS with features: x on every type with relations (A2's 10 + id, B's 100 + id), 'only_a1' on A1
    alone, w on every relation (1000 * (relation index + 1) + id), 'only_ab1' on AB1 alone. Built by `lib`."""
    g = lib.heterograph({k: (torch.tensor(u, dtype=idtype), torch.tensor(v, dtype=idtype))
                         for k, (u, v) in RELATIONS.items()}, COUNTS, idtype=idtype)
    for t, base in (("A1", 0.0), ("A2", 10.0), ("B", 100.0)):
        g.nodes[t].data["x"] = (base + torch.arange(float(g.num_nodes(t)))).view(-1, 1).requires_grad_()
    g.nodes["A1"].data["only_a1"] = torch.ones(4)
    for r, c in enumerate(g.canonical_etypes):
        g.edges[c].data["w"] = 1000.0 * (r + 1) + torch.arange(float(g.num_edges(c)))
    g.edges[("A1", "AB1", "B")].data["only_ab1"] = torch.ones(3)
    return g


def expected_merge(g, key):
    """The merged relation of the relations matching key, by loops: (source types, destination types, edge type
    name, [(src, dst, relation index, id within it)] in order, source / destination (type index, id) rows)."""
    matched = [r for r, c in enumerate(g.canonical_etypes)
               if all(k == ANY or k == name for k, name in zip(key, c))]
    src_types = sorted({g.canonical_etypes[r][0] for r in matched}, key=g.ntypes.index)
    dst_types = sorted({g.canonical_etypes[r][2] for r in matched}, key=g.ntypes.index)

    def rows(types):
        return [(g.ntypes.index(t), i) for t in types for i in range(g.num_nodes(t))]

    src_rows, dst_rows = rows(src_types), rows(dst_types)
    edges = []
    for r in matched:
        s, _, d = g.canonical_etypes[r]
        u, v = g.edges(etype=g.canonical_etypes[r])
        for i, (a, b) in enumerate(zip(u.tolist(), v.tolist())):
            edges.append((src_rows.index((g.ntypes.index(s), a)), dst_rows.index((g.ntypes.index(d), b)), r, i))
    etype = "+".join(sorted(g.canonical_etypes[r][1] for r in matched))
    return src_types, dst_types, etype, edges, src_rows, dst_rows


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
@pytest.mark.parametrize("key", [("A1", ANY, "B"), (ANY, "AB2", ANY), "AB2", ("B", ANY, "B"), (ANY, ANY, ANY),
                                 (ANY, ANY, "B")], ids=["A1_any_B", "any_AB2_any", "AB2", "B_any_B", "any", "any_B"])
def test_merged_relations_as_dgl_numbers_them(key, idtype):
    g = typed(idtype=idtype)
    merged = g[key]
    triple = key if isinstance(key, tuple) else (ANY, key, ANY)
    src_types, dst_types, etype, edges, src_rows, dst_rows = expected_merge(g, triple)
    src_name, dst_name = "+".join(sorted(src_types)), "+".join(sorted(dst_types))
    if src_types == dst_types:  # one node type: a homogeneous graph
        assert merged.ntypes == [src_name] and merged.is_homogeneous
    else:  # a uni-bipartite graph, the source type first
        assert merged.ntypes == [src_name, dst_name]
        assert merged.srctypes == [src_name] and merged.dsttypes == [dst_name]
    assert merged.canonical_etypes == [(src_name, etype, dst_name)] and merged.idtype == idtype
    assert merged.num_src_nodes() == len(src_rows) and merged.num_dst_nodes() == len(dst_rows)
    u, v = merged.edges()
    assert u.dtype == v.dtype == idtype
    assert list(zip(u.tolist(), v.tolist())) == [(a, b) for a, b, _, _ in edges]
    for data, rows in ((merged.srcdata, src_rows), (merged.dstdata, dst_rows)):
        assert data[topograph.NTYPE].dtype == data[topograph.NID].dtype == torch.int64
        assert list(zip(data[topograph.NTYPE].tolist(), data[topograph.NID].tolist())) == rows
        expect_x = torch.cat([g.nodes[g.ntypes[t]].data["x"][i] for t, i in rows])
        torch.testing.assert_close(data["x"].flatten(), expect_x)
    assert merged.edata[topograph.ETYPE].dtype == merged.edata[topograph.EID].dtype == idtype
    assert merged.edata[topograph.ETYPE].tolist() == [r for _, _, r, _ in edges]
    assert merged.edata[topograph.EID].tolist() == [i for _, _, _, i in edges]
    expect_w = [float(g.edges[g.canonical_etypes[r]].data["w"][i]) for _, _, r, i in edges]
    assert merged.edata["w"].tolist() == expect_w


def test_merged_features_are_the_common_ones_and_a_copy():
    g = typed()
    g.nodes["A2"].data["only_a1"] = torch.ones(6, 2)  # held by both A types, other rows: refused below
    ab = g["A1", :, "B"]  # one source type: every A1 feature comes along; the relations share w alone
    assert sorted(ab.srcdata) == sorted(["x", "only_a1", topograph.NTYPE, topograph.NID])
    assert sorted(ab.edata) == sorted(["w", topograph.ETYPE, topograph.EID])
    with pytest.raises(topograph.DGLError, match=r"source nodes' feature 'only_a1' is torch.float32 \(\) per row "
                                                 r"on 'A1' but torch.float32 \(2,\) on 'A2': cannot concatenate"):
        g[:, "AB2", :]
    del g.nodes["A2"].data["only_a1"]
    assert sorted(g[:, "AB2", :].srcdata) == sorted(["x", topograph.NTYPE, topograph.NID])
    # a type without nodes need not hold a feature: C has none and no x, yet x comes along
    h = topograph.heterograph({("A", "r", "B"): ([0], [0]), ("C", "s", "B"): ([], [])}, {"A": 1, "B": 1, "C": 0})
    h.nodes["A"].data["x"] = torch.ones(1, 2)
    assert "x" in h[:, :, "B"].srcdata
    # new tensors: setting on the merge leaves g alone; gradients reach g's leaves through the concatenation
    merged = g[:, :, "B"]
    merged.srcdata["new"] = torch.zeros(merged.num_src_nodes())
    assert all("new" not in g.nodes[t].data for t in g.ntypes)
    merged.srcdata["x"].sum().backward()
    assert g.nodes["A1"].data["x"].grad.tolist() == [[1.0]] * 4  # every A1 node is a source of the merge once


def test_one_relation_matched_is_the_shared_view():
    g = typed()
    view = g["A2", :, :]
    assert view.canonical_etypes == [("A2", "AB2", "B")] and topograph.NTYPE not in view.edata
    view.edata["seen"] = torch.ones(3)
    assert torch.equal(g.edges[("A2", "AB2", "B")].data["seen"], torch.ones(3))
    assert g[("B", "BA", "A1")].canonical_etypes == [("B", "BA", "A1")] and g["BB2"].num_edges() == 1


def test_message_passing_on_a_merged_relation_sums_the_relations():
    g = typed()
    merged = g["A1", :, "B"]
    merged.update_all(fn.copy_u("x", "m"), fn.sum("m", "h"))
    g.multi_update_all({"AB1": (fn.copy_u("x", "m"), fn.sum("m", "h")),
                        ("A1", "AB2", "B"): (fn.copy_u("x", "m"), fn.sum("m", "h"))}, "sum")
    torch.testing.assert_close(merged.dstdata["h"], g.nodes["B"].data["h"])
    homogeneous = g["B", :, "B"]
    out = topograph.ops.copy_u_sum(homogeneous, homogeneous.ndata["x"])
    g.update_all(fn.copy_u("x", "m"), fn.sum("m", "bb"), etype="BB")
    expect = g.nodes["B"].data["bb"] + topograph.ops.copy_u_sum(g["BB2"], g.nodes["B"].data["x"])
    torch.testing.assert_close(out, expect)


def test_merges_of_a_batch_and_of_a_block():
    g = typed()
    batch = topograph.batch([g, typed()])
    merged = batch[:, "AB2", :]
    assert merged.batch_size == 1 and merged.num_edges() == 12  # as DGL's: one graph
    block = topograph.to_block(g, {"B": torch.arange(7), "A1": torch.arange(4)})
    merged = block[:, :, "B"]
    assert merged.is_block and merged.srctypes == ["A1+A2+B"] and merged.dsttypes == ["B"]
    assert merged.num_dst_nodes() == 7 and merged.num_edges() == block.num_edges() - 2  # less BA's 2 edges
    # the block's own types are indexed: source types first, then destination types, as DGL's
    assert set(merged.dstdata[topograph.NTYPE].tolist()) == {len(block.srctypes) + block.dsttypes.index("B")}


def test_relation_slice_errors():
    g = typed()
    with pytest.raises(topograph.DGLError, match=r"g\[\('C', slice.*\)\]: no relation matches; the graph has "
                                                 r"\[\('A1', 'AB1', 'B'\)"):
        g["C", :, :]
    with pytest.raises(topograph.DGLError, match="no relation matches"):
        g["nope"]
    with pytest.raises(topograph.DGLError, match="no relation matches"):
        g[slice(0, 1), "AB1", "B"]  # only ':' is a wildcard, as DGL's
    with pytest.raises(topograph.DGLError, match=r"g\['srctype', 'etype', 'dsttype'\].*got 2 items"):
        g["A1", "B"]
