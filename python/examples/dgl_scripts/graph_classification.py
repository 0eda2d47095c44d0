"""Graph classification as DGL's tutorials write it (a dataset of (graph, label) pairs, GraphDataLoader,
GINConv / GraphConv, a readout per graph, a plain PyTorch loop), on small random graphs: class 1 graphs are
denser and their nodes' first feature is shifted, so a few epochs learn it.

The same file runs on DGL or on topograph (`import topograph as dgl`):

    python graph_classification.py                  # DGL
    TOPO_AS_DGL=1 python graph_classification.py    # topograph

Two models: GIN (GINConv with an MLP, then GraphConv; mean_nodes and MaxPooling read out each graph) and the
tutorial's GCN (two GraphConv, AvgPooling). main() returns their losses per step and final test logits, which
python/tests/test_dgl_scripts.py compares between the two libraries.
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


def synthetic_dataset(num_graphs: int, in_feats: int):
    """[(graph, label)]: graphs of 4-10 nodes, bidirected, simple, with a self loop on every node (so GraphConv
    sees no zero in-degree); ndata['attr'] [n, in_feats]; label 0-d int64 (class 1: 3x the random edges)."""
    dataset = []
    for i in range(num_graphs):
        label = i % 2
        n = int(torch.randint(4, 11, ()).item())
        src = torch.randint(0, n, (n * (3 if label else 1),))
        dst = torch.randint(0, n, (src.shape[0],))
        g = dgl.graph((src, dst), num_nodes=n)
        g = dgl.to_bidirected(dgl.remove_self_loop(g))
        g = dgl.add_self_loop(g)
        attr = torch.randn(n, in_feats)
        attr[:, 0] += label
        g.ndata["attr"] = attr
        dataset.append((g, torch.tensor(label)))
    return dataset


class GIN(nn.Module):
    def __init__(self, in_feats: int, h_feats: int, num_classes: int):
        super().__init__()
        mlp = nn.Sequential(nn.Linear(in_feats, h_feats), nn.ReLU(), nn.Linear(h_feats, h_feats))
        self.conv1 = dglnn.GINConv(mlp, "sum", learn_eps=True)
        self.conv2 = dglnn.GraphConv(h_feats, h_feats)
        self.max_pool = dglnn.MaxPooling()
        self.classify = nn.Linear(2 * h_feats, num_classes)

    def forward(self, g, in_feat):
        h = F.relu(self.conv1(g, in_feat))  # [N, h_feats], N: the batch's nodes
        h = F.relu(self.conv2(g, h))
        with g.local_scope():  # the readout's feature leaves nothing behind on the batch
            g.ndata["h"] = h
            hg = torch.cat([dgl.mean_nodes(g, "h"), self.max_pool(g, h)], dim=1)  # [B, 2 * h_feats]
        return self.classify(hg)


class GCN(nn.Module):
    def __init__(self, in_feats: int, h_feats: int, num_classes: int):
        super().__init__()
        self.conv1 = dglnn.GraphConv(in_feats, h_feats)
        self.conv2 = dglnn.GraphConv(h_feats, num_classes)
        self.pool = dglnn.AvgPooling()

    def forward(self, g, in_feat):
        h = F.relu(self.conv1(g, in_feat))
        return self.pool(g, self.conv2(g, h))  # [B, num_classes]


def train(model, train_loader, epochs: int, lr: float):
    """Losses per step (floats)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        for batched_graph, labels in train_loader:  # a dgl.batch of the graphs, labels [B]
            pred = model(batched_graph, batched_graph.ndata["attr"].float())
            loss = F.cross_entropy(pred, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    return losses


def evaluate(model, test_loader):
    """(logits [num test graphs, classes], accuracy)."""
    model.eval()
    logits, correct, total = [], 0, 0
    with torch.no_grad():
        for batched_graph, labels in test_loader:
            pred = model(batched_graph, batched_graph.ndata["attr"].float())
            logits.append(pred)
            correct += (pred.argmax(1) == labels).sum().item()
            total += len(labels)
    return torch.cat(logits), correct / total


def main(seed: int = 0, epochs: int = 4, verbose: bool = False) -> dict:
    torch.manual_seed(seed)
    dgl.seed(seed)  # DGL's own generator (topograph's is torch's: the same seed again)
    dataset = synthetic_dataset(64, in_feats=8)
    train_set, test_set = dataset[:48], dataset[48:]
    results = {}
    for name, Model in (("gin", GIN), ("gcn", GCN)):
        # shuffle draws its order from torch's generator, as torch's DataLoader does (both libraries use it)
        train_loader = dgl.dataloading.GraphDataLoader(train_set, batch_size=8, shuffle=True, drop_last=False)
        test_loader = dgl.dataloading.GraphDataLoader(test_set, batch_size=16, shuffle=False)
        model = Model(8, 16, 2)
        losses = train(model, train_loader, epochs, lr=0.01)
        logits, acc = evaluate(model, test_loader)
        results[name] = {"losses": losses, "logits": logits, "accuracy": acc}
        if verbose:
            print(f"{name}: loss {losses[0]:.4f} -> {losses[-1]:.4f} over {len(losses)} steps, test accuracy {acc:.3f}")
    return results


if __name__ == "__main__":
    print(f"running on {dgl.__name__} {getattr(dgl, '__version__', '')}")
    main(verbose=True)
