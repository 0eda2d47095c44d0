"""A heterograph as DGL's RGCN and heterogeneous-graph tutorials use one: users who follow users and click items
(and the reverse relation, items clicked-by users), features and labels in g.nodes[ntype].data and
g.edges[etype].data, an RGCN of HeteroGraphConv (a GraphConv per relation; the follows edges weighted) and a
hand-written layer that passes messages over every relation with multi_update_all, then two tasks at once:
classify users (each user mostly clicks items of its own category: only the items' features tell it) and
score clicks with a dot product per edge (apply_edges(fn.u_dot_v, etype=...) on ndata set from {ntype: h}).

The same file runs on DGL or on topograph (`import topograph as dgl`):

    python hetero_rgcn.py                  # DGL
    TOPO_AS_DGL=1 python hetero_rgcn.py    # topograph

main() returns the losses per step, the final user logits and click scores, which
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


def make_graph(n_users: int = 60, n_items: int = 45, categories: int = 3, in_feats: int = 10):
    """User u's class is u % categories, item i's category i % categories; 80% of a user's clicks go to items
    of its own class. ndata: user feature (noise) / label / train_mask, item feature (noisy category centres);
    edata: follows weight [E], clicks liked [E] (1.0 where the item is of the user's class)."""
    follow_src = torch.randint(0, n_users, (3 * n_users,))
    follow_dst = torch.randint(0, n_users, (3 * n_users,))
    click_src = torch.randint(0, n_users, (6 * n_users,))
    own = (click_src % categories + categories * torch.randint(0, n_items // categories, click_src.shape))
    click_dst = torch.where(torch.rand(click_src.shape) < 0.8, own, torch.randint(0, n_items, click_src.shape))
    g = dgl.heterograph({
        ("user", "follows", "user"): (follow_src, follow_dst),
        ("user", "clicks", "item"): (click_src, click_dst),
        ("item", "clicked-by", "user"): (click_dst, click_src),
    }, num_nodes_dict={"user": n_users, "item": n_items})
    centres = torch.randn(categories, in_feats)
    g.nodes["user"].data["feature"] = torch.randn(n_users, in_feats)
    g.nodes["item"].data["feature"] = centres[torch.arange(n_items) % categories] + 0.5 * torch.randn(n_items, in_feats)
    g.nodes["user"].data["label"] = torch.arange(n_users) % categories
    g.nodes["user"].data["train_mask"] = torch.rand(n_users) < 0.6
    g.edges["follows"].data["weight"] = 0.5 + torch.rand(g.num_edges("follows"))
    g.edges["clicks"].data["liked"] = (click_src % categories == click_dst % categories).float()
    return g


class HeteroRGCNLayer(nn.Module):
    """A linear map per relation; each node averages its in-neighbours' mapped features per relation, and the
    relations' averages are summed (multi_update_all's cross reducer)."""

    def __init__(self, in_size: int, out_size: int, etypes):
        super().__init__()
        self.weight = nn.ModuleDict({name: nn.Linear(in_size, out_size) for name in etypes})

    def forward(self, G, feat_dict):
        funcs = {}
        for srctype, etype, dsttype in G.canonical_etypes:
            Wh = self.weight[etype](feat_dict[srctype])  # [num srctype nodes, out_size]
            G.nodes[srctype].data["Wh_%s" % etype] = Wh
            funcs[etype] = (fn.copy_u("Wh_%s" % etype, "m"), fn.mean("m", "h"))
        G.multi_update_all(funcs, "sum")
        return {ntype: G.nodes[ntype].data["h"] for ntype in G.ntypes}


class RGCN(nn.Module):
    def __init__(self, in_feats: int, hid_feats: int, out_feats: int, rel_names):
        super().__init__()
        self.conv1 = dglnn.HeteroGraphConv({rel: dglnn.GraphConv(in_feats, hid_feats) for rel in rel_names},
                                           aggregate="sum")
        self.conv2 = HeteroRGCNLayer(hid_feats, out_feats, rel_names)

    def forward(self, graph, inputs):
        # inputs: {ntype: [num nodes, in_feats]}; the follows edges weight their messages
        h = self.conv1(graph, inputs, mod_kwargs={"follows": {"edge_weight": graph.edges["follows"].data["weight"]}})
        h = {k: F.relu(v) for k, v in h.items()}
        return self.conv2(graph, h)  # {ntype: [num nodes, out_feats]}


class HeteroDotProductPredictor(nn.Module):
    def forward(self, graph, h, etype):
        with graph.local_scope():
            graph.ndata["h"] = h  # {ntype: tensor}: each type's rows
            graph.apply_edges(fn.u_dot_v("h", "h", "score"), etype=etype)
            return graph.edges[etype].data["score"]  # [E, 1]


class Model(nn.Module):
    def __init__(self, in_feats: int, hid_feats: int, out_feats: int, num_classes: int, rel_names):
        super().__init__()
        self.rgcn = RGCN(in_feats, hid_feats, out_feats, rel_names)
        self.classify = nn.Linear(out_feats, num_classes)
        self.pred = HeteroDotProductPredictor()

    def forward(self, g, inputs):
        h = self.rgcn(g, inputs)
        return self.classify(h["user"]), self.pred(g, h, "clicks")[:, 0]


def main(seed: int = 0, steps: int = 30, verbose: bool = False) -> dict:
    torch.manual_seed(seed)
    dgl.seed(seed)  # DGL's own generator (topograph's is torch's: the same seed again)
    g = make_graph()
    model = Model(10, 16, 8, 3, g.etypes)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    node_features = {"user": g.nodes["user"].data["feature"], "item": g.nodes["item"].data["feature"]}
    labels, train_mask = g.nodes["user"].data["label"], g.nodes["user"].data["train_mask"]
    liked = g.edges["clicks"].data["liked"]
    losses = []
    for _ in range(steps):
        logits, scores = model(g, node_features)
        loss = F.cross_entropy(logits[train_mask], labels[train_mask]) + \
            F.binary_cross_entropy_with_logits(scores, liked)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        logits, scores = model(g, node_features)
    test = ~train_mask
    acc = (logits[test].argmax(1) == labels[test]).float().mean().item()
    if verbose:
        print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} over {steps} steps, held-out user accuracy {acc:.3f}")
    return {"losses": losses, "logits": logits, "scores": scores, "accuracy": acc}


if __name__ == "__main__":
    print(f"running on {dgl.__name__} {getattr(dgl, '__version__', '')}")
    main(verbose=True)
