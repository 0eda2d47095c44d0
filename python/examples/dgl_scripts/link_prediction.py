"""Link prediction as DGL's tutorial writes it: hold out 10% of the edges (dgl.remove_edges), train GraphSAGE on
the rest, score node pairs with a dot product (apply_edges(fn.u_dot_v)) or an MLP (an apply_edges UDF), against
negatives drawn by dgl.dataloading.negative_sampler.Uniform each step; binary cross-entropy; AUC on the held-out
edges against pairs that are no edge. The graph is random with 5 communities (most edges inside one; features
are noisy community centres) and weighted edges (edata['weight'], passed to SAGEConv as edge_weight).

The same file runs on DGL or on topograph (`import topograph as dgl`):

    python link_prediction.py                  # DGL
    TOPO_AS_DGL=1 python link_prediction.py    # topograph

main() returns, per predictor, the losses per step, the test AUC and the final test scores, which
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

fn = dgl.function
dglnn = dgl.nn


def make_graph(num_nodes: int = 120, communities: int = 5, in_feats: int = 12):
    """A graph of num_nodes nodes (node i in community i % communities), ndata feat [N, in_feats], edata weight [E]."""
    src = torch.randint(0, num_nodes, (5 * num_nodes,))
    same = (src + communities * torch.randint(1, num_nodes // communities, src.shape)) % num_nodes
    dst = torch.where(torch.rand(src.shape) < 0.9, same, torch.randint(0, num_nodes, src.shape))
    g = dgl.graph((src, dst), num_nodes=num_nodes)
    centres = torch.randn(communities, in_feats)
    g.ndata["feat"] = centres[torch.arange(num_nodes) % communities] + torch.randn(num_nodes, in_feats)
    g.edata["weight"] = 0.5 + torch.rand(g.num_edges())
    return g


class GraphSAGE(nn.Module):
    def __init__(self, in_feats: int, h_feats: int):
        super().__init__()
        self.conv1 = dglnn.SAGEConv(in_feats, h_feats, "mean", feat_drop=0.1)
        self.conv2 = dglnn.SAGEConv(h_feats, h_feats, "mean")

    def forward(self, g, in_feat, edge_weight=None):
        h = F.relu(self.conv1(g, in_feat, edge_weight=edge_weight))  # [N, h_feats]
        return self.conv2(g, h, edge_weight=edge_weight)


class DotPredictor(nn.Module):
    def forward(self, g, h):
        with g.local_scope():
            g.ndata["h"] = h
            g.apply_edges(fn.u_dot_v("h", "h", "score"))  # [E, 1]
            return g.edata["score"][:, 0]


class MLPPredictor(nn.Module):
    def __init__(self, h_feats: int):
        super().__init__()
        self.W1 = nn.Linear(h_feats * 2, h_feats)
        self.W2 = nn.Linear(h_feats, 1)

    def apply_edges(self, edges):
        """A UDF over a batch of edges: {'score': [E]} from each edge's two ends."""
        h = torch.cat([edges.src["h"], edges.dst["h"]], 1)
        return {"score": self.W2(F.relu(self.W1(h))).squeeze(1)}

    def forward(self, g, h):
        with g.local_scope():
            g.ndata["h"] = h
            g.apply_edges(self.apply_edges)
            return g.edata["score"]


def compute_loss(pos_score, neg_score):
    scores = torch.cat([pos_score, neg_score])
    labels = torch.cat([torch.ones(pos_score.shape[0]), torch.zeros(neg_score.shape[0])])
    return F.binary_cross_entropy_with_logits(scores, labels)


def compute_auc(pos_score, neg_score) -> float:
    """The probability that a positive pair scores above a negative one (ties count half)."""
    diff = pos_score.view(-1, 1) - neg_score.view(1, -1)
    return ((diff > 0).float() + 0.5 * (diff == 0).float()).mean().item()


def main(seed: int = 0, steps: int = 30, verbose: bool = False) -> dict:
    torch.manual_seed(seed)
    dgl.seed(seed)  # DGL's own generator (topograph's is torch's: the same seed again)
    g = make_graph()
    n = g.num_nodes()

    # split the edges: 10% held out for testing, paired with as many node pairs that are no edge
    u, v = g.edges()
    eids = torch.randperm(g.num_edges())
    test_size = int(len(eids) * 0.1)
    test_pos_u, test_pos_v = u[eids[:test_size]], v[eids[:test_size]]
    adj = torch.zeros(n, n, dtype=torch.bool)
    adj[u, v] = True
    neg_u, neg_v = torch.nonzero(~adj & ~torch.eye(n, dtype=torch.bool), as_tuple=True)
    neg_eids = torch.randperm(len(neg_u))[:test_size]
    test_pos_g = dgl.graph((test_pos_u, test_pos_v), num_nodes=n)
    test_neg_g = dgl.graph((neg_u[neg_eids], neg_v[neg_eids]), num_nodes=n)

    # the training graph: every other edge, with its weight (remove_edges keeps the remaining edges' features)
    train_g = dgl.remove_edges(g, eids[:test_size])
    neg_sampler = dgl.dataloading.negative_sampler.Uniform(2)  # 2 corrupted destinations per positive edge

    results = {}
    for name, pred in (("dot", DotPredictor()), ("mlp", MLPPredictor(16))):
        model = GraphSAGE(train_g.ndata["feat"].shape[1], 16)
        optimizer = torch.optim.Adam(list(model.parameters()) + list(pred.parameters()), lr=0.01)
        losses = []
        for _ in range(steps):
            neg_src, neg_dst = neg_sampler(train_g, torch.arange(train_g.num_edges()))
            train_neg_g = dgl.graph((neg_src, neg_dst), num_nodes=n)
            h = model(train_g, train_g.ndata["feat"], train_g.edata["weight"])
            loss = compute_loss(pred(train_g, h), pred(train_neg_g, h))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            h = model(train_g, train_g.ndata["feat"], train_g.edata["weight"])
            pos_score, neg_score = pred(test_pos_g, h), pred(test_neg_g, h)
        auc = compute_auc(pos_score, neg_score)
        results[name] = {"losses": losses, "auc": auc, "scores": torch.cat([pos_score, neg_score]),
                         "train_edges": train_g.num_edges()}
        if verbose:
            print(f"{name}: loss {losses[0]:.4f} -> {losses[-1]:.4f} over {steps} steps, test AUC {auc:.3f}")
    return results


if __name__ == "__main__":
    print(f"running on {dgl.__name__} {getattr(dgl, '__version__', '')}")
    main(verbose=True)
