#!/usr/bin/env bash
# docs/results.md's topology-file table (issue #35): each shipped pattern of configs/topologies/ trained by
# `--model graph` with its recipe, with GloVe 6B 50-d (looked up lowercased), on
#   mr     MTL-16 MR (dev = the last 200 training lines; the test file is held back: dev accuracy only),
#   sst5   SST-5 sentences (dev-selected checkpoint, test scored once),
#   conll  CoNLL-2003 NER, IOB2 files (dev-selected, test scored once; entity F1).
#   scripts/reproduce_topologies.sh [mr|sst5|conll|all]        (default all)
# Environment: DATA (default ../shared/data), BIN (default build/bin; copy the binaries elsewhere first if you
# rebuild while it runs), PATTERNS (default "star multiscale longformer bigbird custom_topology"), MODELS (the
# registered models trained beside them with their own recipes, default "star multiscale transformer"; "" for
# none), THREADS per run (default 1), JOBS (runs side by side, default 2), EXTRA (more topo-train flags), OUT
# (default runs/topologies). Each run lands in $OUT/<set>/<pattern>/ (a registered model in
# $OUT/<set>/model-<name>/) with its log beside it; the table is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
data=${DATA:-../shared/data}
bin=${BIN:-build/bin}
patterns=${PATTERNS:-star multiscale longformer bigbird custom_topology}
models=${MODELS-star multiscale transformer}
threads=${THREADS:-1}
jobs=${JOBS:-2}
out_root=${OUT:-runs/topologies}
vectors="$data/glove6b50d/glove.6B.50d.subset.txt.gz"
[ -x "$bin/topo-train" ] || { echo "build first: scripts/setup.sh" >&2; exit 1; }
for f in "$vectors" "$data/mtl16/MR.task.train" "$data/sst/trees/train.txt" "$data/conll2003/iob2/train.txt"; do
  [ -e "$f" ] || { echo "reproduce_topologies: missing $f (see $data/README.md)" >&2; exit 1; }
done

# One run: set, pattern (or model-NAME: the registered model NAME).
run() {
  local set=$1 pattern=$2 out="$out_root/$1/$2"
  local model=(--model graph --topology "configs/topologies/$pattern.json")
  [[ $pattern == model-* ]] && model=(--model "${pattern#model-}")
  local common=("${model[@]}" --vectors "$vectors" --vectors-lowercase
                --threads "$threads" --progress lines --log-every 200 --out "$out")
  mkdir -p "$out"
  case $set in
    mr) "$bin/topo-train" --task classify --format mtl --train "$data/mtl16/MR.task.train" --encoding latin1 \
          "${common[@]}" ${EXTRA:-} > "$out.log" 2>&1 ;;
    sst5) "$bin/topo-train" --task classify --format sst --min-freq 1 --train "$data/sst/trees/train.txt" \
          --dev "$data/sst/trees/dev.txt" --test "$data/sst/trees/test.txt" "${common[@]}" ${EXTRA:-} > "$out.log" 2>&1 ;;
    conll) "$bin/topo-train" --task tag --train "$data/conll2003/iob2/train.txt" --dev "$data/conll2003/iob2/valid.txt" \
          --test "$data/conll2003/iob2/test.txt" "${common[@]}" ${EXTRA:-} > "$out.log" 2>&1 ;;
  esac
  tail -n 1 "$out.log"
}

sets=(mr sst5 conll)
[ "$which" = all ] || sets=("$which")
for set in "${sets[@]}"; do
  for pattern in $patterns $(for m in $models; do echo "model-$m"; done); do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    run "$set" "$pattern" &
  done
done
wait

# The table: dev-selected figure on dev, and on test where the set has one.
python3 - "$out_root" <<'EOF'
import json, os, sys
root = sys.argv[1]
print(f"{'set':6} {'pattern':16} {'metric':8} {'dev':>7} {'test':>7} {'steps':>6} {'train s':>8}")
for s in sorted(os.listdir(root)):
    d = os.path.join(root, s)
    if not os.path.isdir(d):
        continue
    for p in sorted(os.listdir(d)):
        f = os.path.join(d, p, "result.json")
        if not os.path.exists(f):
            continue
        r = json.load(open(f))
        m = r.get("metric")
        dev, test = r.get(f"best_dev_{m}"), r.get(f"test_{m}")
        show = lambda v: f"{100 * v:.2f}" if isinstance(v, float) else "-"
        print(f"{s:6} {p:16} {m:8} {show(dev):>7} {show(test):>7} {r.get('best_step', '-'):>6} "
              f"{r.get('train_seconds', 0):8.0f}")
EOF
