"""to_homogeneous and to_heterogeneous against references written with loops over each relation's edge list: ids
type after type, relations in canonical order, features concatenated and split, the type ids and their dtypes,
the round trip, and the errors (a feature missing or unlike across types, type indices out of range, a
metagraph without an edge's relation)."""
import pytest
import torch

import topograph
from conftest import typed_graph
from topograph import EID, ETYPE, NID, NTYPE


def hetero(idtype=torch.int64):
    """conftest's typed_graph and a node feature that only users hold."""
    g = typed_graph(idtype=idtype)
    g.nodes["user"].data["only_users"] = torch.ones(3)
    return g


def reference_homogeneous(g):
    """(src, dst, node type index, node id within type, edge type index, edge id within relation), by loops."""
    offset, start = {}, 0
    node_type, node_id = [], []
    for i, t in enumerate(g.ntypes):
        offset[t] = start
        start += g.num_nodes(t)
        node_type += [i] * g.num_nodes(t)
        node_id += list(range(g.num_nodes(t)))
    src, dst, edge_type, edge_id = [], [], [], []
    for r, (s, e, d) in enumerate(g.canonical_etypes):
        u, v = g.edges(etype=(s, e, d))
        for k, (a, b) in enumerate(zip(u.tolist(), v.tolist())):
            src.append(offset[s] + a)
            dst.append(offset[d] + b)
            edge_type.append(r)
            edge_id.append(k)
    return src, dst, node_type, node_id, edge_type, edge_id


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_to_homogeneous_numbers_types_in_order(idtype):
    g = hetero(idtype)
    src, dst, node_type, node_id, edge_type, edge_id = reference_homogeneous(g)
    h, node_counts, edge_counts = topograph.to_homogeneous(g, ndata=["h"], edata=["w"], return_count=True)
    assert h.ntypes == ["_N"] and h.canonical_etypes == [("_N", "_E", "_N")] and h.idtype == idtype
    assert h.num_nodes() == 5 and [x.tolist() for x in h.edges()] == [src, dst]
    assert node_counts == [g.num_nodes(t) for t in g.ntypes]
    assert edge_counts == [g.num_edges(c) for c in g.canonical_etypes]
    assert list(h.ndata) == ["h", NID, NTYPE] and list(h.edata) == ["w", EID, ETYPE]
    assert h.ndata[NID].tolist() == node_id and h.ndata[NID].dtype == idtype
    assert h.ndata[NTYPE].tolist() == node_type and h.ndata[NTYPE].dtype == torch.int64
    assert h.edata[EID].tolist() == edge_id and h.edata[EID].dtype == idtype
    assert h.edata[ETYPE].tolist() == edge_type and h.edata[ETYPE].dtype == torch.int64
    # the rows of each type's feature at its nodes' (edges') new ids
    for i, t in enumerate(g.ntypes):
        if g.num_nodes(t):
            torch.testing.assert_close(h.ndata["h"][h.ndata[NTYPE] == i], g.nodes[t].data["h"])
    for r, c in enumerate(g.canonical_etypes):
        if g.num_edges(c):
            torch.testing.assert_close(h.edata["w"][h.edata[ETYPE] == r], g.edges[c].data["w"])


def test_to_homogeneous_defaults_and_store_type():
    g = hetero()
    h = topograph.to_homogeneous(g)
    assert list(h.ndata) == [NID, NTYPE] and list(h.edata) == [EID, ETYPE]  # no feature unless named
    bare = topograph.to_homogeneous(g, store_type=False)
    assert list(bare.ndata) == [NID] and list(bare.edata) == [EID]
    one = topograph.graph(([0, 1], [1, 1]), num_nodes=3)
    h = topograph.to_homogeneous(one)
    assert [x.tolist() for x in h.edges()] == [[0, 1], [1, 1]] and h.ndata[NTYPE].tolist() == [0, 0, 0]
    empty = topograph.to_homogeneous(topograph.heterograph({("a", "x", "b"): ([], [])}, {"a": 0, "b": 0}))
    assert empty.num_nodes() == 0 and empty.num_edges() == 0 and empty.edata[ETYPE].dtype == torch.int64


def test_to_homogeneous_of_a_batch_is_one_graph():
    g = topograph.batch([hetero(), hetero()])
    h = topograph.to_homogeneous(g)
    src, dst, *_ = reference_homogeneous(g)
    assert h.batch_size == 1 and [x.tolist() for x in h.edges()] == [src, dst]


def test_to_homogeneous_feature_errors():
    g = hetero()
    with pytest.raises(KeyError, match=r"'only_users' is missing on 'game'"):
        topograph.to_homogeneous(g, ndata=["only_users"])
    with pytest.raises(KeyError, match=r"edge feature 'nope' is missing on \('user', 'follows', 'user'\)"):
        topograph.to_homogeneous(g, edata=["nope"])
    g.nodes["game"].data["h"] = torch.zeros(2, 3)
    with pytest.raises(topograph.DGLError, match=r"'h' is torch.float32 \(2,\) per row on 'user' but "
                                                 r"torch.float32 \(3,\) on 'game'"):
        topograph.to_homogeneous(g, ndata=["h"])
    g.nodes["game"].data["h"] = torch.zeros(2, 2, dtype=torch.float64)
    with pytest.raises(topograph.DGLError, match="cannot concatenate"):
        topograph.to_homogeneous(g, ndata=["h"])
    with pytest.raises(TypeError, match="ndata must be a list of feature names"):
        topograph.to_homogeneous(g, ndata="h")
    with pytest.raises(ValueError, match="not defined for a block"):
        topograph.to_homogeneous(topograph.to_block(topograph.graph(([0], [1]))))
    # a type without nodes need not hold it
    g.nodes["game"].data["h"] = torch.zeros(2, 2)
    assert topograph.to_homogeneous(g, ndata=["h"]).ndata["h"].shape == (5, 2)


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64], ids=["int32", "int64"])
def test_round_trip_gives_the_graph_back(idtype):
    g = hetero(idtype)
    h = topograph.to_homogeneous(g, ndata=["h"], edata=["w"])
    back = topograph.to_heterogeneous(h, g.ntypes, g.etypes)
    # relations without edges are not seen in h: gone, as DGL's (a metagraph keeps them)
    kept = [c for c in g.canonical_etypes if g.num_edges(c)]
    assert back.ntypes == g.ntypes and back.canonical_etypes == kept and back.idtype == idtype
    assert {t: back.num_nodes(t) for t in back.ntypes} == {t: g.num_nodes(t) for t in g.ntypes}
    for c in kept:
        assert [x.tolist() for x in back.edges(etype=c)] == [x.tolist() for x in g.edges(etype=c)]
        torch.testing.assert_close(back.edges[c].data["w"], g.edges[c].data["w"])
        assert back.edges[c].data[EID].dtype == torch.int64
    for t in g.ntypes:
        if g.num_nodes(t):
            torch.testing.assert_close(back.nodes[t].data["h"], g.nodes[t].data["h"])
        assert back.nodes[t].data[NID].dtype == torch.int64 and NTYPE not in back.nodes[t].data


def test_to_heterogeneous_splits_by_type_indices():
    # nodes interleaved: a b a b c; etype 0 joins a->b and b->a (two relations of one name), etype 1 a->a
    h = topograph.graph(([0, 1, 2, 0, 3, 2, 4], [1, 2, 3, 2, 0, 0, 4]), num_nodes=5)
    h.ndata["kind"] = torch.tensor([0, 1, 0, 1, 2])
    h.edata["rel"] = torch.tensor([0, 0, 0, 1, 0, 1, 1])
    h.ndata["x"] = torch.arange(5.0)
    h.edata["y"] = torch.arange(7.0)
    g = topograph.to_heterogeneous(h, ["a", "b", "c"], ["to", "loop"], ntype_field="kind", etype_field="rel")
    assert g.canonical_etypes == [("a", "loop", "a"), ("a", "to", "b"), ("b", "to", "a"), ("c", "loop", "c")]
    assert {t: g.nodes[t].data[NID].tolist() for t in g.ntypes} == {"a": [0, 2], "b": [1, 3], "c": [4]}
    local = {0: 0, 2: 1, 1: 0, 3: 1, 4: 0}  # node -> its id within its type
    for c in g.canonical_etypes:
        eids = g.edges[c].data[EID].tolist()
        u, v = h.find_edges(torch.tensor(eids, dtype=torch.int64))
        assert eids == sorted(eids)  # each relation's edges keep their order
        want = [[local[i] for i in u.tolist()], [local[i] for i in v.tolist()]]
        assert [x.tolist() for x in g.edges(etype=c)] == want
        assert g.edges[c].data["y"].tolist() == [float(e) for e in eids] and "rel" not in g.edges[c].data
    assert g.nodes["b"].data["x"].tolist() == [1.0, 3.0] and "kind" not in g.nodes["a"].data


class MetaGraph:
    """The part of a networkx MultiDiGraph that to_heterogeneous reads."""

    def __init__(self, relations):
        self.relations = relations

    def edges(self, keys=False):
        return [(s, d, e) for s, e, d in self.relations]


def test_to_heterogeneous_with_a_metagraph_and_errors():
    g = hetero()
    h = topograph.to_homogeneous(g)
    back = topograph.to_heterogeneous(h, g.ntypes, g.etypes, metagraph=MetaGraph(g.canonical_etypes))
    assert back.canonical_etypes == g.canonical_etypes  # the relations without edges too
    assert back.num_edges(("game", "rated", "tag")) == 0
    with pytest.raises(topograph.DGLError, match=r"edge 4 is of relation \('user', 'plays', 'game'\), which the "
                                                 r"metagraph does not have"):
        topograph.to_heterogeneous(h, g.ntypes, g.etypes, metagraph=MetaGraph([("user", "follows", "user")]))
    with pytest.raises(topograph.DGLError, match="names node type 'nobody'"):
        topograph.to_heterogeneous(h, g.ntypes, g.etypes, metagraph=MetaGraph([("nobody", "follows", "user")]))
    with pytest.raises(topograph.DGLError, match=r"node 2 has type index 2, outside the 1 node types given"):
        topograph.to_heterogeneous(h, ["game"], g.etypes)
    with pytest.raises(topograph.DGLError, match=r"edge 0 has type index 2, outside the 0 edge types"):
        topograph.to_heterogeneous(h, g.ntypes, [])
    with pytest.raises(KeyError, match="no node feature 'kind'"):
        topograph.to_heterogeneous(h, g.ntypes, g.etypes, ntype_field="kind")
    with pytest.raises(topograph.DGLError, match="one node type and one relation"):
        topograph.to_heterogeneous(g, g.ntypes, g.etypes)
    with pytest.raises(topograph.DGLError, match="ntypes must be distinct names"):
        topograph.to_heterogeneous(h, ["a", "a", "b"], g.etypes)
    h.ndata[NTYPE] = h.ndata[NTYPE].float()
    with pytest.raises(topograph.DGLError, match="must be 1-D integer type indices"):
        topograph.to_heterogeneous(h, g.ntypes, g.etypes)


def test_to_homogeneous_feeds_rel_graph_conv():
    """RelGraphConv's usual input: the relation index of every edge from to_homogeneous (edata[ETYPE])."""
    torch.manual_seed(0)
    g = hetero()
    h = topograph.to_homogeneous(g, ndata=["h"])
    conv = topograph.nn.RelGraphConv(2, 3, len(g.canonical_etypes), self_loop=False)
    out = conv(h, h.ndata["h"], h.edata[ETYPE])
    # the same sum per relation: a user's messages from its followers through W[follows], ...
    want = torch.zeros(5, 3)
    src, dst = h.edges()
    for s, d, r in zip(src.tolist(), dst.tolist(), h.edata[ETYPE].tolist()):
        want[d] += h.ndata["h"][s] @ conv.linear_r.W[r]
    torch.testing.assert_close(out, want + conv.h_bias)
