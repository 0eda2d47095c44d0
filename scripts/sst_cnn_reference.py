#!/usr/bin/env python3
"""A Kim (2014) CNN on SST's phrases in plain PyTorch: the reference issue #38 compares Star's recipe with.

  scripts/sst_cnn_reference.py TRAIN DEV TEST [--vectors GZ | --dim D] [--seed S] [--epochs N] [--threads T]

TRAIN / DEV / TEST are 'LABEL tokens' lines from scripts/sst_phrase_lines.py (train: `all`, the distinct
phrases topo-train's SST config trains on; dev / test: `roots`). The model is Kim's: filters of width 3, 4, 5,
100 each, ReLU, max over time, dropout 0.5, a linear layer. Word vectors: random from U(-0.25, 0.25), 300-d as
Kim's "CNN-rand" (--dim sets the width), or with --vectors GloVe's, looked up lowercased as topo-train's
--vectors-lowercase does, random for the words GloVe lacks, fine-tuned ("CNN-non-static"). Kim trains with
Adadelta and a max-norm of 3 on the output weights; this uses Adam (lr 1e-3) and the same max-norm. Vocabulary:
every training token (min_freq 1), the rest <unk>. Selects the epoch on dev and prints one JSON line with the dev
and test accuracy of that epoch.
A measurement only: no recipe or test depends on it.
"""
import argparse
import gzip
import json
import random
import time

import torch
import torch.nn.functional as F


def read_lines(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if parts[0] not in {"0", "1", "2", "3", "4"} or len(parts) < 2:
                raise SystemExit(f"{path}:{n}: expected 'LABEL tokens' with LABEL in 0-4")
            out.append((int(parts[0]), parts[1:]))
    return out


def read_vectors(path, wanted):
    found, dim = {}, None
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip().split(" ")
            if dim is None:
                dim = len(parts) - 1
            if len(parts) != dim + 1:
                raise SystemExit(f"{path}:{n}: {len(parts) - 1} values where the first line has {dim}")
            if parts[0] in wanted:
                found[parts[0]] = torch.tensor([float(x) for x in parts[1:]])
    return found, dim


class KimCNN(torch.nn.Module):
    def __init__(self, embedding, classes=5, widths=(3, 4, 5), filters=100):
        super().__init__()
        self.embed = torch.nn.Embedding.from_pretrained(embedding, freeze=False, padding_idx=0)
        self.convs = torch.nn.ModuleList(torch.nn.Conv1d(embedding.shape[1], filters, w) for w in widths)
        self.out = torch.nn.Linear(filters * len(widths), classes)
        self.min_len = max(widths)

    def forward(self, ids):  # ids: [batch, length >= max width]
        x = self.embed(ids).transpose(1, 2)  # [batch, dim, length]
        pooled = [F.relu(conv(x)).amax(dim=2) for conv in self.convs]
        return self.out(F.dropout(torch.cat(pooled, 1), 0.5, self.training))


def batches(examples, vocab, size, min_len, shuffle):
    order = list(range(len(examples)))
    if shuffle:
        random.shuffle(order)
    for i in range(0, len(order), size):
        chunk = [examples[j] for j in order[i:i + size]]
        length = max(min_len, max(len(t) for _, t in chunk))
        ids = torch.zeros(len(chunk), length, dtype=torch.long)
        for r, (_, tokens) in enumerate(chunk):
            ids[r, :len(tokens)] = torch.tensor([vocab.get(t, 1) for t in tokens])
        yield ids, torch.tensor([label for label, _ in chunk])


def accuracy(model, examples, vocab):
    model.eval()
    right = 0
    with torch.no_grad():
        for ids, labels in batches(examples, vocab, 500, model.min_len, False):
            right += (model(ids).argmax(1) == labels).sum().item()
    model.train()
    return 100.0 * right / len(examples)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train")
    ap.add_argument("dev")
    ap.add_argument("test")
    ap.add_argument("--vectors")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--dim", type=int, default=300, help="width of the random vectors without --vectors")
    args = ap.parse_args()
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    train, dev, test = read_lines(args.train), read_lines(args.dev), read_lines(args.test)
    words = sorted({t for _, tokens in train for t in tokens})
    vocab = {w: i + 2 for i, w in enumerate(words)}  # 0 padding, 1 <unk>
    if args.vectors:
        found, dim = read_vectors(args.vectors, {w.lower() for w in words})
    else:
        found, dim = {}, args.dim
    table = torch.empty(len(words) + 2, dim).uniform_(-0.25, 0.25)
    table[0] = 0
    hits = 0
    for w, i in vocab.items():
        if w.lower() in found:
            table[i] = found[w.lower()]
            hits += 1
    model = KimCNN(table)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    best = {"dev": -1.0}
    start = time.time()
    for epoch in range(1, args.epochs + 1):
        for ids, labels in batches(train, vocab, args.batch, model.min_len, True):
            loss = F.cross_entropy(model(ids), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():  # Kim's max-norm 3 on each class's output weights
                w = model.out.weight
                w.mul_(torch.clamp(3.0 / w.norm(dim=1, keepdim=True).clamp_min(1e-12), max=1.0))
        d = accuracy(model, dev, vocab)
        if d > best["dev"]:
            best = {"dev": round(d, 2), "test": round(accuracy(model, test, vocab), 2), "epoch": epoch}
    best.update(seed=args.seed, vectors=args.vectors or "none", dim=dim, vocabulary=len(words), with_vectors=hits,
                train_examples=len(train), seconds=round(time.time() - start, 1))
    print(json.dumps(best))


if __name__ == "__main__":
    main()
