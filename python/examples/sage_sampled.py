"""GraphSAGE trained on neighbour-sampled mini-batches, as a DGL user writes it (dgl.dataloading's
MultiLayerNeighborSampler and DataLoader, dgl.nn's SAGEConv, a plain PyTorch loop), on a graph in the Planetoid
.npz layout (../shared/data/planetoid/SOURCE.txt: edge_index, CSR features, labels, split masks).

    build/python-venv/bin/python python/examples/sage_sampled.py ../shared/data/planetoid/cora.npz
    build/python-venv/bin/python python/examples/sage_sampled.py GRAPH.npz --fanouts 10,10 --epochs 30

Defaults: 2 SAGEConv layers (mean), hidden 64, dropout 0.5, fan-outs 10 and 25 (input layer first), batches of
64 training nodes, Adam lr 1e-2, weight decay 5e-4, 40 epochs; the epoch with the best validation accuracy
picks the model whose test accuracy is reported (evaluated with every in-edge: fan-out -1).
"""
from __future__ import annotations

import argparse
import time

import topograph  # before torch: both OpenMP pools then wait briefly (python/README.md, "Threads")

import numpy as np
import torch
import torch.nn.functional as F

from topograph.dataloading import DataLoader, MultiLayerNeighborSampler
from topograph.nn import SAGEConv


def load_planetoid(path: str):
    """(graph with ndata feat / label / masks, number of classes) from a Planetoid-layout .npz."""
    d = np.load(path)
    u, v = (torch.from_numpy(d["edge_index"][i]) for i in (0, 1))
    n, f = (int(x) for x in d["x_shape"])
    rows = torch.repeat_interleave(torch.arange(n), torch.from_numpy(np.diff(d["x_indptr"])))
    x = torch.zeros(n, f).index_put_((rows, torch.from_numpy(d["x_indices"])), torch.from_numpy(d["x_data"]))
    g = topograph.graph((u, v), num_nodes=n)
    g.ndata["feat"] = x / x.sum(1, keepdim=True).clamp(min=1)  # row-normalised bag of words
    g.ndata["label"] = torch.from_numpy(d["y"])
    for split in ("train", "val", "test"):
        g.ndata[f"{split}_mask"] = torch.from_numpy(d[f"{split}_mask"])
    return g, int(d["y"].max()) + 1


class SAGE(torch.nn.Module):
    def __init__(self, in_feats: int, hidden: int, classes: int, dropout: float):
        super().__init__()
        self.layers = torch.nn.ModuleList([SAGEConv(in_feats, hidden, "mean"), SAGEConv(hidden, classes, "mean")])
        self.dropout = torch.nn.Dropout(dropout)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, self.dropout(h))
            if i + 1 < len(self.layers):
                h = F.relu(h)
        return h


def accuracy(model, g, nodes, batch: int) -> float:
    """Accuracy on `nodes`, each with every in-edge of every layer (fan-out -1)."""
    model.eval()
    correct = 0
    with torch.no_grad():
        loader = DataLoader(g, nodes, MultiLayerNeighborSampler([-1] * len(model.layers)), batch_size=batch)
        for input_nodes, output_nodes, blocks in loader:
            logits = model(blocks, blocks[0].srcdata["feat"])
            correct += int((logits.argmax(1) == blocks[-1].dstdata["label"]).sum())
    return correct / max(1, nodes.numel())


def train(path: str, fanouts=(10, 25), hidden: int = 64, dropout: float = 0.5, batch: int = 64, lr: float = 1e-2,
          weight_decay: float = 5e-4, epochs: int = 40, seed: int = 0, log=print) -> dict:
    torch.manual_seed(seed)
    g, classes = load_planetoid(path)
    nodes = {s: g.ndata[f"{s}_mask"].nonzero().flatten() for s in ("train", "val", "test")}
    model = SAGE(g.ndata["feat"].shape[1], hidden, classes, dropout)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    loader = DataLoader(g, nodes["train"], MultiLayerNeighborSampler(list(fanouts)), batch_size=batch, shuffle=True)
    best = {"val": -1.0}
    start = time.perf_counter()
    for epoch in range(epochs):
        model.train()
        for input_nodes, output_nodes, blocks in loader:
            loss = F.cross_entropy(model(blocks, blocks[0].srcdata["feat"]), blocks[-1].dstdata["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
        val = accuracy(model, g, nodes["val"], 512)
        if val > best["val"]:
            best = {"val": val, "test": accuracy(model, g, nodes["test"], 512), "epoch": epoch + 1}
        log(f"epoch {epoch + 1:3d}  loss {float(loss):.4f}  val {val:.4f}  best val {best['val']:.4f} "
            f"(test {best['test']:.4f}, epoch {best['epoch']})")
    best["seconds"] = time.perf_counter() - start
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("graph", help="a Planetoid-layout .npz")
    parser.add_argument("--fanouts", default="10,25")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    result = train(args.graph, tuple(int(f) for f in args.fanouts.split(",")), args.hidden, batch=args.batch,
                   epochs=args.epochs, seed=args.seed)
    print(f"best validation accuracy {result['val']:.4f} at epoch {result['epoch']}: test accuracy "
          f"{result['test']:.4f} ({result['seconds']:.1f} s)")


if __name__ == "__main__":
    main()
