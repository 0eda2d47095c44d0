"""RelGraphConv, GINEConv and HeteroGraphConv through dgl.nn and topograph.nn with the same weights
(copied by name): the same outputs and gradients, inputs' and parameters', on a graph and a block. Skipped unless
dgl imports, as test_against_dgl.py (whose helpers it uses) is."""
import pytest
import torch

import topograph

dgl = pytest.importorskip("dgl")

from test_against_dgl import TOL, conv_graphs, copy_parameters, run_both  # noqa: E402 (after the skip)


@pytest.mark.parametrize("share_weights", [False, True])
def test_gatv2_attention_matches_dgl(share_weights):
    """The attention GATv2Conv returns with get_attention=True (its values and gradients against DGL are in
    test_against_dgl.py's layer table)."""
    import dgl.nn.pytorch as dnn

    torch.manual_seed(0)
    for gd, gt in conv_graphs():
        mt, md = topograph.nn.GATv2Conv(5, 3, 2, share_weights=share_weights), dnn.GATv2Conv(5, 3, 2, share_weights=share_weights)
        copy_parameters(mt, md)
        x = torch.randn(gt.num_src_nodes(), 5)
        torch.testing.assert_close(mt(gt, x, get_attention=True)[1], md(gd, x, get_attention=True)[1], **TOL)


REL_LAYERS = {
    "plain": lambda nn: nn.RelGraphConv(5, 4, 3),
    "basis": lambda nn: nn.RelGraphConv(5, 4, 3, "basis", 2, activation=torch.relu),
    "basis-default-bases": lambda nn: nn.RelGraphConv(5, 4, 3, "basis", self_loop=False),
    "bdd-layer-norm": lambda nn: nn.RelGraphConv(4, 6, 3, "bdd", 2, layer_norm=True, bias=False),
}


@pytest.mark.parametrize("name", list(REL_LAYERS))
@pytest.mark.parametrize("normed", [False, True], ids=["", "norm"])
def test_rel_graph_conv_matches_dgl(name, normed):
    import dgl.nn.pytorch as dnn

    torch.manual_seed(0)
    mt, md = REL_LAYERS[name](topograph.nn), REL_LAYERS[name](dnn)
    copy_parameters(mt, md)
    in_feats = mt.linear_r.in_size
    for gd, gt in conv_graphs():
        e = gt.num_edges()
        types = torch.randint(0, 3, (e,))
        if normed:
            run_both(lambda x, nm: md(gd, x, types, nm), lambda x, nm: mt(gt, x, types, nm),
                     (gt.num_src_nodes(), in_feats), (e, 1), positive_last=True)
        else:
            run_both(lambda x: md(gd, x, types), lambda x: mt(gt, x, types), (gt.num_src_nodes(), in_feats))
        for n, p in mt.named_parameters():
            torch.testing.assert_close(p.grad, dict(md.named_parameters())[n].grad, **TOL)
            p.grad = dict(md.named_parameters())[n].grad = None


def test_gine_conv_matches_dgl():
    import dgl.nn.pytorch as dnn

    torch.manual_seed(0)
    for gd, gt in conv_graphs():
        mt = topograph.nn.GINEConv(torch.nn.Linear(4, 3), init_eps=0.2, learn_eps=True)
        md = dnn.GINEConv(torch.nn.Linear(4, 3), init_eps=0.2, learn_eps=True)
        copy_parameters(mt, md)
        run_both(lambda x, ef: md(gd, x, ef), lambda x, ef: mt(gt, x, ef), (gt.num_src_nodes(), 4),
                 (gt.num_edges(), 4))
        for n, p in mt.named_parameters():
            torch.testing.assert_close(p.grad, dict(md.named_parameters())[n].grad, **TOL)


HETERO_RELATIONS = {("user", "follows", "user"): ([0, 1, 1, 3, 2], [1, 2, 2, 2, 0]),
                    ("game", "played", "user"): ([0, 1, 1], [0, 2, 3]),
                    ("user", "plays", "game"): ([0, 2, 3], [1, 1, 0]),
                    ("user", "rates", "game"): ([], [])}
HETERO_MODS = {  # {relation key: module} over a dgl.nn-like namespace; every relation has one
    "convs": lambda nn: {"follows": nn.GraphConv(4, 3), ("game", "played", "user"): nn.SAGEConv(4, 3, "mean"),
                         "plays": nn.GraphConv(4, 3, norm="right"), "rates": nn.GraphConv(4, 3)},
    "attention": lambda nn: {"follows": nn.GATConv(4, 3, 2), "played": nn.GATv2Conv(4, 3, 2),
                             "plays": nn.GATConv(4, 3, 2), "rates": nn.GATv2Conv(4, 3, 2)},
}


@pytest.mark.parametrize("mods", list(HETERO_MODS))
@pytest.mark.parametrize("aggregate", ["sum", "mean", "max", "min", "stack"])
def test_hetero_graph_conv_matches_dgl_on_a_graph_and_a_block(mods, aggregate):
    import dgl.nn.pytorch as dnn

    counts = {"user": 4, "game": 2}
    data = {k: (torch.tensor(u, dtype=torch.int64), torch.tensor(v, dtype=torch.int64))
            for k, (u, v) in HETERO_RELATIONS.items()}
    gd, gt = dgl.heterograph(data, counts), topograph.heterograph(data, counts)
    seeds = {"user": torch.tensor([2, 0]), "game": torch.tensor([1])}
    bd = dgl.to_block(dgl.in_subgraph(gd, seeds), seeds)
    bt = topograph.to_block(topograph.in_subgraph(gt, seeds), seeds)
    torch.manual_seed(0)
    mt, md = (dnn_like.HeteroGraphConv(HETERO_MODS[mods](dnn_like), aggregate) for dnn_like in (topograph.nn, dnn))
    with torch.no_grad():  # biases apart: a tie in max / min would pass the gradient to either relation
        for p in mt.parameters():
            p.add_(torch.randn(p.shape) * 0.1)
    copy_parameters(mt, md)
    for d, t in ((gd, gt), (bd, bt)):
        rows = {ty: t.num_src_nodes(ty) for ty in ("game", "user")}

        def run(module, g):
            def f(x_game, x_user):
                out = module(g, {"game": x_game, "user": x_user})
                return torch.cat([out[ty].flatten() for ty in sorted(out)])
            return f

        run_both(run(md, d), run(mt, t), (rows["game"], 4), (rows["user"], 4))
        for n, p in mt.named_parameters():
            torch.testing.assert_close(p.grad, dict(md.named_parameters())[n].grad, **TOL)
            p.grad = dict(md.named_parameters())[n].grad = None
