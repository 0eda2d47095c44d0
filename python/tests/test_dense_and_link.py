"""The dense convolutions (nn/dense_conv.py) and the knowledge-graph heads (nn/link.py): DenseGraphConv and
DenseSAGEConv equal GraphConv and SAGEConv('gcn') on the same graph with the same weights, DenseChebConv its
recurrence written here, TransE / TransR their scores; and, where dgl imports, outputs and gradients equal to
DGL 2.1's with its state_dicts loaded."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

from test_conv_extra import TOL, _compare

SRC = torch.tensor([0, 0, 1, 2, 2, 3, 4, 4, 3, 1, 5])
DST = torch.tensor([1, 1, 2, 2, 0, 4, 4, 1, 1, 3, 0])
N = 6


def dense_adjacency():
    return torch.zeros(N, N).index_put_((DST, SRC), torch.tensor(1.0), accumulate=True)  # adj[d, s]


def test_dense_equals_sparse_convs():
    torch.manual_seed(0)
    g, adj, x = topograph.graph((SRC, DST), num_nodes=N), dense_adjacency(), torch.randn(N, 4)
    for norm in ("both", "right", "none"):
        for width in (3, 6):  # both product orders
            dense = topograph.nn.DenseGraphConv(4, width, norm=norm)
            sparse = topograph.nn.GraphConv(4, width, norm=norm, allow_zero_in_degree=True)
            sparse.weight.data.copy_(dense.weight.data), sparse.bias.data.copy_(dense.bias.data)
            torch.testing.assert_close(dense(adj, x), sparse(g, x), **TOL)
    dense_sage = topograph.nn.DenseSAGEConv(4, 3)
    sage = topograph.nn.SAGEConv(4, 3, "gcn")
    sage.fc_neigh.weight.data.copy_(dense_sage.fc.weight.data)
    sage.bias.data.copy_(dense_sage.fc.bias.data)
    torch.testing.assert_close(dense_sage(adj, x), sage(g, x), **TOL)


def test_dense_cheb_conv_recurrence():
    torch.manual_seed(1)
    adj, x = dense_adjacency(), torch.randn(N, 4)
    conv = topograph.nn.DenseChebConv(4, 2, k=3)
    d = adj.sum(1).clamp(min=1).pow(-0.5)
    lap = torch.eye(N) - d[:, None] * adj * d[None, :]
    lam = torch.linalg.eigvals(lap).real.max()
    l_hat = 2 * lap / lam - torch.eye(N)
    t = [torch.eye(N), l_hat, 2 * l_hat @ l_hat - torch.eye(N)]
    ref = sum(t[i] @ x @ conv.W[i] for i in range(3)) + conv.bias
    torch.testing.assert_close(conv(adj, x), ref, **TOL)
    torch.testing.assert_close(conv(adj, x, lambda_max=2.0), sum(
        tk @ x @ conv.W[i] for i, tk in enumerate([torch.eye(N), lap - torch.eye(N),
                                                   2 * (lap - torch.eye(N)) @ (lap - torch.eye(N)) - torch.eye(N)]))
        + conv.bias, **TOL)


def test_trans_scores():
    torch.manual_seed(2)
    head, tail, rels = torch.randn(5, 4), torch.randn(5, 4), torch.tensor([0, 2, 1, 2, 0])
    te = topograph.nn.TransE(3, 4, p=2)
    torch.testing.assert_close(te(head, tail, rels), -(head + te.rel_emb.weight[rels] - tail).norm(dim=-1))
    tr = topograph.nn.TransR(3, 2, 4)
    m = tr.rel_project.weight.view(3, 4, 2)[rels]
    gap = torch.einsum("ed,edr->er", head, m) + tr.rel_emb.weight[rels] - torch.einsum("ed,edr->er", tail, m)
    torch.testing.assert_close(tr(head, tail, rels), -gap.abs().sum(-1), **TOL)  # p = 1


def test_against_dgl():
    pytest.importorskip("dgl")
    import dgl.nn.pytorch as dnn

    torch.manual_seed(3)
    adj, x = dense_adjacency(), torch.randn(N, 4)
    for norm in ("both", "right", "none"):
        _compare(dnn.DenseGraphConv(4, 3, norm=norm), topograph.nn.DenseGraphConv(4, 3, norm=norm),
                 lambda m, a, f: m(a, f), lambda m, a, f: m(a, f), [adj, x])
    _compare(dnn.DenseSAGEConv(4, 3), topograph.nn.DenseSAGEConv(4, 3), lambda m, a, f: m(a, f),
             lambda m, a, f: m(a, f), [adj, x])
    _compare(dnn.DenseChebConv(4, 3, 3), topograph.nn.DenseChebConv(4, 3, 3), lambda m, a, f: m(a, f, 1.7),
             lambda m, a, f: m(a, f, 1.7), [adj, x])
    head, tail, rels = torch.randn(5, 4), torch.randn(5, 4), torch.tensor([0, 2, 1, 2, 0])
    _compare(dnn.TransE(3, 4), topograph.nn.TransE(3, 4), lambda m, h, t: m(h, t, rels),
             lambda m, h, t: m(h, t, rels), [head, tail])
    _compare(dnn.TransR(3, 2, 4), topograph.nn.TransR(3, 2, 4), lambda m, h, t: m(h, t, rels),
             lambda m, h, t: m(h, t, rels), [head, tail])


def test_pna_conv_by_per_node_reference():
    """Mean, max, var and moment3 scaled by identity and amplification, node by node in Python."""
    torch.manual_seed(5)
    g = topograph.graph((SRC, DST), num_nodes=N)  # node 5 has no in-edge
    conv = topograph.nn.PNAConv(4, 4, ["mean", "max", "var", "moment3"], ["identity", "amplification"], 1.5).eval()
    x = torch.randn(N, 4)
    tower = conv.towers[0]
    msg = tower.M(torch.cat([x[SRC], x[DST]], dim=1))
    rows = []
    for d in range(N):
        m = msg[DST == d]
        if m.shape[0] == 0:
            rows.append(torch.cat([x[d], torch.zeros(32)]))
            continue
        c3 = ((m - m.mean(0)) ** 3).mean(0)
        aggs = torch.cat([m.mean(0), m.max(0).values, torch.relu((m * m).mean(0) - m.mean(0) ** 2),
                          torch.sign(c3) * (c3.abs() + 1e-30) ** (1 / 3)])
        rows.append(torch.cat([x[d], aggs, aggs * torch.log(torch.tensor(m.shape[0] + 1.0)) / 1.5]))
    h = tower.batchnorm(tower.U(torch.stack(rows)) * (1.0 / N) ** 0.5)
    ref = conv.mixing_layer(h) + x
    torch.testing.assert_close(conv(g, x), ref, rtol=1e-3, atol=1e-4)


def test_pna_conv_against_dgl():
    """PNAConv with every aggregator and scaler, towers, edge features, a node without in-edges and a batch of
    two graphs (the size norm), against DGL 2.1's bucketed reducer (state_dict loaded, eval mode: BatchNorm's
    running statistics)."""
    dgl = pytest.importorskip("dgl")
    import dgl.nn.pytorch as dnn

    torch.manual_seed(4)
    parts = [(SRC, DST, N), (torch.tensor([0, 1, 2, 2]), torch.tensor([1, 2, 0, 1]), 3)]
    gt = topograph.batch([topograph.graph((s, d), num_nodes=n) for s, d, n in parts])
    gd = dgl.batch([dgl.graph((s, d), num_nodes=n) for s, d, n in parts])
    x, e = torch.randn(N + 3, 8), torch.randn(gt.num_edges(), 3)
    # var, std and the moments follow DGL's formulas (std = sqrt(E[m^2] - E[m]^2), moments' n-th roots), which
    # are ill-conditioned where a node's messages (nearly) agree, e.g. a node of one in-edge: there the two
    # libraries' roundings differ by ~1e-4 in value and without bound in gradient. So: the well-conditioned
    # aggregators with every gradient, all nine by value within 1e-3.
    scalers = ["identity", "amplification", "attenuation"]
    everything = ["mean", "sum", "max", "min", "std", "var", "moment3", "moment4", "moment5"]
    for towers, edge_size in ((1, 0), (2, 3)):
        args = [x] + ([e] if edge_size else [])
        made = lambda lib, aggs: lib.PNAConv(8, 8, aggs, scalers, 1.3, num_towers=towers,  # noqa: E731
                                             edge_feat_size=edge_size).eval()
        _compare(made(dnn, ["mean", "sum", "max", "min"]), made(topograph.nn, ["mean", "sum", "max", "min"]),
                 lambda m, *a: m(gd, *a), lambda m, *a: m(gt, *a), args)
        md, mt = made(dnn, everything), made(topograph.nn, everything)
        mt.load_state_dict(md.state_dict())
        torch.testing.assert_close(mt(gt, *args), md(gd, *args), rtol=1e-3, atol=1e-3)
    with pytest.raises(ValueError, match="unknown"):
        topograph.nn.PNAConv(8, 8, ["median"], scalers, 1.0)
