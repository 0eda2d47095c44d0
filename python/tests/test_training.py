"""A DGL user's loop with topograph's names: a two-layer GAT (u_add_v -> leaky_relu -> edge_softmax ->
u_mul_e_sum) trained with torch.optim.Adam on a planted-partition graph must learn (the optimizer updates the
parameters in place between steps, so every step's forward reads fresh memory)."""
import torch

import topograph


class GATLayer(torch.nn.Module):
    def __init__(self, d_in, d_out, heads):
        super().__init__()
        self.heads, self.d_out = heads, d_out
        self.fc = torch.nn.Linear(d_in, heads * d_out, bias=False)
        self.attn_l = torch.nn.Parameter(torch.randn(1, heads, d_out) * 0.1)
        self.attn_r = torch.nn.Parameter(torch.randn(1, heads, d_out) * 0.1)

    def forward(self, g, x):
        h = self.fc(x).view(-1, self.heads, self.d_out)  # [N, H, D]
        el = (h * self.attn_l).sum(-1, keepdim=True)  # [N, H, 1]
        er = (h * self.attn_r).sum(-1, keepdim=True)
        e = torch.nn.functional.leaky_relu(topograph.ops.u_add_v(g, el, er), 0.2)  # [E, H, 1]
        a = topograph.nn.functional.edge_softmax(g, e)
        return topograph.ops.u_mul_e_sum(g, h, a)  # [N, H, D]


def test_a_gat_learns_a_planted_partition():
    torch.manual_seed(0)
    n, classes, m = 120, 3, 1200
    label = torch.arange(n) % classes
    # edges mostly inside a class: the label is readable from the neighbourhood, barely from the features
    src = torch.randint(0, n, (m,))
    inside = (src + classes * torch.randint(1, n // classes, (m,))) % n
    dst = torch.where(torch.rand(m) < 0.9, inside, torch.randint(0, n, (m,)))
    g = topograph.add_self_loop(topograph.remove_self_loop(topograph.graph((src, dst), num_nodes=n)))
    x = torch.randn(n, 8) + 0.3 * torch.nn.functional.one_hot(label, 8).float()
    l1, l2 = GATLayer(8, 8, 4), GATLayer(32, classes, 1)
    opt = torch.optim.Adam(list(l1.parameters()) + list(l2.parameters()), lr=0.02)
    train = torch.arange(n) < n // 2
    losses = []
    for _ in range(60):
        h = torch.nn.functional.elu(l1(g, x).flatten(1))
        logits = l2(g, h).squeeze(1)
        loss = torch.nn.functional.cross_entropy(logits[train], label[train])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    accuracy = (logits[~train].argmax(-1) == label[~train]).float().mean().item()
    assert losses[-1] < 0.5 * losses[0]
    assert accuracy > 0.6  # chance is 1/3
