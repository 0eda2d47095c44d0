#!/usr/bin/env bash
# scripts/zh_vectors.sh end to end at a small size (one epoch, width 8): the People's Daily corpus must be there
# (a missing data set fails), fasttext must be installed (scripts/setup.sh), and the output is a word2vec text
# file whose header counts its lines, with vectors for the corpus's most common characters; the same for the
# character bigrams (zh_bigrams.vec, keyed by the two characters joined, as the tagger's --bigram-feature).
#   test_zh_vectors.sh PROJECT_SOURCE_DIR
set -euo pipefail
cd "$1"
out=$(mktemp -d "${TMPDIR:-/tmp}/topo_zh_test.XXXXXX")
trap 'rm -rf "$out"' EXIT
OUT="$out" DIM=8 EPOCHS=1 THREADS=1 scripts/zh_vectors.sh > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
vec=$out/zh_chars.vec
read -r count dim < <(head -n 1 "$vec")
lines=$(($(wc -l < "$vec") - 1))
[ "$dim" -eq 8 ] || { echo "width $dim, expected 8"; exit 1; }
[ "$count" -eq "$lines" ] || { echo "header says $count vectors, the file has $lines"; exit 1; }
[ "$count" -ge 3000 ] || { echo "only $count characters: People's Daily has over 4,000 seen twice"; exit 1; }
for c in 的 国 ， 。; do
  grep -q "^$c " "$vec" || { echo "no vector for '$c'"; exit 1; }
done
# Every vector line: the character and 8 numbers.
awk 'NR > 1 && NF != 9 { print "line " NR ": " NF " fields"; bad = 1 } END { exit bad }' "$vec"
echo "zh_vectors: $count vectors of width $dim"
vec=$out/zh_bigrams.vec
read -r count dim < <(head -n 1 "$vec")
lines=$(($(wc -l < "$vec") - 1))
[ "$dim" -eq 8 ] || { echo "bigrams: width $dim, expected 8"; exit 1; }
[ "$count" -eq "$lines" ] || { echo "bigrams: header says $count vectors, the file has $lines"; exit 1; }
[ "$count" -ge 50000 ] || { echo "only $count bigrams: People's Daily has over 100,000 seen twice"; exit 1; }
for p in 中国 人民 发展; do
  grep -q "^$p " "$vec" || { echo "no vector for '$p'"; exit 1; }
done
awk 'NR > 1 && NF != 9 { print "bigrams line " NR ": " NF " fields"; bad = 1 } END { exit bad }' "$vec"
echo "zh_vectors: $count bigram vectors of width $dim"
