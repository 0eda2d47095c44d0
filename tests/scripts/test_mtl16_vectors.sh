#!/usr/bin/env bash
# scripts/mtl16_vectors.sh end to end at a small size (one epoch, 4 learned coordinates): MTL-16 and the GloVe
# subset must be there (a missing data set fails), fasttext must be installed (scripts/setup.sh). The output is
# GloVe text of width 54 whose first 50 numbers are each GloVe word's own, with a line for every GloVe word and for
# the reviews' words GloVe lacks; two builds on one thread give the same file (the figures rest on it). SET=sst5
# leaves MR out (SST's test sentences are among its snippets) and adds SST's training sentences: words seen twice or
# more in MR's training split alone have lines in the MTL-16 file and none in SST's, SST-only words the reverse.
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

OUT="$out/sst" DIM=4 EPOCHS=1 THREADS=1 SET=sst5 scripts/mtl16_vectors.sh > "$out/sst.log" 2>&1 ||
  { cat "$out/sst.log"; exit 1; }
python3 - "$vec" "$out/sst/sst5_glove50_ft4.txt.gz" "$glove" ../shared/data <<'EOF'
import collections, glob, gzip, os, sys
mtl16_vec, sst_vec, glove, data = sys.argv[1:]
def words_of(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return {line.split(" ", 1)[0] for line in f}
def training_words(path):  # word counts of a .task.train without its last 200 lines (dev)
    encoding = "latin-1" if os.path.basename(path).startswith("MR.") else "utf-8"
    with open(path, "rb") as f:
        lines = [line for line in f.read().split(b"\n") if line.strip()][:-200]
    texts = (line.partition(b"\t")[2].decode(encoding, "replace") for line in lines)
    return collections.Counter(w for text in texts for w in text.split())
glove_words = words_of(glove)
mr, others = collections.Counter(), collections.Counter()
for path in glob.glob(os.path.join(data, "mtl16", "*.task.train")):
    (mr if os.path.basename(path).startswith("MR.") else others).update(training_words(path))
with open(os.path.join(data, "sst", "stsa", "stsa.fine.train"), encoding="utf-8") as f:
    sst = collections.Counter(w for line in f for w in line.split()[1:])
mr_only = {w for w, n in mr.items() if n >= 2 and w not in others and w not in sst and w not in glove_words}
sst_only = {w for w, n in sst.items() if n >= 2 and w not in others and w not in mr and w not in glove_words}
if len(mr_only) < 5 or len(sst_only) < 5:  # 10 and 54 in the data of 2026-12
    sys.exit(f"too few words to tell the corpora apart: {len(mr_only)} MR-only, {len(sst_only)} SST-only")
for name, path, present, absent in (("MTL-16", mtl16_vec, mr_only, sst_only), ("SST", sst_vec, sst_only, mr_only)):
    vocabulary = words_of(path)
    if not present <= vocabulary:
        sys.exit(f"the {name} file lacks words its corpus holds: {sorted(present - vocabulary)[:5]}")
    if absent & vocabulary:
        sys.exit(f"the {name} file holds words only the other corpus has: {sorted(absent & vocabulary)[:5]}")
print(f"mtl16_vectors SET=sst5: {len(mr_only)} MR-only words left out, {len(sst_only)} SST-only words in")
EOF
