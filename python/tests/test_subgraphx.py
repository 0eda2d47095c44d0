"""SubgraphX and HeteroSubgraphX (nn/subgraphx.py). The laws: on graphs whose class is decided by a planted red
triangle (test_pgexplainer's task), the explanation of a trained GraphConv model is the triangle (overlap
measured), at most node_min nodes, connected; the hetero variant finds the triangle of red nodes; the caller's
graph and model mode are left as given; argument errors. Where dgl imports: the same answers, Shapley values and
numpy draws as DGL 2.1's from the same seed and weights, and what DGL 2.1 does where it is wrong."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import numpy as np
import pytest
import torch
from topograph.nn.pytorch import explain as pytorch_explain

from test_pgexplainer import GCN, HeteroGCN, fit, hetero_motif_graph, motif_graph

DGL_SITE = "dgl"
FAST = dict(num_hops=2, num_rollouts=6, shapley_steps=6, num_child=6)


def _connected(g, nodes: dict) -> bool:
    """Whether the nodes ({ntype: ids}) span one weakly connected piece of g (every relation, either way)."""
    seen, todo = set(), [next((t, i) for t, ids in nodes.items() for i in ids.tolist())]
    want = {(t, i) for t, ids in nodes.items() for i in ids.tolist()}
    while todo:
        t, i = todo.pop()
        if (t, i) in seen:
            continue
        seen.add((t, i))
        for s, _, d in g.canonical_etypes:
            if s == t:
                todo += [(d, j) for j in g.successors(i, etype=(s, _, d)).tolist() if (d, j) in want]
            if d == t:
                todo += [(s, j) for j in g.predecessors(i, etype=(s, _, d)).tolist() if (s, j) in want]
    return seen == want


@pytest.fixture(scope="module")
def trained():
    """A GCN that tells graphs with a red triangle (label 1) from those whose red nodes hang apart, and five
    fresh label-1 graphs with their triangle's nodes (the last three)."""
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    data = [motif_graph(topograph, i % 2, gen)[0] for i in range(60)]
    bg = topograph.batch(data)
    model = fit(GCN(topograph), bg, bg.ndata["x"], torch.tensor([i % 2 for i in range(60)]))
    tests = [motif_graph(topograph, 1, torch.Generator().manual_seed(100 + i))[0] for i in range(5)]
    assert all(int(model(g, g.ndata["x"]).argmax()) == 1 for g in tests)
    return model, tests


@pytest.fixture(scope="module")
def hetero_trained():
    """HeteroGCN on the same task with the colours as node types (blue, red; ones as features)."""
    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    data = [hetero_motif_graph(topograph, i % 2, gen)[0] for i in range(40)]
    bg = topograph.batch(data)
    model = fit(HeteroGCN(topograph, data[0].etypes), bg, bg.ndata["x"], torch.tensor([i % 2 for i in range(40)]))
    tests = [hetero_motif_graph(topograph, 1, torch.Generator().manual_seed(200 + i))[0] for i in range(3)]
    return model, tests


def test_explanation_is_the_motif(trained):
    model, tests = trained
    overlaps = []
    for seed, g in enumerate(tests):
        np.random.seed(seed)
        nodes = topograph.nn.SubgraphX(model, **FAST).explain_graph(g, g.ndata["x"], 1)
        motif = set(range(g.num_nodes() - 3, g.num_nodes()))
        assert nodes.dtype == torch.int64 and nodes.numel() <= 3
        assert nodes.tolist() == sorted(set(nodes.tolist()))
        assert _connected(g, {"_N": nodes})
        overlaps.append(len(motif & set(nodes.tolist())) / 3)
    # measured: 1.0 on each of the five graphs
    assert sum(overlaps) / len(overlaps) >= 0.8, overlaps


@pytest.mark.parametrize("node_min,high2low", [(4, True), (5, False)])
def test_node_min_and_connectedness(trained, node_min, high2low):
    model, tests = trained
    for seed, g in enumerate(tests[:3]):
        np.random.seed(seed)
        explainer = topograph.nn.SubgraphX(model, node_min=node_min, high2low=high2low, **FAST)
        nodes = explainer.explain_graph(g, g.ndata["x"], torch.tensor(1))  # a label tensor, as DGL's example
        assert 1 <= nodes.numel() <= node_min and _connected(g, {"_N": nodes})
        motif = set(range(g.num_nodes() - 3, g.num_nodes()))
        assert len(motif & set(nodes.tolist())) >= 2, nodes  # measured: the whole triangle (3 of 3) each time


def test_graph_and_model_left_as_given(trained):
    model, tests = trained
    g = tests[0]
    keys, edges = set(g.ndata.keys()), [x.clone() for x in g.edges()]
    model.train()
    np.random.seed(0)
    topograph.nn.SubgraphX(model, **FAST).explain_graph(g, g.ndata["x"], 1)
    assert model.training  # DGL leaves the model in eval mode
    assert set(g.ndata.keys()) == keys and all(torch.equal(a, b) for a, b in zip(edges, g.edges()))
    model.eval()


def test_same_seed_same_answer(trained):
    model, tests = trained
    g = tests[1]
    runs = []
    for _ in range(2):
        np.random.seed(3)
        runs.append(topograph.nn.SubgraphX(model, num_hops=3, num_rollouts=4, shapley_steps=4).explain_graph(
            g, g.ndata["x"], 0).tolist())
    assert runs[0] == runs[1]
    assert pytorch_explain.SubgraphX is topograph.nn.SubgraphX


def test_hetero_explanation_is_the_red_triangle(hetero_trained):
    model, tests = hetero_trained
    found = []
    for seed, g in enumerate(tests):
        x = {t: g.nodes[t].data["x"] for t in g.ntypes}
        np.random.seed(seed)
        nodes = topograph.nn.HeteroSubgraphX(model, **FAST).explain_graph(g, x, 1)
        assert list(nodes) == g.ntypes and all(v.dtype == torch.int64 for v in nodes.values())
        assert sum(v.numel() for v in nodes.values()) <= 3 and _connected(g, nodes)
        found.append(len(set(nodes["red"].tolist())) / 3)
    assert sum(found) / len(found) >= 0.8, found  # measured: 1.0 each (DGL 2.1: 0, see below)
    assert pytorch_explain.HeteroSubgraphX is topograph.nn.HeteroSubgraphX


class _Mean(torch.nn.Module):
    """A model over any heterograph: the summed features of each type, averaged, then linear (two classes)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)

    def forward(self, g, feat):
        return self.fc(sum(x.mean(0, keepdim=True) for x in feat.values()))


def _one_type_hetero(lib):
    return lib.heterograph({("a", "x", "a"): ([0, 1, 2, 3], [1, 2, 3, 4]), ("a", "y", "a"): ([4, 0], [0, 2])})


def test_hetero_one_node_type():
    g = _one_type_hetero(topograph)
    torch.manual_seed(0)
    np.random.seed(0)
    nodes = topograph.nn.HeteroSubgraphX(_Mean(), num_hops=1, num_rollouts=3, shapley_steps=2).explain_graph(
        g, {"a": torch.rand(5, 2)}, 0)
    assert list(nodes) == ["a"] and 1 <= nodes["a"].numel() <= 3 and _connected(g, nodes)


@pytest.mark.parametrize("kwargs,error,word", [
    (dict(num_hops=-1), ValueError, "num_hops"), (dict(num_hops=1.5), TypeError, "num_hops"),
    (dict(coef="a"), TypeError, "coef"), (dict(high2low=1), TypeError, "high2low"),
    (dict(num_child=0), ValueError, "num_child"), (dict(num_rollouts=0), ValueError, "num_rollouts"),
    (dict(node_min=0), ValueError, "node_min"), (dict(shapley_steps=0), ValueError, "shapley_steps"),
    (dict(log="yes"), TypeError, "log"),
])
def test_bad_constructor_arguments(kwargs, error, word):
    args = dict(num_hops=2)
    args.update(kwargs)
    for cls in (topograph.nn.SubgraphX, topograph.nn.HeteroSubgraphX):
        with pytest.raises(error, match=word):
            cls(torch.nn.Linear(2, 2), **args)
    with pytest.raises(TypeError, match="model"):
        topograph.nn.SubgraphX(lambda g, x: x, 2)


def test_bad_explain_arguments(trained, hetero_trained):
    model, tests = trained
    g, x = tests[0], tests[0].ndata["x"]
    explainer = topograph.nn.SubgraphX(model, **FAST)
    with pytest.raises(ValueError, match="feat"):
        explainer.explain_graph(g, x[:-1], 1)
    with pytest.raises(ValueError, match="target_class"):
        explainer.explain_graph(g, x, 2)  # two classes
    with pytest.raises(ValueError, match="target_class"):
        explainer.explain_graph(g, x, torch.tensor([0, 1]))
    with pytest.raises(TypeError, match="target_class"):
        explainer.explain_graph(g, x, 0.5)
    with pytest.raises(ValueError, match="node_min"):
        explainer.explain_graph(topograph.graph(([0, 1], [1, 2])), torch.ones(3, 2), 0)
    hmodel, htests = hetero_trained
    with pytest.raises(ValueError, match="HeteroSubgraphX"):
        explainer.explain_graph(htests[0], htests[0].ndata["x"], 0)
    hexplainer = topograph.nn.HeteroSubgraphX(hmodel, **FAST)
    with pytest.raises(TypeError, match="feat"):
        hexplainer.explain_graph(htests[0], torch.ones(3, 2), 0)
    with pytest.raises(ValueError, match="feat\\['red'\\]"):
        hexplainer.explain_graph(htests[0], {"blue": htests[0].nodes["blue"].data["x"]}, 0)


# -- against DGL 2.1 ------------------------------------------------------------------------------------------
def _dgl_graph(dgl, g):
    return dgl.heterograph({c: g.edges(etype=c) for c in g.canonical_etypes},
                           num_nodes_dict={t: g.num_nodes(t) for t in g.ntypes})


def test_same_answers_and_draws_as_dgl():
    dgl = pytest.importorskip(DGL_SITE)
    torch.manual_seed(3)
    model = GCN(topograph)  # untrained: answers differ from graph to graph and seed to seed
    theirs = GCN(dgl)
    theirs.load_state_dict(model.state_dict())
    gen = torch.Generator().manual_seed(7)
    answers = set()
    for trial in range(4):
        g = motif_graph(topograph, trial % 2, gen)[0]
        dg = dgl.graph(g.edges(), num_nodes=g.num_nodes())
        kw = dict(num_hops=3, high2low=bool(trial % 2), num_rollouts=4, shapley_steps=4, num_child=4, node_min=4,
                  coef=2.0)
        np.random.seed(trial)
        ours = topograph.nn.SubgraphX(model, **kw).explain_graph(g, g.ndata["x"], trial % 2)
        after = np.random.rand()
        np.random.seed(trial)
        ref = dgl.nn.SubgraphX(theirs, **kw).explain_graph(dg, g.ndata["x"], trial % 2)
        assert ours.tolist() == ref.tolist() and after == np.random.rand()  # and as many numpy draws
        answers.add(tuple(ours.tolist()))
    assert len(answers) >= 3  # measured: 3 different answers


def test_same_shapley_values_as_dgl(trained):
    dgl = pytest.importorskip(DGL_SITE)
    model, tests = trained
    g = tests[2]
    theirs = GCN(dgl)
    theirs.load_state_dict(model.state_dict())
    ref = dgl.nn.SubgraphX(theirs, num_hops=3, shapley_steps=7)
    ref.graph, ref.feat, ref.target_class, ref.kwargs = dgl.graph(g.edges(), num_nodes=g.num_nodes()), \
        g.ndata["x"], 1, {}
    ours = topograph.nn.SubgraphX(model, num_hops=3, shapley_steps=7)
    search = topograph.nn.subgraphx._Search(g, g.ndata["x"], 1, {})
    for nodes in ([0, 1], [2, 5, 6], list(range(g.num_nodes() - 3, g.num_nodes()))):
        np.random.seed(11)
        a = ours._shapley(search, torch.tensor(nodes))
        np.random.seed(11)
        assert a == pytest.approx(ref.shapley(torch.tensor(nodes)), abs=1e-6)


def test_dgl_hetero_negates_rewards_and_ignores_node_min(hetero_trained):
    dgl = pytest.importorskip(DGL_SITE)
    model, tests = hetero_trained
    theirs = HeteroGCN(dgl, tests[0].etypes)
    theirs.load_state_dict(model.state_dict())
    g = tests[0]
    x = {t: g.nodes[t].data["x"] for t in g.ntypes}
    # num_hops=1: no coalition to draw, so the values are exact; DGL adds the subgraph to the "without" mask
    ref = dgl.nn.HeteroSubgraphX(theirs, num_hops=1, shapley_steps=2)
    ref.graph, ref.feat, ref.target_class, ref.kwargs = _dgl_graph(dgl, g), x, 1, {}
    ours = topograph.nn.HeteroSubgraphX(model, num_hops=1, shapley_steps=2)
    search = topograph.nn.subgraphx._Search(g, x, 1, {})
    for nodes in ({"blue": [], "red": [0, 1, 2]}, {"blue": [0, 1], "red": [0]}):
        nodes = {t: torch.tensor(v, dtype=torch.int64) for t, v in nodes.items()}
        value = ours._shapley(search, nodes)
        assert abs(value) > 1e-5 and ref.shapley(nodes) == pytest.approx(-value, abs=1e-6)
    # so DGL's search prefers what lowers the class, and its answer may hold more than node_min nodes (it
    # compares node_min with the number of node *types*): measured, on these three graphs, blue nodes only
    # each time and answers of 5 and 8 nodes; ours is the red triangle (test above)
    sizes, reds = [], []
    for seed, g in enumerate(tests):
        np.random.seed(seed)
        out = dgl.nn.HeteroSubgraphX(theirs, **FAST).explain_graph(
            _dgl_graph(dgl, g), {t: g.nodes[t].data["x"] for t in g.ntypes}, 1)
        sizes.append(sum(v.numel() for v in out.values()))
        reds.append(out["red"].numel() if "red" in out else 0)
    assert max(sizes) > 3 and sum(reds) <= 3, (sizes, reds)  # measured: sizes [5, 8, 3], no red node


def test_dgl_hetero_fails_on_one_node_type():
    dgl = pytest.importorskip(DGL_SITE)
    g = _one_type_hetero(dgl)
    torch.manual_seed(0)
    np.random.seed(0)
    with pytest.raises(Exception):  # ndata[NID] is a tensor there, not a dict: AttributeError in DGL 2.1
        dgl.nn.HeteroSubgraphX(_Mean(), num_hops=1, num_rollouts=3, shapley_steps=2).explain_graph(
            g, {"a": torch.rand(5, 2)}, 0)


def test_hetero_cut_that_leaves_no_edge():
    """A hub and five leaves of another type: dropping the hub leaves no edge, and (as DGL) one remaining node
    is kept, picked with numpy's generator."""
    g = topograph.heterograph({("hub", "to", "leaf"): ([0] * 5, [0, 1, 2, 3, 4]),
                               ("leaf", "back", "hub"): ([0, 1, 2, 3, 4], [0] * 5)})
    torch.manual_seed(0)
    feat, model = {"hub": torch.rand(1, 2), "leaf": torch.rand(5, 2)}, _Mean()
    runs = []
    for _ in range(2):
        np.random.seed(4)
        nodes = topograph.nn.HeteroSubgraphX(model, num_hops=2, num_rollouts=4, shapley_steps=3,
                                             node_min=2).explain_graph(g, feat, 1)
        assert sum(v.numel() for v in nodes.values()) <= 2 and _connected(g, nodes)
        runs.append({t: v.tolist() for t, v in nodes.items()})
    assert runs[0] == runs[1]
