"""HeteroGraphConv, GATv2Conv, RelGraphConv, TypedLinear and GINEConv against their equations written here densely
(adjacency matrices per relation, multi-edges counted) or as loops over the edges, in float64 through the layers'
own parameters (so parameter gradients compare too), on relations and nodes without edges and on blocks; float32
finite differences; the errors. tests/test_against_dgl.py holds them to DGL 2.1 with the same weights."""
import pytest
import torch
import torch.nn.functional as F

import topograph
from topograph.nn import GATv2Conv, GINEConv, GraphConv, HeteroGraphConv, RelGraphConv, SAGEConv, TypedLinear

torch.manual_seed(0)
TOL = dict(rtol=1e-4, atol=1e-4)


def assert_matches_dense(out, ref, leaves):
    """out (a layer's float32 output) equals ref (the same equation in float64 from the same leaves), and so do
    the gradients of both against every leaf under one random upstream gradient."""
    torch.testing.assert_close(out.double(), ref.detach(), **TOL)
    w = torch.randn(ref.shape, dtype=torch.float64)
    got, want = (torch.autograd.grad((y.double() * w).sum(), leaves) for y in (out, ref))
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b.float(), **TOL)
FD = dict(eps=1e-2, atol=2e-2, rtol=2e-2, nondet_tol=0.0)  # float32 finite differences, as test_gradcheck.py

pytestmark = pytest.mark.filterwarnings("ignore:Input #[0-9] requires gradient and is not a double")

# user 0 and 3 get no 'follows' edge, game 2 no edge at all, 'rates' has no edges
RELATIONS = {("user", "follows", "user"): ([0, 1, 2, 2], [1, 2, 1, 1]),
             ("user", "plays", "game"): ([0, 1, 3, 1], [0, 0, 1, 0]),
             ("game", "played_by", "user"): ([0, 1, 0], [0, 3, 3]),
             ("user", "rates", "game"): ([], [])}
COUNTS = {"user": 4, "game": 3}


def hetero():
    return topograph.heterograph({k: (torch.tensor(u, dtype=torch.int64), torch.tensor(v, dtype=torch.int64))
                                  for k, (u, v) in RELATIONS.items()}, num_nodes_dict=COUNTS)


def adjacency(src, dst, n_src, n_dst, weight=None):
    """a[d, s] = the (weighted) edges s -> d, float64."""
    w = torch.ones(len(src), dtype=torch.float64) if weight is None else weight.double()
    return torch.zeros(n_dst, n_src, dtype=torch.float64).index_put((torch.as_tensor(dst, dtype=torch.int64),
                                                                     torch.as_tensor(src, dtype=torch.int64)),
                                                                    w, accumulate=True)


def dense_graph_conv(layer, a, x, a_counts=None):
    """GraphConv's equation over a dense adjacency `a` (weighted: the messages' weights); the degrees count the
    edges (a_counts, by default a itself)."""
    counts = a if a_counts is None else a_counts
    out_deg, in_deg = counts.sum(0).clamp(min=1), counts.sum(1).clamp(min=1)
    power = {"both": -0.5, "right": -1.0, "left": -1.0, "none": 0.0}[layer.norm]
    h = x.double() * (out_deg ** power if layer.norm in ("both", "left") else 1).reshape(-1, 1)
    h = a @ h @ layer.weight.double()
    h = h * (in_deg ** power if layer.norm in ("both", "right") else 1).reshape(-1, 1)
    return h + layer.bias.double()


def dense_sage_mean(layer, a, x_src, x_dst):
    neigh = a @ x_src.double() / a.sum(1, keepdim=True).clamp(min=1)
    return F.linear(x_dst.double(), layer.fc_self.weight.double(), layer.fc_self.bias.double()) + \
        F.linear(neigh, layer.fc_neigh.weight.double())


def layers(norm="both"):
    mods = {"follows": GraphConv(5, 3, norm=norm), ("user", "plays", "game"): GraphConv(5, 3, norm=norm),
            "played_by": SAGEConv(5, 3, "mean"), "rates": GraphConv(5, 3, norm=norm)}
    with torch.no_grad():  # biases of their own: no ties between relations (a max's gradient picks one of a tie)
        for m in mods.values():
            for name, p in m.named_parameters():
                if name.endswith("bias"):
                    p.normal_()
    return mods


def per_relation_reference(mods, x, edge_weight=None):
    """{dst type: [each relation's dense output, in the graph's relation order]}, float64."""
    out = {"user": [], "game": []}
    for (s, e, d), (u, v) in sorted(RELATIONS.items()):
        a = adjacency(u, v, COUNTS[s], COUNTS[d])
        layer = mods.get((s, e, d), mods.get(e))
        if isinstance(layer, SAGEConv):
            out[d].append(dense_sage_mean(layer, a, x[s], x[d]))
        elif edge_weight is not None and e == "follows":
            out[d].append(dense_graph_conv(layer, adjacency(u, v, COUNTS[s], COUNTS[d], edge_weight), x[s], a))
        else:
            out[d].append(dense_graph_conv(layer, a, x[s]))
    return out


AGGREGATE = {"sum": lambda o: torch.stack(o).sum(0), "mean": lambda o: torch.stack(o).mean(0),
             "max": lambda o: torch.stack(o).amax(0), "min": lambda o: torch.stack(o).amin(0),
             "stack": lambda o: torch.stack(o, 1)}


@pytest.mark.parametrize("aggregate", list(AGGREGATE))
def test_hetero_graph_conv_aggregates_the_relations_modules(aggregate):
    g, mods = hetero(), layers()
    conv = HeteroGraphConv(mods, aggregate)
    x = {"user": torch.randn(4, 5, requires_grad=True), "game": torch.randn(3, 5, requires_grad=True)}
    out = conv(g, x)
    ref = {t: AGGREGATE[aggregate](o) for t, o in per_relation_reference(mods, x).items()}
    assert sorted(out) == ["game", "user"]
    for t in out:
        torch.testing.assert_close(out[t].double(), ref[t].detach(), **TOL)
    # gradients of the inputs and of every relation's parameters
    w = {t: torch.randn(ref[t].shape, dtype=torch.float64) for t in ref}
    leaves = list(x.values()) + list(conv.parameters())
    got = torch.autograd.grad(sum((out[t].double() * w[t]).sum() for t in out), leaves, allow_unused=True)
    want = torch.autograd.grad(sum((ref[t] * w[t]).sum() for t in ref), leaves, allow_unused=True)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b.float(), **TOL)
    assert sorted(dict(conv.named_parameters())) == sorted(f"mods.{k}.{n}" for k, m in mods.items()
                                                           for n, _ in m.named_parameters())  # DGL's names


def test_hetero_graph_conv_edge_arguments_callable_aggregate_and_skipped_types():
    g, mods = hetero(), layers()
    seen = []

    def weighted(outputs, dsttype):
        seen.append((dsttype, len(outputs)))
        return sum((i + 1) * o for i, o in enumerate(outputs))

    conv = HeteroGraphConv(mods, weighted)
    x = {"user": torch.randn(4, 5), "game": torch.randn(3, 5)}
    w = torch.rand(4) + 0.5
    out = conv(g, x, mod_kwargs={"follows": {"edge_weight": w}})
    ref = per_relation_reference(mods, x, edge_weight=w)
    assert sorted(seen) == [("game", 2), ("user", 2)]
    for t in out:
        torch.testing.assert_close(out[t].double(), sum((i + 1) * o for i, o in enumerate(ref[t])).detach(), **TOL)
    # a pair of dicts without game sources: played_by is skipped, user gets follows' output alone
    out = HeteroGraphConv(mods)(g, ({"user": x["user"]}, x))
    torch.testing.assert_close(out["user"].double(), per_relation_reference(mods, x)["user"][1].detach(), **TOL)
    assert sorted(out) == ["game", "user"]


def test_hetero_graph_conv_on_a_block_gives_the_graphs_rows():
    g, mods = hetero(), layers(norm="right")  # in-degree norms: a block with every in-edge of its seeds agrees
    conv = HeteroGraphConv(mods, "sum")
    x = {"user": torch.randn(4, 5), "game": torch.randn(3, 5)}
    full = conv(g, x)
    seeds = {"user": torch.tensor([3, 1]), "game": torch.tensor([0, 2])}
    block = topograph.to_block(topograph.in_subgraph(g, seeds), seeds)
    nid = {t: block.srcnodes[t].data[topograph.NID].long() for t in ("user", "game")}
    out = conv(block, {t: x[t][nid[t]] for t in nid})
    for t in seeds:
        assert out[t].shape == (len(seeds[t]), 3)
        torch.testing.assert_close(out[t], full[t][seeds[t]], **TOL)


def test_hetero_graph_conv_finite_differences():
    g = hetero()
    conv = HeteroGraphConv(layers(), "mean")

    def run(xu, xg):
        out = conv(g, {"user": xu, "game": xg})
        return torch.cat([out["user"], out["game"]])

    assert torch.autograd.gradcheck(run, (torch.randn(4, 5, requires_grad=True),
                                          torch.randn(3, 5, requires_grad=True)), **FD)


def test_hetero_graph_conv_errors():
    g = hetero()
    x = {"user": torch.randn(4, 5), "game": torch.randn(3, 5)}
    with pytest.raises(KeyError, match=r"no module for relation \('user', 'rates', 'game'\)"):
        HeteroGraphConv({k: v for k, v in layers().items() if k != "rates"})(g, x)
    with pytest.raises(topograph.DGLError, match="aggregate must be one of"):
        HeteroGraphConv(layers(), "prod")
    with pytest.raises(KeyError, match="needs features of its destination type 'game'"):
        HeteroGraphConv(layers())(g, {"user": x["user"]})


# --- GATv2Conv
N = 7
SRC = torch.tensor([0, 0, 1, 2, 3, 4, 5, 6, 6, 2, 0])
DST = torch.tensor([1, 1, 2, 3, 4, 5, 6, 0, 2, 2, 0])  # a multi-edge 0->1, self loops on 0 and 2; every node reached


def dense_gatv2(layer, x_src, x_dst, src, dst, n_dst):
    """GATv2 by loops over the destinations, float64 through the layer's parameters: ([n_dst, H, F], alpha [E, H])."""
    heads, width = layer._num_heads, layer._out_feats
    def lin(fc, x):
        return F.linear(x.double(), fc.weight.double(), None if fc.bias is None else fc.bias.double())

    zs, zd = lin(layer.fc_src, x_src).view(-1, heads, width), lin(layer.fc_dst, x_dst).view(-1, heads, width)
    e = (F.leaky_relu(zs[src] + zd[dst], layer.leaky_relu.negative_slope) * layer.attn.double()).sum(-1)  # [E, H]
    alpha = torch.zeros_like(e)
    out = torch.zeros(n_dst, heads, width, dtype=torch.float64)
    for d in range(n_dst):
        into = (dst == d).nonzero().flatten()
        if into.numel():
            alpha = alpha.index_put((into,), torch.softmax(e[into], 0))
            out[d] = (alpha[into].unsqueeze(-1) * zs[src[into]]).sum(0)
    if layer.res_fc is not None:
        res = layer.res_fc
        residual = x_dst.double() if isinstance(res, torch.nn.Identity) else lin(res, x_dst)
        out = out + residual.view(n_dst, heads, width)
    return out, alpha


@pytest.mark.parametrize("options", [dict(), dict(share_weights=True), dict(residual=True), dict(bias=False),
                                     dict(residual=True, num_heads=3, in_feats=6)], ids=str)
def test_gatv2_conv_is_its_equation(options):
    options = dict(options)
    in_feats, heads = options.pop("in_feats", 5), options.pop("num_heads", 2)
    layer = GATv2Conv(in_feats, 2, heads, **options)
    g = topograph.graph((SRC, DST), num_nodes=N)
    x = torch.randn(N, in_feats, requires_grad=True)
    out, alpha = layer(g, x, get_attention=True)
    ref, ref_alpha = dense_gatv2(layer, x, x, SRC, DST, N)
    torch.testing.assert_close(alpha.squeeze(-1).double(), ref_alpha.detach(), **TOL)
    assert_matches_dense(out, ref, [x] + list(layer.parameters()))


def test_gatv2_conv_on_a_pair_and_a_block():
    layer = GATv2Conv((4, 3), 2, 2, residual=True)
    src, dst = torch.tensor([0, 1, 1, 4]), torch.tensor([0, 0, 2, 1])  # bipartite 5 -> 3, every destination reached
    g = topograph.heterograph({("a", "r", "b"): (src, dst)}, num_nodes_dict={"a": 5, "b": 3})
    xs, xd = torch.randn(5, 4), torch.randn(3, 3)
    torch.testing.assert_close(layer(g, (xs, xd)).double(), dense_gatv2(layer, xs, xd, src, dst, 3)[0].detach(), **TOL)
    layer = GATv2Conv(4, 2, 2)
    g = topograph.graph((SRC, DST), num_nodes=N)
    x = torch.randn(N, 4)
    seeds = torch.tensor([2, 0, 5])
    block = topograph.to_block(topograph.in_subgraph(g, seeds), seeds)
    torch.testing.assert_close(layer(block, x[block.srcdata[topograph.NID].long()]), layer(g, x)[seeds], **TOL)
    assert torch.autograd.gradcheck(lambda h: layer(g, h), (torch.randn(N, 4, requires_grad=True),), **FD)
    with pytest.raises(ValueError, match="no in-edge"):
        GATv2Conv(4, 2, 1)(topograph.graph(([0], [1]), num_nodes=3), torch.randn(3, 4))


# --- RelGraphConv and TypedLinear
TYPES = torch.tensor([0, 2, 1, 0, 2, 2, 1, 0, 0, 1, 2])  # relation 3 of 4 has no edges


def relation_weights(linear):
    """Each relation's [in, out] weight from the parameters, by the regularizer's definition, float64."""
    w = linear.W.double()
    if linear.regularizer == "basis":
        return torch.einsum("rb,bio->rio", linear.coeff.double(), w)
    if linear.regularizer == "bdd":
        blocks = w.view(linear.num_types, linear.num_bases, linear.submat_in, linear.submat_out)
        return torch.stack([torch.block_diag(*blocks[r]) for r in range(linear.num_types)])
    return w


def test_typed_linear_is_a_loop_over_the_rows():
    for regularizer, bases in ((None, None), ("basis", 2), ("bdd", 2)):
        linear = TypedLinear(4, 6, 3, regularizer, bases)
        x, types = torch.randn(9, 4), torch.tensor([2, 0, 0, 1, 2, 2, 0, 1, 1])
        weights = relation_weights(linear)
        want = torch.stack([x[i].double() @ weights[types[i]] for i in range(9)])
        torch.testing.assert_close(linear(x, types).double(), want.detach(), **TOL)
        assert linear(x[:0], types[:0]).shape == (0, 6)


@pytest.mark.parametrize("regularizer,bases", [(None, None), ("basis", 2), ("basis", None), ("bdd", 2)])
@pytest.mark.parametrize("options", [dict(), dict(self_loop=False, bias=False), dict(layer_norm=True,
                                                                                      activation=torch.tanh)], ids=str)
def test_rel_graph_conv_is_its_equation(regularizer, bases, options):
    layer = RelGraphConv(4, 6, 4, regularizer, bases, **options)
    g = topograph.graph((SRC, DST), num_nodes=N)
    x = torch.randn(N, 4, requires_grad=True)
    norm = torch.rand(len(SRC), 1) + 0.5
    out = layer(g, x, TYPES, norm)
    weights = relation_weights(layer.linear_r)  # [R, in, out]
    h = sum(adjacency(SRC[TYPES == r], DST[TYPES == r], N, N, norm[TYPES == r].flatten()) @ x.double() @ weights[r]
            for r in range(4))
    if layer.layer_norm:
        ln = layer.layer_norm_weight
        h = F.layer_norm(h, (6,), ln.weight.double(), ln.bias.double(), ln.eps)
    if layer.bias:
        h = h + layer.h_bias.double()
    if layer.self_loop:
        h = h + x.double() @ layer.loop_weight.double()
    if layer.activation is not None:
        h = layer.activation(h)
    assert_matches_dense(out, h, [x] + list(layer.parameters()))


def test_rel_graph_conv_on_a_block_without_norm_and_finite_differences():
    layer = RelGraphConv(4, 3, 3, "basis", 2)
    g = topograph.graph((SRC, DST), num_nodes=N)
    types = TYPES.clamp(max=2)
    x = torch.randn(N, 4)
    seeds = torch.tensor([2, 6])
    sub = topograph.in_subgraph(g, seeds)
    block = topograph.to_block(sub, seeds)
    eid = sub.edata[topograph.EID][block.edata[topograph.EID].long()].long()  # the block's edges in g
    out = layer(block, x[block.srcdata[topograph.NID].long()], types[eid])
    torch.testing.assert_close(out, layer(g, x, types.tolist())[seeds], **TOL)  # etypes as a list, too
    edgeless = topograph.graph(([], []), num_nodes=3)  # every destination gets 0 from the sum
    torch.testing.assert_close(layer(edgeless, x[:3], torch.tensor([], dtype=torch.int64)),
                               x[:3] @ layer.loop_weight + layer.h_bias)
    norm = torch.rand(len(SRC)) + 0.5  # [E]: a 1-D norm is taken as [E, 1]
    assert torch.autograd.gradcheck(lambda h: layer(g, h, types, norm), (torch.randn(N, 4, requires_grad=True),), **FD)


def test_rel_graph_conv_errors():
    g = topograph.graph((SRC, DST), num_nodes=N)
    layer = RelGraphConv(4, 6, 3)
    with pytest.raises(topograph.DGLError, match=r"type id 3 at position 1 is not in \[0, 3\)"):
        layer(g, torch.randn(N, 4), torch.tensor([0, 3] + [0] * 9))
    with pytest.raises(topograph.DGLError, match=r"one type id per row \(11\)"):
        layer(g, torch.randn(N, 4), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"norm must be \[E\] or \[E, 1\]"):
        layer(g, torch.randn(N, 4), TYPES.clamp(max=2), torch.ones(3))
    with pytest.raises(ValueError, match="divisible by num_bases"):
        RelGraphConv(4, 6, 3, "bdd", 4)
    with pytest.raises(ValueError, match="regularizer must be"):
        RelGraphConv(4, 6, 3, "low_rank")


# --- GINEConv
def test_gine_conv_is_a_loop_over_the_edges():
    layer = GINEConv(torch.nn.Linear(3, 2), init_eps=0.2, learn_eps=True)
    g = topograph.graph((SRC, DST), num_nodes=N + 1)  # node 7: no edges, (1 + eps) h alone
    x, e = torch.randn(N + 1, 3, requires_grad=True), torch.randn(len(SRC), 3, requires_grad=True)
    out = layer(g, x, e)
    neigh = torch.zeros(N + 1, 3, dtype=torch.float64)
    for i in range(len(SRC)):
        neigh[DST[i]] = neigh[DST[i]] + torch.relu(x[SRC[i]].double() + e[i].double())
    lin = layer.apply_func
    want = F.linear((1 + layer.eps.double()) * x.double() + neigh, lin.weight.double(), lin.bias.double())
    assert_matches_dense(out, want, [x, e] + list(layer.parameters()))
    with pytest.raises(ValueError, match=r"edge_feat must have one row per edge \(11\)"):
        layer(g, x, e[:3])
