#!/usr/bin/env bash
# Chinese character and character-bigram vectors for the Chinese tagging sets (Resume, Weibo; issue #38 item 2),
# pre-trained with Debian's fasttext (scripts/setup.sh installs it) on People's Daily, January 1998
# (../shared/data/zh_peoples_daily: 19,484 paragraphs of segmented, POS-tagged text). The vectors are built
# here, never committed.
#   scripts/zh_vectors.sh          -> runs/vectors/zh_chars.vec and zh_bigrams.vec (word2vec text: "count dim" header)
#   DIM=100 EPOCHS=10 OUT=runs/vectors scripts/zh_vectors.sh
# The corpus drops the tags (WORD/TAG tokens; this copy has no paragraph ids and no bracketed compounds) and
# joins each paragraph's words. Characters: one token per character, so fasttext's skip-gram (no sub-word
# n-grams: a character has none) learns a vector per character from its neighbours within a window of 5.
# Bigrams: one token per pair of neighbouring characters (overlapping: "人民日报" -> 人民 民日 日报), keyed as
# the tagger's --bigram-feature joins them. Characters / pairs seen fewer than MIN_COUNT (2) times get none.
# Use:  build/bin/topo-train --task tag --model star --train ../shared/data/resume_ner/train.char.bmes ...
#           --vectors runs/vectors/zh_chars.vec --bigram-feature --bigram-vectors runs/vectors/zh_bigrams.vec
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
out=${OUT:-runs/vectors}
dim=${DIM:-100}
epochs=${EPOCHS:-10}
min_count=${MIN_COUNT:-2}
threads=${THREADS:-2}
source_file=$data/zh_peoples_daily/199801.txt.gz
[ -f "$source_file" ] || { echo "zh_vectors: $source_file is missing (DATA=...)" >&2; exit 1; }
command -v fasttext > /dev/null || { echo "zh_vectors: fasttext is missing: run scripts/setup.sh" >&2; exit 1; }
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/topo_zh.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$source_file" "$work/chars.txt" "$work/bigrams.txt" <<'EOF'
import gzip, sys
source, target, bigram_target = sys.argv[1], sys.argv[2], sys.argv[3]
paragraphs = characters = 0
with gzip.open(source, "rt", encoding="utf-8") as f, open(target, "w", encoding="utf-8") as out, \
        open(bigram_target, "w", encoding="utf-8") as bigrams:
    for number, line in enumerate(f, 1):
        words = []
        for token in line.split():
            slash = token.rfind("/")
            if slash <= 0:
                sys.exit(f"zh_vectors: {source}:{number}: token '{token}' is not WORD/TAG")
            words.append(token[:slash])
        text = "".join(words)
        if text:
            out.write(" ".join(text) + "\n")
            if len(text) >= 2:
                bigrams.write(" ".join(text[i:i + 2] for i in range(len(text) - 1)) + "\n")
            paragraphs += 1
            characters += len(text)
print(f"zh_vectors: {paragraphs} paragraphs, {characters} characters from {source}")
EOF
for kind in chars bigrams; do
  fasttext skipgram -input "$work/$kind.txt" -output "$work/zh_$kind" -dim "$dim" -epoch "$epochs" \
    -minCount "$min_count" -minn 0 -maxn 0 -ws 5 -thread "$threads" -verbose 1
  mv "$work/zh_$kind.vec" "$out/zh_$kind.vec.tmp"
  mv "$out/zh_$kind.vec.tmp" "$out/zh_$kind.vec"  # whole or absent, never half written
  echo "zh_vectors: $(head -n 1 "$out/zh_$kind.vec" | cut -d' ' -f1) $kind vectors of width $dim -> $out/zh_$kind.vec"
done
