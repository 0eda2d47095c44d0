#!/usr/bin/env bash
# In-domain word vectors for MTL-16 (issue #38): GloVe 6B 50-d with, beside each word's GloVe coordinates, DIM more
# learned by Debian's fasttext (scripts/setup.sh installs it) from the reviews of the 16 domains' training splits.
# GloVe 6B was trained on Wikipedia and newswire; the reviews' own usage ("returned", "flimsy", "5 stars") is what
# it lacks, and what the papers' 840B vectors (Common Crawl) cover better. Only training text is read: each
# domain's .task.train without its last 200 lines (the dev split topo-train takes) and never a test file, so dev
# selection and held-back test files stay untouched. The labels are dropped. The vectors are built, never
# committed.
#   scripts/mtl16_vectors.sh         -> runs/vectors/mtl16_glove50_ft30.txt.gz (GloVe text, 80-d, gzip)
#   DIM=30 EPOCHS=10 THREADS=1 OUT=runs/vectors scripts/mtl16_vectors.sh
#   SET=sst5 scripts/mtl16_vectors.sh -> runs/vectors/sst5_glove50_ft30.txt.gz, for SST: MR left out (its snippets
#   are SST's sentences: 162 of SST's 2,210 test sentences recur verbatim in MR's training split), SST's training
#   sentences (sst/stsa/stsa.fine.train: the training trees' leaves, lowercased) added after the 15 domains.
# fasttext's skip-gram (window 5, sub-word n-grams of 3-6 characters, words seen MIN_COUNT (2) times) is
# deterministic on one thread (-seed 1), the default; more threads train faster but differently each time.
# Every word of the GloVe file and of the fasttext vocabulary gets a line: the GloVe half is zero for a word GloVe
# lacks, the fasttext half comes from sub-words for a word fasttext did not see. The fasttext half is scaled to the
# GloVe half's root mean square (0.65), so neither half starts out louder.
# Use: VECTORS=runs/vectors/mtl16_glove50_ft30.txt.gz scripts/reproduce_classification.sh mtl16
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
out=${OUT:-runs/vectors}
glove=${GLOVE:-$data/glove6b50d/glove.6B.50d.subset.txt.gz}
dim=${DIM:-30}
epochs=${EPOCHS:-10}
min_count=${MIN_COUNT:-2}
threads=${THREADS:-1}
set=${SET:-mtl16}
[[ $set == mtl16 || $set == sst5 ]] || { echo "mtl16_vectors: SET=$set: mtl16 or sst5" >&2; exit 2; }
[ -d "$data/mtl16" ] || { echo "mtl16_vectors: $data/mtl16 is missing (DATA=...)" >&2; exit 1; }
[[ $set == mtl16 || -f "$data/sst/stsa/stsa.fine.train" ]] ||
  { echo "mtl16_vectors: $data/sst/stsa/stsa.fine.train is missing (DATA=...)" >&2; exit 1; }
[ -f "$glove" ] || { echo "mtl16_vectors: $glove is missing (GLOVE=...)" >&2; exit 1; }
command -v fasttext > /dev/null || { echo "mtl16_vectors: fasttext is missing: run scripts/setup.sh" >&2; exit 1; }
target=$out/${set}_glove50_ft$dim.txt.gz
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/topo_mtl16.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$data" "$set" "$work/corpus.txt" <<'EOF'
import glob, os, sys
data, which, target = sys.argv[1:]
folder = os.path.join(data, "mtl16")
files = sorted(glob.glob(os.path.join(folder, "*.task.train")))
if len(files) != 16:
    sys.exit(f"mtl16_vectors: {folder} holds {len(files)} .task.train files, not 16")
reviews = tokens = 0
with open(target, "w", encoding="utf-8") as out:
    for path in files:
        is_mr = os.path.basename(path).startswith("MR.")
        if which == "sst5" and is_mr:
            continue  # SST's test sentences are among MR's snippets
        # MR is Latin-1 (the data set's SOURCE.txt); elsewhere a bad byte reads as U+FFFD, as topo-train reads it.
        encoding = "latin-1" if is_mr else "utf-8"
        with open(path, "rb") as f:
            lines = [line for line in f.read().split(b"\n") if line.strip()]
        if len(lines) <= 200:
            sys.exit(f"mtl16_vectors: {path} has {len(lines)} lines: no training split before the last 200 (dev)")
        for line in lines[:-200]:
            words = line.partition(b"\t")[2].decode(encoding, errors="replace").split()
            if words:
                out.write(" ".join(words) + "\n")
                reviews += 1
                tokens += len(words)
    sentences = 0
    if which == "sst5":  # "LABEL word word ...", the training split only
        with open(os.path.join(data, "sst", "stsa", "stsa.fine.train"), encoding="utf-8") as f:
            for line in f:
                words = line.split()[1:]
                out.write(" ".join(words) + "\n")
                sentences += 1
                tokens += len(words)
print(f"mtl16_vectors: {reviews} training reviews, {sentences} SST training sentences, {tokens} tokens")
EOF
fasttext skipgram -input "$work/corpus.txt" -output "$work/ft" -dim "$dim" -epoch "$epochs" -minCount "$min_count" \
  -ws 5 -minn 3 -maxn 6 -thread "$threads" -seed 1 -verbose 1
python3 - "$glove" "$work/ft" "$dim" "$target.tmp" <<'EOF'
import gzip, math, subprocess, sys
glove, model, dim, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
table = {}  # GloVe's words in the file's order, each with its 50 numbers
with gzip.open(glove, "rt", encoding="utf-8") as f:
    for number, line in enumerate(f, 1):
        fields = line.rstrip("\n").split(" ")
        if len(fields) != 51:
            sys.exit(f"mtl16_vectors: {glove}:{number}: {len(fields) - 1} numbers, not 50")
        table.setdefault(fields[0], [float(x) for x in fields[1:]])
words = list(table)
with open(model + ".vec", encoding="utf-8") as f:
    next(f)  # "count dim"
    words += [w for w in (line.split(" ", 1)[0] for line in f) if w not in table]
# fasttext's vector for every word (from its sub-words where fasttext did not see it), one line each, in order
printed = subprocess.run(["fasttext", "print-word-vectors", model + ".bin"], input="\n".join(words) + "\n",
                         capture_output=True, text=True, encoding="utf-8", check=True).stdout.splitlines()
learned = [[float(x) for x in line.rstrip().split(" ")[1:]] for line in printed]
if len(learned) != len(words) or any(len(v) != dim for v in learned):
    sys.exit(f"mtl16_vectors: fasttext gave {len(learned)} vectors for {len(words)} words, not one of width {dim} each")
def rms(vectors):
    total = count = 0
    for v in vectors:
        total += sum(x * x for x in v)
        count += len(v)
    return math.sqrt(total / count)
scale = rms(table.values()) / rms(learned)
zero = [0.0] * 50
with gzip.open(target, "wt", encoding="utf-8") as out:
    for word, v in zip(words, learned):
        out.write(word + " " + " ".join(f"{x:.5f}" for x in table.get(word, zero) + [x * scale for x in v]) + "\n")
print(f"mtl16_vectors: {len(words)} words of width {50 + dim}; fasttext half scaled by {scale:.3f}")
EOF
mv "$target.tmp" "$target"  # whole or absent, never half written
echo "mtl16_vectors: -> $target"
