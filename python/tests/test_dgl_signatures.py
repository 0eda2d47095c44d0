"""Call signatures as DGL 2.1 spells them: a DGL script passes keywords by DGL's parameter names and relies on
DGL's defaults, so each case here calls topograph the way a DGL 2.1 script does. The DGL 2.1 facts are written
out in the comments (taken from inspect.signature over DGL 2.1.0 and its source); real DGL is not needed."""
import inspect

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch



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


# DGL 2.1: WeightAndSum.forward(self, g, feats) and dgl.nn.pytorch.utils.Identity.forward(self, x).
def test_module_forward_parameter_names():
    from topograph.nn.pytorch.utils import Identity

    layer = topograph.nn.WeightAndSum(3)
    g = topograph.batch([ring(2), ring(3)])
    feats = torch.randn(5, 3)
    assert torch.equal(layer(g=g, feats=feats), layer(g, feats))
    x = torch.randn(2)
    assert Identity()(x=x) is x and isinstance(Identity(), torch.nn.Identity)
