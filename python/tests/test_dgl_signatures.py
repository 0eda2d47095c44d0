"""Call signatures as DGL 2.1 spells them: a DGL script passes keywords by DGL's parameter names and relies on
DGL's defaults, so each case here calls topograph the way a DGL 2.1 script does. The DGL 2.1 facts are written
out in the comments (taken from inspect.signature over DGL 2.1.0 and its source); real DGL is not needed."""
import inspect

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from topograph import DGLError


def ring(n=4):
    g = topograph.graph((torch.arange(n), (torch.arange(n) + 1) % n), num_nodes=n)
    g.ndata["x"] = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    g.edata["w"] = torch.arange(n, dtype=torch.float32) + 10
    return g


def hetero():
    return topograph.heterograph({("user", "plays", "game"): ([0, 1], [1, 1]),
                                  ("user", "follows", "user"): ([0], [1])})


# DGL 2.1: node_subgraph(graph, nodes, *, relabel_nodes=True, store_ids=True, output_device=None), and the same
# first parameter name `graph` for edge_subgraph(graph, edges, *, ...), in_subgraph(graph, nodes, *, ...) and
# edge_type_subgraph(graph, etypes, output_device=None).
def test_subgraph_functions_take_graph_by_dgl_name():
    g = ring()
    assert topograph.node_subgraph(graph=g, nodes=[0, 1]).num_edges() == 1
    assert topograph.edge_subgraph(graph=g, edges=[0, 2]).num_edges() == 2
    assert topograph.in_subgraph(graph=g, nodes=[1]).num_edges() == 1
    assert topograph.edge_type_subgraph(graph=hetero(), etypes=["plays"]).canonical_etypes == [
        ("user", "plays", "game")]


# DGL 2.1: to_homogeneous(G, ndata=None, edata=None, store_type=True, return_count=False) -- capital G.
def test_to_homogeneous_takes_G():
    homo = topograph.to_homogeneous(G=hetero())
    assert (homo.num_nodes(), homo.num_edges()) == (4, 3)


# DGL 2.1: the top-level dgl.copy_u(g, x_node, etype=None), dgl.copy_v(g, x_node, etype=None) and
# dgl.u_{add,sub,mul,div,dot}_v(g, x_node, y_node, etype=None) (dgl/mpops/edgewise.py), while dgl.ops's keep
# (g, x) / (g, x, y).
def test_top_level_edgewise_ops_take_x_node_y_node():
    g = ring()
    x = torch.arange(4, dtype=torch.float32).unsqueeze(1) + 1
    u, v = g.edges()
    assert torch.equal(topograph.copy_u(g, x_node=x), x[u])
    assert torch.equal(topograph.copy_v(g, x_node=x), x[v])
    for name, op in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul), ("div", torch.div)]:
        out = getattr(topograph, f"u_{name}_v")(g, x_node=x, y_node=2 * x)
        assert torch.allclose(out, op(x[u], 2 * x[v])), name
    assert torch.allclose(topograph.u_dot_v(g, x_node=x, y_node=x), (x[u] * x[v]).sum(1, keepdim=True))
    hg = hetero()
    xu = torch.randn(hg.num_nodes("user"), 2)
    pu, _ = hg.edges(etype="plays")
    assert torch.equal(topograph.copy_u(hg, x_node=xu, etype="plays"), xu[pu])
    assert list(inspect.signature(topograph.u_add_v).parameters) == ["g", "x_node", "y_node", "etype"]
    # dgl.ops keeps DGL 2.1's (g, x, y)
    assert torch.equal(topograph.ops.u_add_v(g, x=x, y=x), x[u] + x[v])


# DGL 2.1: graph(data, *, num_nodes=None, idtype=None, device=None, row_sorted=False, col_sorted=False); the two
# flags are hints that the COO is sorted (no effect on the graph built from the same data).
def test_graph_takes_row_sorted_col_sorted():
    g = topograph.graph(([0, 0, 1], [1, 2, 2]), row_sorted=True, col_sorted=True)
    assert g.num_edges() == 3 and [t.tolist() for t in g.edges()] == [[0, 0, 1], [1, 2, 2]]
    g = topograph.graph(([1, 0], [0, 1]), num_nodes=3, row_sorted=False, col_sorted=False)
    assert g.num_nodes() == 3


# DGL 2.1: reverse(g, copy_ndata=True, copy_edata=False, *, share_ndata=None, share_edata=None); share_* are the
# old names, which (with a warning) override copy_*. g.reverse is the same function.
def test_reverse_share_ndata_share_edata():
    g = ring()
    with pytest.warns(UserWarning, match="renamed to copy_ndata"):
        r = topograph.reverse(g, share_ndata=False, share_edata=True)
    assert "x" not in r.ndata and torch.equal(r.edata["w"], g.edata["w"])
    with pytest.warns(UserWarning, match="renamed to copy_edata"):
        r = g.reverse(share_edata=True)
    assert "x" in r.ndata and torch.equal(r.edata["w"], g.edata["w"])
    r = topograph.reverse(g)
    assert "x" in r.ndata and "w" not in r.edata


# DGL 2.1: to_networkx(g, node_attrs=None, edge_attrs=None, ntype_attr='ntype', etype_attr='etype',
# eid_attr='id'); for a graph of one node type and one relation DGL 2.1 ignores the last three (its homogeneous
# path always names the edge id 'id'), and that is the only graph topograph converts.
def test_to_networkx_takes_type_and_id_attr_names():
    pytest.importorskip("networkx")
    g = ring()
    nxg = topograph.to_networkx(g, ["x"], ["w"], "ntype", "etype", "id")
    assert sorted(nxg.edges(data="id")) == [(0, 1, 0), (1, 2, 1), (2, 3, 2), (3, 0, 3)]
    nxg = g.to_networkx(node_attrs=["x"], ntype_attr="t", etype_attr="e", eid_attr="eid")
    assert sorted(nxg.edges(data="id")) == [(0, 1, 0), (1, 2, 1), (2, 3, 2), (3, 0, 3)]


# DGL 2.1: WeightAndSum.forward(self, g, feats) and dgl.nn.pytorch.utils.Identity.forward(self, x).
def test_module_forward_parameter_names():
    from topograph.nn.pytorch.utils import Identity

    layer = topograph.nn.WeightAndSum(3)
    g = topograph.batch([ring(2), ring(3)])
    feats = torch.randn(5, 3)
    assert torch.equal(layer(g=g, feats=feats), layer(g, feats))
    x = torch.randn(2)
    assert Identity()(x=x) is x and isinstance(Identity(), torch.nn.Identity)


# DGL 2.1: sample_neighbors(g, nodes, fanout, edge_dir='in', prob=None, replace=False, copy_ndata=True,
# copy_edata=True, _dist_training=False, exclude_edges=None, output_device=None), all positional-or-keyword;
# g.sample_neighbors is the same function.
def test_sample_neighbors_dgl_parameters():
    g = ring()
    # exclude_edges positionally, after _dist_training, as DGL 2.1 orders them: node 1's one in-edge is 0
    sub = topograph.sampling.sample_neighbors(g, [1], -1, "in", None, False, True, True, False, torch.tensor([0]))
    assert sub.num_edges() == 0
    sub = topograph.sampling.sample_neighbors(g, [1], -1, output_device="cpu")
    assert sub.num_edges() == 1 and sub.device == torch.device("cpu")
    sub = g.sample_neighbors([1], -1, exclude_edges=torch.tensor([0]), output_device=torch.device("cpu"))
    assert sub.num_edges() == 0
    with pytest.raises(NotImplementedError, match="_dist_training"):
        topograph.sampling.sample_neighbors(g, [1], -1, _dist_training=True)


# DGL 2.1: DGLGraph.adj_external(transpose=False, ctx=F.cpu(), scipy_fmt=None, etype=None) and
# inc / incidence_matrix(typestr, ctx=F.cpu(), etype=None): the matrix is on the CPU unless ctx says otherwise,
# whatever the graph's device.
def test_adj_external_and_inc_default_to_cpu():
    cpu = torch.device("cpu")
    for method in (topograph.DGLGraph.adj_external, topograph.DGLGraph.inc, topograph.DGLGraph.incidence_matrix):
        assert inspect.signature(method).parameters["ctx"].default == cpu, method
    g = ring()
    assert g.adj_external().device == cpu and g.inc("in").device == cpu


# DGL 2.1: DGLGraph.set_n_initializer(initializer, field=None, ntype=None) and
# set_e_initializer(initializer, field=None, etype=None): the type may come positionally.
def test_initializers_take_type_positionally():
    hg = hetero()
    hg.set_n_initializer(topograph.init.zero_initializer, None, "user")
    hg.set_e_initializer(topograph.init.zero_initializer, "w", "plays")
    with pytest.raises(DGLError):
        hg.set_n_initializer(lambda shape, dtype, ctx, id_range: None, None, "user")


# DGL 2.1: DGLGraph.prop_nodes(nodes_generator, message_func, reduce_func, apply_node_func=None, etype=None) and
# prop_edges(edges_generator, message_func, reduce_func, apply_node_func=None, etype=None).
def test_prop_methods_take_etype():
    fn = topograph.function
    hg = hetero()
    hg.nodes["user"].data["h"] = torch.tensor([[1.0], [2.0]])
    hg.nodes["game"].data["h"] = torch.zeros(2, 1)
    hg.prop_nodes([torch.tensor([1])], fn.copy_u("h", "m"), fn.sum("m", "h"), etype="plays")
    assert hg.nodes["game"].data["h"].ravel().tolist() == [0.0, 3.0]
    hg.prop_edges([torch.tensor([0])], fn.copy_u("h", "m"), fn.sum("m", "h"), None, "follows")
    assert hg.nodes["user"].data["h"].ravel().tolist() == [1.0, 1.0]


# DGL 2.1: DGLGraph.to(device, **kwargs), the keywords going to each feature's copy (torch's Tensor.to).
def test_graph_to_passes_keywords_to_feature_copies():
    g = ring()
    moved = g.to("cpu", non_blocking=True)
    assert torch.equal(moved.ndata["x"], g.ndata["x"])
    copied = g.to("cpu", copy=True)
    assert torch.equal(copied.ndata["x"], g.ndata["x"])
    assert copied.ndata["x"].data_ptr() != g.ndata["x"].data_ptr()
