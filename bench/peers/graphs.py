"""Full-graph node classification in DGL 2.1 and PyG, one (library, model) per process, on a graph the user
gives as a Planetoid-layout .npz (`topo-graph generate SPEC --out FILE.npz` writes one; ../shared/data/planetoid/
SOURCE.txt describes the layout). Run by bench/peers/graphs.sh beside `topo-train --task node-classify` on the
same file, model sizes and threads (issue #36, item 2); never imported by the build.

    python bench/peers/graphs.py GRAPH.npz --lib dgl|pyg --model gcn|sage|gat --epochs 5 --threads 2 --json OUT

The models are node-classify's recipes (models/graph_nets/registration.cpp): 2 layers; GCN hidden 16 (symmetric
normalisation), GraphSAGE hidden 16 (mean aggregator, the node's own features through a second weight), GAT 8
heads x 8 then one output head; dropout as the recipes (0.5, GAT 0.6 on features and attention); Adam lr 0.01
(GAT 0.005), weight decay 5e-4. The graph: every listed edge plus a self loop per node, as node-classify builds
it (GCNConv told not to add its own). One epoch = one full-graph training step (forward, loss over the training
nodes, backward, Adam), evaluation left out, as topo-train's epoch_train_seconds. Writes JSON: per-epoch
seconds (the first apart), the median of the others, and the process's peak RSS (VmHWM) after the epochs and
after loading, so the training's own growth shows too.
"""
import argparse
import json
import os
import resource
import statistics
import time

os.environ.setdefault("DGLBACKEND", "pytorch")


def vm_hwm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def load_graph(path, torch):
    import numpy as np

    d = np.load(path)
    u, v = (torch.from_numpy(d["edge_index"][i]).long() for i in (0, 1))
    n = int(d["y"].shape[0])
    if "x" in d.files:
        x = torch.from_numpy(d["x"]).float()
    else:
        rows = torch.repeat_interleave(torch.arange(n), torch.from_numpy(np.diff(d["x_indptr"])))
        shape = tuple(int(s) for s in d["x_shape"])
        x = torch.zeros(shape).index_put_((rows, torch.from_numpy(d["x_indices"])), torch.from_numpy(d["x_data"]))
    loops = torch.arange(n)
    src, dst = torch.cat([u, loops]), torch.cat([v, loops])
    y = torch.from_numpy(d["y"]).long()
    train = torch.from_numpy(d["train_mask"])
    return src, dst, n, x, y, train


def dgl_model(name, in_dim, classes, torch):
    import dgl.nn.pytorch as dnn

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if name == "gcn":
                self.l1, self.l2 = dnn.GraphConv(in_dim, 16, activation=torch.relu), dnn.GraphConv(16, classes)
            elif name == "sage":
                self.l1, self.l2 = dnn.SAGEConv(in_dim, 16, "mean"), dnn.SAGEConv(16, classes, "mean")
            else:
                self.l1 = dnn.GATConv(in_dim, 8, 8, feat_drop=0.6, attn_drop=0.6, activation=torch.nn.functional.elu)
                self.l2 = dnn.GATConv(64, classes, 1, feat_drop=0.6, attn_drop=0.6)
            self.drop = torch.nn.Dropout(0.5)

        def forward(self, g, x):
            if name == "gat":
                return self.l2(g, self.l1(g, x).flatten(1)).mean(1)
            h = self.l1(g, self.drop(x) if name == "sage" else x)
            h = torch.relu(h) if name == "sage" else h
            return self.l2(g, self.drop(h))

    return Net()


def pyg_model(name, in_dim, classes, torch):
    from torch_geometric.nn import GATConv, GCNConv, SAGEConv

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if name == "gcn":
                self.l1, self.l2 = GCNConv(in_dim, 16, add_self_loops=False), GCNConv(16, classes, add_self_loops=False)
            elif name == "sage":
                self.l1, self.l2 = SAGEConv(in_dim, 16, aggr="mean"), SAGEConv(16, classes, aggr="mean")
            else:
                self.l1 = GATConv(in_dim, 8, heads=8, dropout=0.6, add_self_loops=False)
                self.l2 = GATConv(64, classes, heads=1, dropout=0.6, add_self_loops=False)
            self.drop = torch.nn.Dropout(0.6 if name == "gat" else 0.5)

        def forward(self, edge_index, x):
            if name == "gat":
                return self.l2(self.drop(torch.nn.functional.elu(self.l1(self.drop(x), edge_index))), edge_index)
            h = torch.relu(self.l1(self.drop(x) if name == "sage" else x, edge_index))
            return self.l2(self.drop(h), edge_index)

    return Net()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("npz")
    ap.add_argument("--lib", choices=["dgl", "pyg"], required=True)
    ap.add_argument("--model", choices=["gcn", "sage", "gat"], required=True)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    src, dst, n, x, y, train = load_graph(args.npz, torch)
    classes = int(y.max()) + 1
    if args.lib == "dgl":
        import dgl

        graph = dgl.graph((src, dst), num_nodes=n)
        model = dgl_model(args.model, x.shape[1], classes, torch)
    else:
        graph = torch.stack([src, dst])
        model = pyg_model(args.model, x.shape[1], classes, torch)
    loaded_rss = vm_hwm_bytes()
    opt = torch.optim.Adam(model.parameters(), lr=0.005 if args.model == "gat" else 0.01, weight_decay=5e-4)
    seconds = []
    for _ in range(args.epochs):
        start = time.perf_counter()
        model.train()
        loss = torch.nn.functional.cross_entropy(model(graph, x)[train], y[train])
        opt.zero_grad()
        loss.backward()
        opt.step()
        seconds.append(time.perf_counter() - start)
    import importlib.metadata as md

    result = {"lib": args.lib, "version": md.version("dgl" if args.lib == "dgl" else "torch_geometric"),
              "torch": torch.__version__, "model": args.model, "nodes": n, "edges_with_loops": int(src.numel()),
              "threads": args.threads, "epoch_seconds": seconds,
              "median_epoch_seconds": statistics.median(seconds[1:] or seconds),
              "peak_rss_bytes": vm_hwm_bytes(), "rss_after_loading_bytes": loaded_rss, "final_loss": float(loss)}
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps({k: result[k] for k in ("lib", "model", "median_epoch_seconds", "peak_rss_bytes")}))


if __name__ == "__main__":
    main()
