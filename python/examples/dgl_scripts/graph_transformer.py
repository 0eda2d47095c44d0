"""A graph transformer as DGL 2's tutorial writes one ("Graph Transformer in a Nutshell"): dgl.sparse for the
attention (the adjacency as a SparseMatrix, bsddmm -> softmax -> bspmm per head), random-walk positional
encodings (dgl.random_walk_pe), a SumPooling readout, GraphDataLoader and a plain PyTorch loop. The tutorial
trains on OGB's molhiv; here the graphs are made: class 1 graphs are rings (every node on a cycle), class 0
trees, so the return probabilities of short walks tell them apart. Two departures, both so that the two
libraries' runs stay step for step alike: LayerNorm where the tutorial has BatchNorm, and no key bias (each a
parameter whose gradient is 0 in exact arithmetic, so Adam steps on rounding noise).

The same file runs on DGL or on topograph (`import topograph as dgl`):

    python graph_transformer.py                  # DGL
    TOPO_AS_DGL=1 python graph_transformer.py    # topograph

main() returns the losses per step and the final test logits, which python/tests/test_dgl_scripts.py compares
between the two libraries.
"""
import os

if os.environ.get("TOPO_AS_DGL") == "1":
    import topograph as dgl  # before torch: both OpenMP pools then wait briefly (python/README.md, "Threads")
    import topograph.sparse as dglsp
else:
    import dgl
    import dgl.sparse as dglsp

import torch
import torch.nn as nn
import torch.nn.functional as F


def synthetic_dataset(num_graphs: int, pos_enc_size: int):
    """[(graph, label)]: 6-12 nodes, bidirected; class 1 a ring, class 0 a random tree; ndata['PE'] the random-walk
    encoding."""
    dataset = []
    for i in range(num_graphs):
        label = i % 2
        n = int(torch.randint(6, 13, ()).item())
        if label:
            src, dst = torch.arange(n), (torch.arange(n) + 1) % n
        else:
            src = torch.tensor([int(torch.randint(0, j, ()).item()) for j in range(1, n)])
            dst = torch.arange(1, n)
        g = dgl.to_bidirected(dgl.graph((src, dst), num_nodes=n))
        g.ndata["PE"] = dgl.random_walk_pe(g, k=pos_enc_size)
        dataset.append((g, torch.tensor(label)))
    return dataset


class SparseMHA(nn.Module):
    """Sparse multi-head attention over the graph's edges, the tutorial's module."""

    def __init__(self, hidden_size: int = 16, num_heads: int = 4):
        super().__init__()
        self.hidden_size, self.num_heads = hidden_size, num_heads
        self.head_dim = hidden_size // num_heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(hidden_size, hidden_size)
        # no key bias: it adds q . b to every score of a row, which the softmax removes, so its gradient is 0
        # in exact arithmetic and Adam turns the rounding noise into steps (the two libraries' runs then part)
        self.k_proj = nn.Linear(hidden_size, hidden_size, bias=False)
        self.v_proj = nn.Linear(hidden_size, hidden_size)
        self.out_proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, A, h):
        N = len(h)
        q = self.q_proj(h).reshape(N, self.head_dim, self.num_heads) * self.scaling  # [N, dh, nh]
        k = self.k_proj(h).reshape(N, self.head_dim, self.num_heads)
        v = self.v_proj(h).reshape(N, self.head_dim, self.num_heads)
        attn = dglsp.bsddmm(A, q, k.transpose(1, 0))  # (sparse) [N, N, nh]
        attn = attn.softmax()  # (sparse) [N, N, nh]
        out = dglsp.bspmm(attn, v)  # [N, dh, nh]
        return self.out_proj(out.reshape(N, -1))


class GTLayer(nn.Module):
    def __init__(self, hidden_size: int = 16, num_heads: int = 4):
        super().__init__()
        self.MHA = SparseMHA(hidden_size, num_heads)
        # LayerNorm where the tutorial has BatchNorm: a bias before BatchNorm has the same zero gradient
        self.norm1 = nn.LayerNorm(hidden_size)
        self.norm2 = nn.LayerNorm(hidden_size)
        self.FFN1 = nn.Linear(hidden_size, hidden_size * 2)
        self.FFN2 = nn.Linear(hidden_size * 2, hidden_size)

    def forward(self, A, h):
        h = self.norm1(self.MHA(A, h) + h)
        return self.norm2(self.FFN2(F.relu(self.FFN1(h))) + h)


class GTModel(nn.Module):
    def __init__(self, pos_enc_size: int, out_size: int = 2, hidden_size: int = 16, num_layers: int = 2):
        super().__init__()
        self.pos_linear = nn.Linear(pos_enc_size, hidden_size)
        self.layers = nn.ModuleList([GTLayer(hidden_size) for _ in range(num_layers)])
        self.pooler = dgl.nn.SumPooling()
        self.predictor = nn.Sequential(nn.Linear(hidden_size, hidden_size // 2), nn.ReLU(),
                                       nn.Linear(hidden_size // 2, out_size))

    def forward(self, g, pos_enc):
        indices = torch.stack(g.edges())
        N = g.num_nodes()
        A = dglsp.spmatrix(indices, shape=(N, N))
        h = self.pos_linear(pos_enc)
        for layer in self.layers:
            h = layer(A, h)
        return self.predictor(self.pooler(g, h))


def main(seed: int = 0, epochs: int = 6, verbose: bool = False) -> dict:
    torch.manual_seed(seed)
    dgl.seed(seed)
    dataset = synthetic_dataset(64, pos_enc_size=4)
    train_loader = dgl.dataloading.GraphDataLoader(dataset[:48], batch_size=8, shuffle=True)
    test_loader = dgl.dataloading.GraphDataLoader(dataset[48:], batch_size=16)
    model = GTModel(pos_enc_size=4)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
    losses = []
    for _ in range(epochs):
        model.train()
        for bg, labels in train_loader:
            loss = F.cross_entropy(model(bg, bg.ndata["PE"]), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        bg, labels = next(iter(test_loader))
        logits = model(bg, bg.ndata["PE"])
    accuracy = (logits.argmax(1) == labels).float().mean().item()
    if verbose:
        print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} over {len(losses)} steps, test accuracy {accuracy:.3f}")
    return {"losses": losses, "logits": logits, "accuracy": accuracy}


if __name__ == "__main__":
    print(f"running on {dgl.__name__} {getattr(dgl, '__version__', '')}")
    main(verbose=True)
