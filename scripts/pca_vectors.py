#!/usr/bin/env python3
"""Word vectors on their first K principal components, written as GloVe text (a probe of how much a recipe
follows the vectors' information; docs/results.md). Centred, then projected; the words and their order kept.

    build/python-venv/bin/python scripts/pca_vectors.py IN OUT K
e.g. IN = ../shared/data/glove6b50d/glove.6B.50d.subset.txt.gz, OUT = runs/vectors/glove.6B.50d-pca25.txt.gz,
K = 25. IN and OUT may be plain or .gz; needs NumPy (the Python package's environment has it).
"""
import gzip
import sys

import numpy as np


def open_text(path, mode):
    return gzip.open(path, mode + "t", encoding="utf8") if path.endswith(".gz") else open(path, mode, encoding="utf8")


def main(source, target, k):
    words, rows = [], []
    with open_text(source, "r") as f:
        for line in f:
            fields = line.rstrip("\n").split(" ")
            if len(fields) > 2:  # a word2vec "count dim" header has two
                words.append(fields[0])
                rows.append(np.array(fields[1:], dtype=np.float64))
    x = np.stack(rows)
    if not 0 < k <= x.shape[1]:
        sys.exit(f"pca_vectors: K = {k} must be in [1, {x.shape[1]}]")
    centred = x - x.mean(0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    print(f"pca_vectors: {len(words)} vectors of {x.shape[1]} -> {k}; variance kept {(s[:k] ** 2).sum() / (s ** 2).sum():.4f}")
    with open_text(target, "w") as f:
        for word, y in zip(words, centred @ vt[:k].T):
            f.write(word + " " + " ".join(f"{v:.5f}" for v in y) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
