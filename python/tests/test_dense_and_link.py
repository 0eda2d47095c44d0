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
