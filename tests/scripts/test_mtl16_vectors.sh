#!/usr/bin/env bash
# scripts/mtl16_vectors.sh end to end at a small size (one epoch, 4 learned coordinates): MTL-16 and the GloVe
# subset must be there (a missing data set fails), fasttext must be installed (scripts/setup.sh). The output is
# GloVe text of width 54 whose first 50 numbers are each GloVe word's own, with a line for every GloVe word and for
# the reviews' words GloVe lacks; two builds on one thread give the same file (the figures rest on it).
#   test_mtl16_vectors.sh PROJECT_SOURCE_DIR
set -euo pipefail
cd "$1"
out=$(mktemp -d "${TMPDIR:-/tmp}/topo_mtl16_test.XXXXXX")
trap 'rm -rf "$out"' EXIT
glove=../shared/data/glove6b50d/glove.6B.50d.subset.txt.gz
for build in a b; do
  OUT="$out/$build" DIM=4 EPOCHS=1 THREADS=1 scripts/mtl16_vectors.sh > "$out/$build.log" 2>&1 ||
    { cat "$out/$build.log"; exit 1; }
done
vec=$out/a/mtl16_glove50_ft4.txt.gz
cmp -s <(zcat "$vec") <(zcat "$out/b/mtl16_glove50_ft4.txt.gz") || { echo "two one-thread builds differ"; exit 1; }

python3 - "$vec" "$glove" <<'EOF'
import gzip, sys
vec, glove = sys.argv[1], sys.argv[2]
ours = {}
with gzip.open(vec, "rt", encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
        fields = line.rstrip("\n").split(" ")
        if len(fields) != 55:
            sys.exit(f"{vec}:{number}: {len(fields)} fields, expected a word and 54 numbers")
        if fields[0] in ours:
            sys.exit(f"{vec}:{number}: '{fields[0]}' appears twice")
        ours[fields[0]] = [float(x) for x in fields[1:]]
glove_words = 0
with gzip.open(glove, "rt", encoding="utf-8") as f:
    for line in f:
        fields = line.rstrip("\n").split(" ")
        glove_words += 1
        if fields[0] not in ours:
            sys.exit(f"'{fields[0]}' of the GloVe file has no line")
        if any(abs(a - float(b)) > 1e-5 for a, b in zip(ours[fields[0]][:50], fields[1:])):
            sys.exit(f"'{fields[0]}': the first 50 numbers are not its GloVe vector")
extra = len(ours) - glove_words
if extra < 1000:  # the reviews hold thousands of words (misspellings, names) the GloVe subset lacks
    sys.exit(f"only {extra} words beyond GloVe's {glove_words}")
learned = [v[50:] for v in ours.values()]
if all(x == 0 for v in learned[:100] for x in v):
    sys.exit("the learned coordinates are all zero")
print(f"mtl16_vectors: {len(ours)} words ({extra} beyond GloVe), width 54, two builds identical")
EOF
