"""Full-graph node classification as DGL's GCN and GAT tutorials write it (ndata features, labels and masks,
GraphConv / GATConv, cross-entropy on the training nodes, Adam), on a random homophilous graph: node i is in
class i % 4, most edges join nodes of one class, and features are noisy class centres, so passing messages
helps.

The same file runs on DGL or on topograph (`import topograph as dgl`):

    python node_classification.py                  # DGL
    TOPO_AS_DGL=1 python node_classification.py    # topograph

main() returns each model's training losses per step, validation accuracies and final logits (eval mode),
which python/tests/test_dgl_scripts.py compares between the two libraries. GAT keeps attn_drop at 0: its
attention dropout mask is drawn by Topograph's own generator in topograph (a fused kernel), so only torch's
feature dropout would give both libraries the same masks.
"""
import os

if os.environ.get("TOPO_AS_DGL") == "1":
    import topograph as dgl  # before torch: both OpenMP pools then wait briefly (python/README.md, "Threads")
else:
    import dgl

import torch
import torch.nn as nn
import torch.nn.functional as F

dglnn = dgl.nn


def make_graph(num_nodes: int = 240, num_classes: int = 4, in_feats: int = 16):
    """A graph with self loops and ndata feat [N, in_feats], label [N], train / val / test masks [N] bool."""
    labels = torch.arange(num_nodes) % num_classes
    src = torch.randint(0, num_nodes, (4 * num_nodes,))
    # 80% of the edges stay within the source's class (a multiple of num_classes away), the rest are random
    same = (src + num_classes * torch.randint(1, num_nodes // num_classes, src.shape)) % num_nodes
    dst = torch.where(torch.rand(src.shape) < 0.8, same, torch.randint(0, num_nodes, src.shape))
    g = dgl.graph((src, dst), num_nodes=num_nodes)
    g = dgl.remove_self_loop(g)
    g = dgl.add_self_loop(g)  # GraphConv and GATConv refuse nodes without in-edges
    centres = torch.randn(num_classes, in_feats)
    g.ndata["feat"] = centres[labels] + 1.5 * torch.randn(num_nodes, in_feats)
    g.ndata["label"] = labels
    order = torch.randperm(num_nodes)
    for name, part in (("train_mask", order[:60]), ("val_mask", order[60:120]), ("test_mask", order[120:])):
        mask = torch.zeros(num_nodes, dtype=torch.bool)
        mask[part] = True
        g.ndata[name] = mask
    return g


class GCN(nn.Module):
    def __init__(self, in_feats: int, h_feats: int, num_classes: int):
        super().__init__()
        self.conv1 = dglnn.GraphConv(in_feats, h_feats)
        self.conv2 = dglnn.GraphConv(h_feats, num_classes)
        self.dropout = nn.Dropout(0.5)

    def forward(self, g, in_feat):
        h = F.relu(self.conv1(g, in_feat))  # [N, h_feats]
        return self.conv2(g, self.dropout(h))  # [N, num_classes]


class GAT(nn.Module):
    def __init__(self, in_size: int, hid_size: int, out_size: int, heads=(4, 1)):
        super().__init__()
        self.gat_layers = nn.ModuleList([
            dglnn.GATConv(in_size, hid_size, heads[0], feat_drop=0.5, attn_drop=0.0, activation=F.elu),
            dglnn.GATConv(hid_size * heads[0], out_size, heads[1], feat_drop=0.5, attn_drop=0.0, residual=True),
        ])

    def forward(self, g, inputs):
        h = inputs
        for i, layer in enumerate(self.gat_layers):
            h = layer(g, h)  # [N, heads, out]
            h = h.mean(1) if i == len(self.gat_layers) - 1 else h.flatten(1)  # heads averaged / concatenated
        return h


def train(g, model, steps: int):
    """(losses per step, validation accuracy per step)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    features, labels = g.ndata["feat"], g.ndata["label"]
    train_mask, val_mask = g.ndata["train_mask"], g.ndata["val_mask"]
    losses, val_accs = [], []
    for _ in range(steps):
        model.train()
        logits = model(g, features)
        loss = F.cross_entropy(logits[train_mask], labels[train_mask])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        pred = logits.argmax(1)
        losses.append(loss.item())
        val_accs.append((pred[val_mask] == labels[val_mask]).float().mean().item())
    return losses, val_accs


def main(seed: int = 0, steps: int = 25, verbose: bool = False) -> dict:
    torch.manual_seed(seed)
    dgl.seed(seed)  # DGL's own generator (topograph's is torch's: the same seed again)
    g = make_graph().int().to(torch.device("cpu"))  # 32-bit ids, on the device that trains (DGL's examples)
    results = {}
    for name, model in (("gcn", GCN(16, 16, 4)), ("gat", GAT(16, 8, 4))):
        losses, val_accs = train(g, model, steps)
        model.eval()
        with torch.no_grad():
            logits = model(g, g.ndata["feat"])
        test_mask = g.ndata["test_mask"]
        test_acc = (logits[test_mask].argmax(1) == g.ndata["label"][test_mask]).float().mean().item()
        results[name] = {"losses": losses, "val_acc": val_accs, "logits": logits, "test_acc": test_acc}
        if verbose:
            print(f"{name}: loss {losses[0]:.4f} -> {losses[-1]:.4f} over {steps} steps, val accuracy "
                  f"{val_accs[0]:.3f} -> {val_accs[-1]:.3f}, test accuracy {test_acc:.3f}")
    return results


if __name__ == "__main__":
    print(f"running on {dgl.__name__} {getattr(dgl, '__version__', '')}")
    main(verbose=True)
