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

# check_vectors FILE AT_LEAST KEY...: width 8, the header's count = the vector lines, at least AT_LEAST of them,
# a vector for every KEY, and every line the key and 8 numbers.
check_vectors() {
  local vec=$1 at_least=$2 count dim lines
  shift 2
  read -r count dim < <(head -n 1 "$vec")
  lines=$(($(wc -l < "$vec") - 1))
  [ "$dim" -eq 8 ] || { echo "$vec: width $dim, expected 8"; exit 1; }
  [ "$count" -eq "$lines" ] || { echo "$vec: header says $count vectors, the file has $lines"; exit 1; }
  [ "$count" -ge "$at_least" ] || { echo "$vec: only $count vectors, People's Daily gives over $at_least"; exit 1; }
  for key in "$@"; do
    grep -q "^$key " "$vec" || { echo "$vec: no vector for '$key'"; exit 1; }
  done
  awk -v f="$vec" 'NR > 1 && NF != 9 { print f " line " NR ": " NF " fields"; bad = 1 } END { exit bad }' "$vec"
  echo "zh_vectors: $count vectors of width $dim in $(basename "$vec")"
}
check_vectors "$out/zh_chars.vec" 3000 的 国 ， 。         # over 4,000 characters seen twice
check_vectors "$out/zh_bigrams.vec" 50000 中国 人民 发展  # over 100,000 pairs seen twice
