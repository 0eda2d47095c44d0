"""Round 7 of DGL-style scripts (GCN / GAT / GraphSAGE / R-GCN / GIN / link prediction / node2vec / EGAT /
HGT examples and the utilities they call), each run under DGL 2.1 and under topograph: the differences that
were topograph's, pinned to DGL 2.1's observed behaviour."""
import topograph as dgl  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)
import torch


def test_edge_subgraph_numbers_kept_nodes_by_first_appearance():
    # DGL 2.1 relabels by first appearance among the chosen edges' sources then destinations (its Relabel_),
    # not by parent id: a script indexing sg.ndata rows by position saw other nodes than under DGL
    g = dgl.graph(([5, 3, 7, 1], [1, 0, 2, 6]), num_nodes=8)
    g.ndata["h"] = torch.arange(8.0)
    sg = dgl.edge_subgraph(g, torch.tensor([2, 3, 0]))
    assert sg.ndata[dgl.NID].tolist() == [7, 1, 5, 2, 6]
    assert [t.tolist() for t in sg.edges()] == [[0, 1, 2], [3, 4, 1]]
    assert sg.ndata["h"].tolist() == [7.0, 1.0, 5.0, 2.0, 6.0]
    assert sg.edata[dgl.EID].tolist() == [2, 3, 0]
    sg = dgl.edge_subgraph(g, torch.tensor([1, 0]))
    assert sg.ndata[dgl.NID].tolist() == [3, 5, 0, 1]
    assert [t.tolist() for t in sg.edges()] == [[0, 1], [2, 3]]
    assert g.edge_subgraph(torch.tensor([1, 0])).ndata[dgl.NID].tolist() == [3, 5, 0, 1]


def test_edge_subgraph_hetero_first_appearance_relation_by_relation():
    h = dgl.heterograph({("a", "r", "b"): ([3, 1], [2, 0]), ("b", "s", "a"): ([1, 2], [0, 4])})
    s = dgl.edge_subgraph(h, {"r": torch.tensor([0, 1]), "s": torch.tensor([1, 0])})
    assert s.ndata[dgl.NID]["a"].tolist() == [3, 1, 4, 0]
    assert s.ndata[dgl.NID]["b"].tolist() == [2, 0, 1]
    assert [t.tolist() for t in s.edges(etype="r")] == [[0, 1], [0, 1]]
    assert [t.tolist() for t in s.edges(etype="s")] == [[0, 2], [2, 3]]
