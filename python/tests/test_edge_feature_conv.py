"""GatedGCNConv, EGNNConv, CFConv (nn/edge_feature_conv.py): equations against per-edge references written here
(a node without in-edges included), EGNN's equivariance (rotating and shifting the coordinates rotates and
shifts the output's, leaves the features), and, where dgl imports, outputs and gradients equal to DGL 2.1's
with its state_dicts loaded."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from test_conv_extra import N, TOL, _compare, graph


def edges(g):
    return tuple(t.long() for t in g.edges())


def test_gated_gcn_by_reference():
    torch.manual_seed(0)
    g = graph()
    src, dst = edges(g)
    conv = topograph.nn.GatedGCNConv(4, 3, 4, batch_norm=False, residual=False, activation=None)
    x, e = torch.randn(N, 4), torch.randn(g.num_edges(), 3)
    e_new = conv.D(x)[src] + conv.E(x)[dst] + conv.C(e)
    sigma = torch.sigmoid(e_new)
    num = torch.zeros(N, 4).index_add(0, dst, sigma * conv.B(x)[src])
    den = torch.zeros(N, 4).index_add(0, dst, sigma)
    h, e_out = conv(g, x, e)
    torch.testing.assert_close(h, conv.A(x) + num / (den + 1e-6), **TOL)
    torch.testing.assert_close(e_out, e_new, **TOL)


def test_egnn_by_reference_and_equivariance():
    torch.manual_seed(1)
    g = graph()
    src, dst = edges(g)
    conv = topograph.nn.EGNNConv(4, 8, 5, edge_feat_size=2)
    h, x, a = torch.randn(N, 4), torch.randn(N, 3), torch.randn(g.num_edges(), 2)
    diff = x[src] - x[dst]
    radial = (diff ** 2).sum(1, keepdim=True)
    m = conv.edge_mlp(torch.cat([h[src], h[dst], radial, a], 1))
    mx = conv.coord_mlp(m) * diff / (radial.sqrt() + 1e-30)
    count = torch.zeros(N).index_add(0, dst, torch.ones(len(dst))).clamp(min=1).unsqueeze(1)
    h_ref = conv.node_mlp(torch.cat([h, torch.zeros(N, 8).index_add(0, dst, m)], 1))
    x_ref = x + torch.zeros(N, 3).index_add(0, dst, mx) / count
    h_out, x_out = conv(g, h, x, a)
    torch.testing.assert_close(h_out, h_ref, **TOL)
    torch.testing.assert_close(x_out, x_ref, **TOL)
    rotation, _ = torch.linalg.qr(torch.randn(3, 3))
    shift = torch.randn(3)
    h_rot, x_rot = conv(g, h, x @ rotation.T + shift, a)
    torch.testing.assert_close(h_rot, h_out, **TOL)
    torch.testing.assert_close(x_rot, x_out @ rotation.T + shift, **TOL)


def test_cfconv_by_reference():
    torch.manual_seed(2)
    g = graph()
    src, dst = edges(g)
    conv = topograph.nn.CFConv(4, 3, 6, 2)
    x, e = torch.randn(N, 4), torch.randn(g.num_edges(), 3)
    agg = torch.zeros(N, 6).index_add(0, dst, conv.project_node(x)[src] * conv.project_edge(e))
    torch.testing.assert_close(conv(g, x, e), conv.project_out(agg), **TOL)
    assert float(topograph.nn.ShiftedSoftplus()(torch.zeros(1))) == pytest.approx(0.0, abs=1e-7)


def test_against_dgl():
    dgl = pytest.importorskip("dgl")
    import dgl.nn.pytorch as dnn

    torch.manual_seed(3)
    gd, gt = graph(dgl), graph(topograph)
    E = gt.num_edges()
    x, e, coords = torch.randn(N, 4), torch.randn(E, 4), torch.randn(N, 3)
    for kwargs in ({}, {"batch_norm": False, "residual": False}):
        md, mt = dnn.GatedGCNConv(4, 4, 4, **kwargs), topograph.nn.GatedGCNConv(4, 4, 4, **kwargs)
        _compare(md.eval(), mt.eval(), lambda m, a, b: torch.cat([o.reshape(-1) for o in m(gd, a, b)]),
                 lambda m, a, b: torch.cat([o.reshape(-1) for o in m(gt, a, b)]), [x, e])
    # EGNN without self loops: sqrt(|x - x|^2) at 0 has an infinite derivative (NaN gradients in both libraries)
    u, v = (t[t != w] for t, w in ((gt.edges()[0], gt.edges()[1]), (gt.edges()[1], gt.edges()[0])))
    nd, nt = dgl.graph((u, v), num_nodes=N), topograph.graph((u, v), num_nodes=N)
    for edge_size in (0, 4):
        md, mt = dnn.EGNNConv(4, 8, 5, edge_size), topograph.nn.EGNNConv(4, 8, 5, edge_size)
        extra = [e[:len(u)]] if edge_size else []
        _compare(md, mt, lambda m, *a: torch.cat([o.reshape(-1) for o in m(nd, *a)]),
                 lambda m, *a: torch.cat([o.reshape(-1) for o in m(nt, *a)]), [x, coords] + extra)
    _compare(dnn.CFConv(4, 4, 6, 2), topograph.nn.CFConv(4, 4, 6, 2), lambda m, a, b: m(gd, a, b),
             lambda m, a, b: m(gt, a, b), [x, e])
