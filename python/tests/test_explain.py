"""GNNExplainer (nn/explain.py): on a graph whose prediction rests on known edges, the edge mask must rank them
first, for a node and for a whole graph; kwargs cut to the subgraph; and, where dgl imports, the same masks
as DGL 2.1's GNNExplainer from the same seed (the same model in each library's ops)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch


class Model(torch.nn.Module):
    """Sum of in-neighbours' features, weighted by eweight, into 2 logits: feature 0 votes class 1."""

    def __init__(self, lib):
        super().__init__()
        self.lib = lib
        self.lin = torch.nn.Linear(3, 2)
        with torch.no_grad():
            self.lin.weight.copy_(torch.tensor([[0.0, 1.0, 1.0], [3.0, 0.0, 0.0]]))
            self.lin.bias.zero_()

    def forward(self, graph, feat, eweight=None, readout=False):
        conv = self.lib.nn.GraphConv(3, 3, norm="none", weight=False, bias=False, allow_zero_in_degree=True)
        h = self.lin(conv(graph, feat, edge_weight=eweight))
        if readout:
            graph.ndata["h"] = h
            return self.lib.sum_nodes(graph, "h")
        return h


def star(lib):
    """Node 0 hears from 1..6; node 1 carries feature 0 (class 1), the others a weak signal for class 0."""
    g = lib.graph((torch.arange(1, 7), torch.zeros(6, dtype=torch.int64)), num_nodes=7)
    feat = torch.zeros(7, 3)
    feat[1, 0] = 1.0
    feat[2:, 1] = 0.2
    return g, feat


def test_node_explanation_ranks_the_deciding_edge_first():
    torch.manual_seed(0)
    g, feat = star(topograph)
    model = Model(topograph)
    assert model(g, feat)[0].argmax().item() == 1  # the prediction rests on edge 1 -> 0
    explainer = topograph.nn.GNNExplainer(model, num_hops=1, num_epochs=200, lr=0.05, log=False)
    new_id, sg, feat_mask, edge_mask = explainer.explain_node(0, g, feat)
    assert int(new_id) == 0 and sg.num_edges() == 6 and feat_mask.shape == (3,)
    deciding = int((sg.edata[topograph.EID] == 0).nonzero())
    assert int(edge_mask.argmax()) == deciding and edge_mask[deciding] > 0.5
    others = torch.cat([edge_mask[:deciding], edge_mask[deciding + 1:]])
    assert bool((others < edge_mask[deciding]).all())
    assert int(feat_mask.argmax()) == 0  # the deciding feature column


def test_graph_explanation():
    torch.manual_seed(1)
    g, feat = star(topograph)
    explainer = topograph.nn.GNNExplainer(Model(topograph), num_hops=1, num_epochs=200, lr=0.05, log=False)
    feat_mask, edge_mask = explainer.explain_graph(g, feat, readout=True)
    assert int(edge_mask.argmax()) == 0 and edge_mask.shape == (6,)


def test_against_dgl():
    dgl = pytest.importorskip("dgl")
    out = []
    for lib in (topograph, dgl):
        torch.manual_seed(2)
        g, feat = star(lib)
        model = Model(lib)
        explainer = getattr(lib.nn, "GNNExplainer")(model, num_hops=1, num_epochs=30, log=False)
        _, _, fm, em = explainer.explain_node(0, g, feat)
        fm2, em2 = explainer.explain_graph(g, feat, readout=True)
        out.append((fm, em, fm2, em2))
    for a, b in zip(*out):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
