#!/usr/bin/env bash
# Inference speed of the trained classifiers (runs/ from reproduce_classification.sh), measured on a quiet
# machine with topo-eval: ms per batch of 128 for Star, the Transformer as dense padded GEMMs (as trained)
# and the same Transformer through the graph kernels (--attention graph), on the SST-5 test set and on the
# MTL-16 dev lines (the last 200 of .task.train) of the domains in DOMAINS. THREADS (default 2), DATA.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
threads=${THREADS:-2}
domains=${DOMAINS:-"MR apparel books imdb"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ms() { sed -n 's/^  "ms_per_batch": \([0-9.e+-]*\),\{0,1\}$/\1/p' "$1"; }
acc() { sed -n 's/^  "acc": \([0-9.e+-]*\),\{0,1\}$/\1/p' "$1"; }

measure() {  # name, test file, star run, transformer run, format, encoding note
  local name=$1 file=$2 star=$3 transformer=$4
  build/bin/topo-eval --checkpoint "$star" --test "$file" --threads "$threads" --skip-bad --json "$tmp/s.json" > /dev/null
  build/bin/topo-eval --checkpoint "$transformer" --test "$file" --threads "$threads" --skip-bad --json "$tmp/d.json" > /dev/null
  build/bin/topo-eval --checkpoint "$transformer" --test "$file" --threads "$threads" --skip-bad --attention graph \
    --json "$tmp/g.json" > /dev/null
  printf '| %s | %.1f | %.1f | %.1f | %.2f× | %.2f× | %.1f / %.1f / %.1f |\n' "$name" "$(ms "$tmp/s.json")" \
    "$(ms "$tmp/d.json")" "$(ms "$tmp/g.json")" "$(awk -v a="$(ms "$tmp/d.json")" -v b="$(ms "$tmp/s.json")" 'BEGIN{print a/b}')" \
    "$(awk -v a="$(ms "$tmp/g.json")" -v b="$(ms "$tmp/s.json")" 'BEGIN{print a/b}')" \
    "$(awk -v a="$(acc "$tmp/s.json")" 'BEGIN{print 100*a}')" "$(awk -v a="$(acc "$tmp/d.json")" 'BEGIN{print 100*a}')" \
    "$(awk -v a="$(acc "$tmp/g.json")" 'BEGIN{print 100*a}')"
}

echo "| data | Star ms | Transformer dense ms | Transformer graph ms | dense / Star | graph / Star | acc % Star / dense / graph |"
echo "|---|---:|---:|---:|---:|---:|---:|"
if [ -f runs/sst5/star/best.ckpt ] && [ -f runs/sst5/transformer/best.ckpt ]; then
  measure "SST-5 test (2210)" "$data/sst/trees/test.txt" runs/sst5/star runs/sst5/transformer
fi
for d in $domains; do
  [ -f "runs/mtl16/star/$d/best.ckpt" ] && [ -f "runs/mtl16/transformer/$d/best.ckpt" ] || continue
  tail -n 200 "$data/mtl16/$d.task.train" > "$tmp/$d.dev"
  measure "MTL-16 $d dev (200)" "$tmp/$d.dev" "runs/mtl16/star/$d" "runs/mtl16/transformer/$d"
done
