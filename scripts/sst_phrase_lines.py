#!/usr/bin/env python3
"""SST's PTB trees as 'LABEL tokens' lines (topo-train --format sst-stsa), for screens of which phrases train.

  scripts/sst_phrase_lines.py TREES VARIANT OUT
    roots      one line per tree: its sentence (dev and test files for the screens)
    all        each distinct phrase once, with its most frequent label (ties: the first seen), in the order
               topo-train's --subtrees --unique-subtrees reads them (trees in order, each in pre-order)
    minN       as all, without the phrases of fewer than N tokens that are not a whole sentence
    rootsxK    as all, with every sentence K times (the phrases once)

A screen only: the recipes train on the trees themselves (configs/sst5_phrases_*.json), and docs/results.md
says what these variants gave.
"""
import collections
import sys


def parse(line):
    """(nodes in pre-order as [label, first leaf, end leaf], leaves) of one bracketed tree."""
    nodes, leaves, stack, i, n = [], [], [], 0, len(line)
    while i < n:
        c = line[i]
        if c.isspace():
            i += 1
        elif c == "(":
            i += 1
            while line[i].isspace():
                i += 1
            j = i
            while not line[j].isspace() and line[j] not in "()":
                j += 1
            nodes.append([line[i:j], len(leaves), None])
            stack.append(len(nodes) - 1)
            i = j
        elif c == ")":
            nodes[stack.pop()][2] = len(leaves)
            i += 1
        else:
            j = i
            while j < n and not line[j].isspace() and line[j] not in "()":
                j += 1
            leaves.append(line[i:j])
            i = j
    return nodes, leaves


def main(trees, variant, out):
    examples = []  # (tokens, label, is the whole sentence)
    with open(trees, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            nodes, leaves = parse(line)
            for k, (label, begin, end) in enumerate(nodes):
                if variant == "roots" and k > 0:
                    break
                examples.append((tuple(leaves[begin:end]), label, k == 0))
    with open(out, "w", encoding="utf-8") as f:
        if variant == "roots":
            f.writelines(f"{label} {' '.join(tokens)}\n" for tokens, label, _ in examples)
            return
        min_tokens, sentence_copies = 0, 1
        if variant.startswith("min"):
            min_tokens = int(variant[3:])
        elif variant.startswith("rootsx"):
            sentence_copies = int(variant[6:])
        elif variant != "all":
            sys.exit(f"unknown variant '{variant}': roots, all, minN or rootsxK")
        votes, sentence = collections.OrderedDict(), {}
        for tokens, label, is_root in examples:
            votes.setdefault(tokens, collections.OrderedDict())
            votes[tokens][label] = votes[tokens].get(label, 0) + 1
            sentence[tokens] = sentence.get(tokens, False) or is_root
        for tokens, counts in votes.items():
            label = max(counts.items(), key=lambda kv: kv[1])[0]  # max keeps the first of equal counts
            if len(tokens) < min_tokens and not sentence[tokens]:
                continue
            copies = sentence_copies if sentence[tokens] else 1
            f.writelines(f"{label} {' '.join(tokens)}\n" for _ in range(copies))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
