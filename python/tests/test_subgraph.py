"""node_subgraph / edge_subgraph / in_subgraph as DGL's: ids and masks, the parent ids in NID / EID, the parent's
features gathered by them, gradients through them, edge_softmax over a subset of edges, and clean errors."""
import pytest
import torch

import topograph

NID, EID = topograph.NID, topograph.EID


def chain():
    g = topograph.graph((torch.tensor([0, 1, 2, 3, 1]), torch.tensor([1, 2, 3, 0, 1])), num_nodes=5)
    g.ndata["x"] = torch.arange(5.0).unsqueeze(1)
    g.edata["w"] = 10 * torch.arange(5.0).unsqueeze(1)
    return g


def test_node_subgraph_keeps_the_order_given_and_the_induced_edges():
    g = chain()
    s = g.subgraph([3, 1, 2])
    assert s.ndata[NID].tolist() == [3, 1, 2] and s.ndata["x"].flatten().tolist() == [3, 1, 2]
    # DGL 2.1's order (it slices the CSR): by source in the order given (3: none; 1: 1->2, 1->1; 2: 2->3), by
    # parent edge id within a source
    assert s.edata[EID].tolist() == [1, 4, 2]
    u, v = s.all_edges()
    assert s.ndata[NID][u].tolist() == [1, 1, 2] and s.ndata[NID][v].tolist() == [2, 1, 3]
    assert s.edata["w"].flatten().tolist() == [10, 40, 20]
    mask = torch.tensor([True, False, True, True, False])
    assert topograph.node_subgraph(g, mask).ndata[NID].tolist() == [0, 2, 3]
    whole = g.subgraph([3, 1, 2], relabel_nodes=False)
    assert whole.num_nodes() == 5 and NID not in whole.ndata and whole.edata[EID].tolist() == [1, 4, 2]
    assert EID not in g.subgraph([3, 1], store_ids=False).edata


def test_edge_and_in_subgraph():
    g = chain()
    e = g.edge_subgraph([4, 0])
    # touched nodes by first appearance, sources then destinations (DGL 2.1's [1, 0], checked with it)
    assert e.edata[EID].tolist() == [4, 0] and e.ndata[NID].tolist() == [1, 0]
    assert e.edata["w"].flatten().tolist() == [40, 0]
    assert topograph.edge_subgraph(g, [4, 0], relabel_nodes=False).num_nodes() == 5
    i = topograph.in_subgraph(g, [1])
    assert i.num_nodes() == 5 and i.edata[EID].tolist() == [0, 4] and torch.equal(i.ndata["x"], g.ndata["x"])
    r = topograph.in_subgraph(g, [1], relabel_nodes=True)
    assert sorted(r.ndata[NID].tolist()) == [0, 1]
    # DGL 2.1's order: seed by seed as given (each seed's edges by id), nodes by first appearance, sources first
    o = topograph.in_subgraph(g, [2, 1, 2], relabel_nodes=True)
    assert o.edata[EID].tolist() == [1, 0, 4, 1]
    assert o.ndata[NID].tolist() == [1, 0, 2]


def test_subgraphs_of_a_subgraph_carry_its_features_and_ids():
    """A subgraph of a subgraph keeping every node (edge_subgraph / in_subgraph without relabelling) has the
    subgraph's features whole, its NID column included as a feature, as DGL 2.1's. It raised an IndexError:
    the subgraph's own parent ids (into g) were read as the second subgraph's and gathered its rows by them."""
    g = chain()
    sub = topograph.node_subgraph(g, [1, 2, 3])
    for second in (topograph.edge_subgraph(sub, [0, 1], relabel_nodes=False), topograph.in_subgraph(sub, [1])):
        assert second.num_nodes() == 3
        assert second.ndata["x"].flatten().tolist() == [1, 2, 3] and second.ndata[NID].tolist() == [1, 2, 3]
    e = topograph.edge_subgraph(sub, [0, 1], relabel_nodes=False)
    assert e.edata[EID].tolist() == [0, 1] and e.edata["w"].flatten().tolist() == sub.edata["w"][:2].flatten().tolist()
    relabelled = topograph.edge_subgraph(sub, [2])
    assert relabelled.ndata[NID].tolist() == [1, 2]  # positions in sub, as DGL's
    assert relabelled.ndata["x"].flatten().tolist() == [2, 3]


def test_gradients_reach_the_parent_features_and_edge_softmax_on_eids():
    g = chain()
    x = torch.randn(5, 3, requires_grad=True)
    g.ndata["x"] = x
    s = g.subgraph([4, 2])
    s.ndata["x"].sum().backward()
    assert x.grad[:, 0].tolist() == [0, 0, 1, 0, 1]
    logits = torch.randn(3, 2)
    out = topograph.ops.edge_softmax(g, logits, eids=torch.tensor([0, 4, 2]))  # edges 0->1, 1->1 share node 1
    expect = torch.cat([torch.softmax(logits[:2], 0), torch.ones(1, 2)])
    torch.testing.assert_close(out, expect)


def test_subgraph_errors():
    g = chain()
    with pytest.raises(ValueError, match="5"):
        g.subgraph([1, 5])  # out of range
    with pytest.raises(ValueError):
        g.subgraph([1, 1])  # a node twice
    with pytest.raises(ValueError, match="boolean mask must have 5 entries"):
        g.subgraph(torch.tensor([True, False]))
    with pytest.raises(TypeError, match="integer"):
        g.edge_subgraph(torch.tensor([0.5]))
    h = topograph.heterograph({("a", "r", "b"): ([0], [0])})
    with pytest.raises(ValueError, match="give nodes as"):
        h.subgraph([0])
    with pytest.raises(ValueError, match="no node type 'c'"):
        h.subgraph({"c": [0]})
    with pytest.raises(ValueError, match="block"):
        topograph.to_block(g).subgraph([0])
    with pytest.raises(ValueError, match="one row per edge"):
        topograph.ops.edge_softmax(g, torch.randn(3), eids=[0, 1])
    with pytest.raises(ValueError, match=r"^edge_softmax: eids: edges\['_E'\]\[0\] = 70 is not an edge id"):
        topograph.ops.edge_softmax(g, torch.randn(1), eids=[70])  # named as edge_softmax's argument


def test_node_and_edge_subgraph_take_output_device():
    # DGL's node_subgraph / edge_subgraph (and the DGLGraph methods) take output_device=
    g = topograph.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])))
    g.ndata["x"] = torch.arange(3.0)
    for sub in (topograph.node_subgraph(g, [0, 1], output_device="cpu"), g.subgraph([0, 1], output_device="cpu"),
                topograph.edge_subgraph(g, [1], output_device=torch.device("cpu")),
                g.edge_subgraph([1], relabel_nodes=False, output_device="cpu")):
        assert sub.device == torch.device("cpu") and sub.ndata["x"].device == torch.device("cpu")
    assert g.subgraph([0, 1], output_device="cpu").num_edges() == 1
