"""topograph.data.SSTDataset, as dgl.data.SSTDataset: the Stanford Sentiment Treebank's trees from the local PTB
files in ../shared/data/sst/trees (split sizes, DGL's node numbering and child -> parent edges checked by hand on
one line, the vocabulary, the errors naming the missing path) and a ChildSum TreeLSTM run in the style of DGL's
tree_lstm example (mailbox UDFs, dgl.batch, prop_nodes_topo)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import os

import pytest
import torch

import topograph as dgl
from topograph import DGLError
from topograph.data import SSTDataset

SMALL = "(3 (2 I) (2 (2 (2 will) (2 be)) (2 .)))"  # a train line, numbered by hand below


@pytest.fixture(scope="module")
def trees_dir():
    from conftest import shared_data

    return shared_data("sst/trees")


@pytest.fixture(scope="module")
def train(trees_dir):
    return SSTDataset(raw_dir=trees_dir)


def _lines(trees_dir, mode):
    with open(os.path.join(trees_dir, mode + ".txt"), encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def test_split_sizes_and_properties(trees_dir, train, monkeypatch):
    assert len(train) == 8544 and train.num_classes == 5 and train.pretrained_emb is None
    assert SSTDataset.PAD_WORD == -1 and SSTDataset.UNK_WORD == -1
    # The words of all three splits, lowercased: DGL's vocab.txt's 19,536 (its documented vocab_size).
    assert train.num_vocabs == train.vocab_size == len(train.vocab) == 19536
    assert list(train.vocab)[:3] == ["the", "rock", "is"]  # train line 1, in order of first appearance
    assert list(train.vocab.values())[:3] == [0, 1, 2]
    g0 = train[0]  # DGL's docstring: train tree 0 has 71 nodes, 70 edges
    assert (g0.num_nodes(), g0.num_edges()) == (71, 70)
    assert all(g0.ndata[k].dtype == torch.int64 for k in ("x", "y", "mask"))
    # The default folder: $TOPOGRAPH_DATA_DIR/sst/trees, as ../shared/data lays it out.
    monkeypatch.setenv("TOPOGRAPH_DATA_DIR", os.path.dirname(os.path.dirname(trees_dir)))
    assert len(SSTDataset("dev")) == 1101 and len(SSTDataset(mode="test")) == 2210
    from topograph.data.tree import SSTDataset as FromTree  # DGL's example imports it from dgl.data.tree

    assert FromTree is SSTDataset


def test_small_tree_by_hand(trees_dir, train):
    i = _lines(trees_dir, "train").index(SMALL)
    g = train[i]
    # Node 0 the root, then pre-order: 1 "I", 2 (will be .), 3 (will be), 4 "will", 5 "be", 6 ".".
    src, dst = g.edges()
    assert src.tolist() == [1, 2, 3, 4, 5, 6] and dst.tolist() == [0, 0, 2, 3, 3, 2]  # child -> parent
    v = train.vocab
    assert g.ndata["x"].tolist() == [-1, v["i"], -1, -1, v["will"], v["be"], v["."]]
    assert g.ndata["y"].tolist() == [3, 2, 2, 2, 2, 2, 2]
    assert g.ndata["mask"].tolist() == [0, 1, 0, 0, 1, 1, 1]


@pytest.mark.parametrize("mode", ["train", "dev", "test"])
def test_every_tree_is_a_dag_rooted_at_node_0(trees_dir, train, mode):
    ds = train if mode == "train" else SSTDataset(mode, raw_dir=trees_dir)
    lines = _lines(trees_dir, mode)
    for idx in range(len(ds)):
        g = ds[idx]
        n = g.num_nodes()
        src, dst = g.edges()
        assert g.num_edges() == n - 1
        out_deg, in_deg = g.out_degrees(), g.in_degrees()
        assert torch.nonzero(out_deg == 0).flatten().tolist() == [0]  # one root, node 0
        assert bool((out_deg[1:] == 1).all())  # every other node has one parent
        assert bool((src > dst).all())  # pre-order: a parent precedes its children, so no cycle
        leaves = in_deg == 0
        assert torch.equal(g.ndata["mask"].bool(), leaves)
        assert bool((g.ndata["x"][~leaves] == -1).all()) and bool((g.ndata["x"][leaves] >= 0).all())
        assert int(g.ndata["y"][0]) == int(lines[idx][1])  # the root's label is the sentence label
    order = dgl.topological_nodes_generator(dgl.batch([ds[0], ds[1]]))
    assert sum(len(f) for f in order) == ds[0].num_nodes() + ds[1].num_nodes()


def test_unknown_words_map_to_unk(trees_dir, train, tmp_path):
    """With a train-only vocabulary (vocab_file), dev / test words outside it are UNK_WORD; known ones keep
    their ids. The default vocabulary holds every split's words, so it has no UNK (as DGL's)."""
    train_words = []
    for g in train:
        for w in g.ndata["x"][g.ndata["mask"] == 1].tolist():
            train_words.append(w)
    id_to_word = list(train.vocab)
    vocab = list(dict.fromkeys(id_to_word[w] for w in train_words))
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    assert len(vocab) < 19536
    for mode in ("dev", "test"):
        default = SSTDataset(mode, raw_dir=trees_dir)
        limited = SSTDataset(mode, raw_dir=trees_dir, vocab_file=str(tmp_path / "vocab.txt"))
        assert len(limited.vocab) == len(vocab)
        unk = 0
        for a, b in zip(default, limited):
            leaf = a.ndata["mask"] == 1
            assert bool((a.ndata["x"][leaf] >= 0).all())
            for full_id, own_id in zip(a.ndata["x"][leaf].tolist(), b.ndata["x"][leaf].tolist()):
                word = id_to_word[full_id]
                assert own_id == limited.vocab.get(word, SSTDataset.UNK_WORD)
                unk += own_id == SSTDataset.UNK_WORD
        assert unk > 0


def test_missing_data_is_a_dgl_error_naming_the_path(tmp_path, monkeypatch, trees_dir):
    missing = tmp_path / "nowhere"
    with pytest.raises(DGLError, match=str(missing / "train.txt")):
        SSTDataset(raw_dir=str(missing))
    monkeypatch.setenv("TOPOGRAPH_DATA_DIR", str(tmp_path))
    with pytest.raises(DGLError, match=str(tmp_path / "sst" / "trees" / "dev.txt")):
        SSTDataset("dev")
    monkeypatch.delenv("TOPOGRAPH_DATA_DIR")
    with pytest.raises(DGLError, match="TOPOGRAPH_DATA_DIR"):
        SSTDataset()
    with pytest.raises(DGLError, match="tiny.txt"):  # DGL's zip has tiny.txt; ../shared/data does not
        SSTDataset("tiny", raw_dir=trees_dir)
    with pytest.raises(DGLError, match="mode"):
        SSTDataset("valid", raw_dir=trees_dir)


class ChildSumTreeLSTMCell(torch.nn.Module):
    """DGL's tree_lstm example's cell, verbatim in substance."""

    def __init__(self, x_size, h_size):
        super().__init__()
        self.W_iou = torch.nn.Linear(x_size, 3 * h_size, bias=False)
        self.U_iou = torch.nn.Linear(h_size, 3 * h_size, bias=False)
        self.b_iou = torch.nn.Parameter(torch.zeros(1, 3 * h_size))
        self.U_f = torch.nn.Linear(h_size, h_size)

    def message_func(self, edges):
        return {"h": edges.src["h"], "c": edges.src["c"]}

    def reduce_func(self, nodes):
        h_tild = torch.sum(nodes.mailbox["h"], 1)
        f = torch.sigmoid(self.U_f(nodes.mailbox["h"]))
        c = torch.sum(f * nodes.mailbox["c"], 1)
        return {"iou": self.U_iou(h_tild), "c": c}

    def apply_node_func(self, nodes):
        iou = nodes.data["iou"] + self.b_iou
        i, o, u = torch.chunk(iou, 3, 1)
        i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)
        c = i * u + nodes.data["c"]
        return {"h": o * torch.tanh(c), "c": c}


class TreeLSTM(torch.nn.Module):
    def __init__(self, num_vocabs, x_size, h_size, num_classes):
        super().__init__()
        self.embedding = torch.nn.Embedding(num_vocabs, x_size)
        self.cell = ChildSumTreeLSTMCell(x_size, h_size)
        self.linear = torch.nn.Linear(h_size, num_classes)

    def forward(self, g, h, c):
        mask = g.ndata["mask"]
        embeds = self.embedding(g.ndata["x"] * mask)
        g.ndata["iou"] = self.cell.W_iou(embeds) * mask.float().unsqueeze(-1)
        g.ndata["h"], g.ndata["c"] = h, c
        dgl.prop_nodes_topo(g, self.cell.message_func, self.cell.reduce_func,
                            apply_node_func=self.cell.apply_node_func)
        return self.linear(g.ndata.pop("h"))


def test_child_sum_tree_lstm_trains(train):
    torch.manual_seed(0)
    g = dgl.batch([train[i] for i in range(16)])
    h_size = 16
    model = TreeLSTM(train.num_vocabs, 16, h_size, train.num_classes)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    losses = []
    for _ in range(6):
        n = g.num_nodes()
        logits = model(g, torch.zeros(n, h_size), torch.zeros(n, h_size))
        loss = torch.nn.functional.cross_entropy(logits, g.ndata["y"], reduction="sum")
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(torch.isfinite(torch.tensor(losses))) and losses[-1] < losses[0]
    # dgl.batch keeps the trees apart: one root (out-degree 0) per tree.
    roots = torch.nonzero(g.out_degrees() == 0).flatten()
    assert len(roots) == 16


def test_where_the_data_came_from(train, trees_dir):
    # DGL's dataset properties, shared with the citation graphs (data/_local_files.py).
    assert train.raw_dir == trees_dir and train.raw_path == os.path.join(trees_dir, "train.txt")
    assert train.url is None and train.verbose is False and train.name == "sst"
