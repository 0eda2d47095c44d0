"""GraphConv, SAGEConv and GATConv against their equations written densely here (an adjacency matrix with
multi-edges counted, float64), on a graph and on a block, and their errors. tests/test_against_dgl.py holds
them to DGL 2.1's outputs and gradients with the same weights."""
import pytest
import torch

import topograph
from topograph.nn import GATConv, GraphConv, SAGEConv

torch.manual_seed(0)
N = 7
SRC = torch.tensor([0, 0, 1, 2, 3, 4, 5, 6, 6, 2, 0])
DST = torch.tensor([1, 1, 2, 3, 4, 5, 6, 0, 2, 2, 0])  # a multi-edge 0->1, self loop on 0 and 2; node 1..6 reached


def adjacency():
    a = torch.zeros(N, N, dtype=torch.float32)  # a[d, s] = edges s -> d
    a.index_put_((DST, SRC), torch.ones(len(SRC), dtype=torch.float32), accumulate=True)
    return a


def graph():
    return topograph.graph((SRC, DST), num_nodes=N)


@pytest.mark.parametrize("norm", ["both", "right", "left", "none"])
@pytest.mark.parametrize("sizes", [(5, 3), (3, 5)])
def test_graph_conv_is_its_normalised_sum(norm, sizes):
    layer = GraphConv(*sizes, norm=norm)
    x = torch.randn(N, sizes[0], dtype=torch.float32)
    a = adjacency()
    out_deg, in_deg = a.sum(0).clamp(min=1), a.sum(1).clamp(min=1)
    h = x * {"both": out_deg ** -0.5, "left": 1 / out_deg}.get(norm, torch.ones(N)).view(-1, 1)
    h = a @ h @ layer.weight.detach()
    h = h * {"both": in_deg ** -0.5, "right": 1 / in_deg}.get(norm, torch.ones(N)).view(-1, 1)
    torch.testing.assert_close(layer(graph(), x), h + layer.bias.detach())


@pytest.mark.parametrize("aggregator", ["mean", "gcn", "pool"])
def test_sage_conv_aggregators(aggregator):
    layer = SAGEConv(4, 3, aggregator)
    x = torch.randn(N, 4, dtype=torch.float32)
    a = adjacency()
    deg = a.sum(1, keepdim=True)
    if aggregator == "mean":
        h = layer.fc_self(x) + layer.fc_neigh(a @ x / deg.clamp(min=1))
    elif aggregator == "gcn":
        h = layer.fc_neigh((a @ x + x) / (deg + 1)) + layer.bias
    else:
        p = torch.relu(layer.fc_pool(x))
        pooled = torch.stack([torch.stack([p[s] for s in SRC[DST == d].tolist()]).amax(0) for d in range(N)])
        h = layer.fc_self(x) + layer.fc_neigh(pooled)
    torch.testing.assert_close(layer(graph(), x), h)


def test_sage_conv_lstm_runs_an_lstm_over_each_mailbox_in_edge_order():
    # DGL's 'lstm' aggregator: the LSTM's last hidden state over a destination's messages, ordered by edge id;
    # 0 where no edge enters; edge_weight multiplies the messages; a block gives the destinations' rows
    layer = SAGEConv(4, 3, "lstm")
    x = torch.randn(N, 4, dtype=torch.float32)
    w = torch.rand(len(SRC))

    def expected(weights):
        rows = []
        for d in range(N):
            eids = torch.nonzero(DST == d).view(-1)
            if len(eids) == 0:
                neigh = torch.zeros(4)
            else:
                _, (last, _) = layer.lstm((x[SRC[eids]] * weights[eids].view(-1, 1)).unsqueeze(0))
                neigh = last.view(-1)
            rows.append(layer.fc_self(x[d]) + layer.fc_neigh(neigh))
        return torch.stack(rows)

    torch.testing.assert_close(layer(graph(), x), expected(torch.ones(len(SRC))))
    torch.testing.assert_close(layer(graph(), x, edge_weight=w), expected(w))
    seeds = torch.tensor([2, 0])
    block = topograph.to_block(topograph.in_subgraph(graph(), seeds), seeds)
    torch.testing.assert_close(layer(block, x[block.srcdata[topograph.NID]]), expected(torch.ones(len(SRC)))[seeds])
    layer(graph(), x).sum().backward()
    assert layer.lstm.weight_ih_l0.grad is not None
    assert {k.split(".")[0] for k in layer.state_dict()} == {"fc_self", "fc_neigh", "lstm"}


def test_gat_conv_edge_weight_scales_the_attention():
    # DGL >= 1.0: forward(graph, feat, edge_weight=None, get_attention=False); the weights multiply alpha after
    # the softmax, and the alpha returned is the scaled one
    layer = GATConv(4, 3, 2)
    x = torch.randn(N, 4, dtype=torch.float32)
    w = torch.rand(len(SRC))
    _, alpha = layer(graph(), x, get_attention=True)
    z = layer.fc(x).view(N, 2, 3)
    scaled = alpha * w.view(-1, 1, 1)
    expect = torch.zeros(N, 2, 3).index_add(0, DST, scaled * z[SRC]) + layer.bias.view(1, 2, 3)
    torch.testing.assert_close(layer(graph(), x, edge_weight=w), expect)
    out, att = layer(graph(), x, w, True)
    torch.testing.assert_close(out, expect)
    torch.testing.assert_close(att, scaled)
    with pytest.raises(ValueError, match="edge_weight"):
        layer(graph(), x, edge_weight=torch.ones(3))


def test_gat_conv_attention_and_block():
    layer = GATConv(4, 3, 2, residual=True)
    x = torch.randn(N, 4, dtype=torch.float32)
    z = layer.fc(x).view(N, 2, 3)
    el, er = (z * layer.attn_l).sum(-1), (z * layer.attn_r).sum(-1)  # [N, H]
    e = torch.nn.functional.leaky_relu(el[SRC] + er[DST], 0.2)  # [E, H]
    alpha = torch.zeros_like(e)
    for d in range(N):
        alpha[DST == d] = torch.softmax(e[DST == d], 0)
    expect = torch.zeros(N, 2, 3, dtype=torch.float32).index_add(0, DST, alpha.unsqueeze(-1) * z[SRC])
    expect = expect + layer.res_fc(x).view(N, 2, 3)
    out, att = layer(graph(), x, get_attention=True)
    torch.testing.assert_close(out, expect)
    torch.testing.assert_close(att.squeeze(-1), alpha)
    # on a block of destinations {2, 0}: the same rows
    seeds = torch.tensor([2, 0])
    block = topograph.to_block(topograph.in_subgraph(graph(), seeds), seeds)
    torch.testing.assert_close(layer(block, x[block.srcdata[topograph.NID]]), expect[seeds])


def test_gat_attention_equals_its_composition_forward_and_backward():
    # ops.gat_attention against leaky_relu(u_add_v) -> edge_softmax -> u_mul_e_sum, gradients of all three inputs
    g = graph()
    el, er, z = (torch.randn(*shape, dtype=torch.float32, requires_grad=True)
                 for shape in ((N, 2, 1), (N, 2, 1), (N, 2, 3)))
    fused = topograph.ops.gat_attention(g, el, er, z, 0.2)
    e = torch.nn.functional.leaky_relu(topograph.ops.u_add_v(g, el, er), 0.2)
    composed = topograph.ops.u_mul_e_sum(g, z, topograph.ops.edge_softmax(g, e))
    torch.testing.assert_close(fused, composed)
    weights = torch.randn_like(fused)
    grads_fused = torch.autograd.grad((fused * weights).sum(), (el, er, z))
    grads_composed = torch.autograd.grad((composed * weights).sum(), (el, er, z))
    for a, b in zip(grads_fused, grads_composed):
        torch.testing.assert_close(a, b)


def test_gat_conv_attention_dropout_follows_torch_seed_and_training():
    layer = GATConv(4, 3, 2, attn_drop=0.5)
    x = torch.randn(N, 4, dtype=torch.float32)
    layer.eval()
    expect = layer(graph(), x)
    torch.testing.assert_close(layer(graph(), x), expect)  # eval: no dropout
    layer.train()
    torch.manual_seed(5)
    a = layer(graph(), x)
    torch.manual_seed(5)
    b = layer(graph(), x)
    torch.testing.assert_close(a, b)  # the mask's seed comes from torch's generator
    assert not torch.allclose(a, expect)
    a.sum().backward()
    assert layer.attn_l.grad is not None and torch.isfinite(layer.attn_l.grad).all()
    with pytest.raises(ValueError, match="attn_drop"):
        topograph.ops.gat_attention(graph(), torch.zeros(N, 1), torch.zeros(N, 1), torch.zeros(N, 1, 2), 0.2, 1.0)


def test_conv_errors():
    g = topograph.graph((torch.tensor([0]), torch.tensor([1])), num_nodes=3)  # nodes 0 and 2: no in-edge
    with pytest.raises(ValueError, match="no in-edge"):
        GraphConv(2, 2)(g, torch.randn(3, 2))
    with pytest.raises(ValueError, match="no in-edge"):
        GATConv(2, 2, 1)(g, torch.randn(3, 2))
    assert GraphConv(2, 2, allow_zero_in_degree=True)(g, torch.randn(3, 2)).shape == (3, 2)
    with pytest.raises(ValueError, match="aggregator_type"):
        SAGEConv(2, 2, "max")
    with pytest.raises(ValueError, match="norm"):
        GraphConv(2, 2, norm="sym")
