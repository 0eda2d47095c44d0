#!/usr/bin/env bash
# Star-Transformer paper, Table 6, masked-summation column: Star, -radical, -ring at n = 200, k = 10, d = 10,
# 10k/10k/10k examples, d_model = 100 with 10 heads of 10 (the paper's sizes). One recipe for all three
# variants: 2 layers with residuals inside the LayerNorms and lr warm-up (the authors' advice for stacks),
# Adam 1e-3, batch 16. EPOCHS (default 12) and THREADS (default 1 each, the three runs in parallel) are
# environment variables; RUNS (default runs/table6) is the run directory and TOPO_TRAIN the binary (the
# script's test points both elsewhere). Results: $RUNS/<variant>/result.json; docs/results.md has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${EPOCHS:-12}
threads=${THREADS:-1}
runs=${RUNS:-runs/table6}
topo_train=${TOPO_TRAIN:-build/bin/topo-train}
mkdir -p "$runs"  # a fresh clone has no runs/: the log redirections below need the directory
for variant in full no-radical no-ring; do
  "$topo_train" --task masked-sum --model star --variant "$variant" --n 200 --k 10 --d 10 \
    --train-size 10000 --dev-size 10000 --test-size 10000 --layers 2 --hidden 100 --heads 10 --residual \
    --lr 1e-3 --warmup 300 --batch 16 --epochs "$epochs" --eval-every 1250 --seed 1 --threads "$threads" \
    --progress lines --log-every 500 --out "$runs/$variant" > "$runs/$variant.log" 2>&1 &
done
status=0
for job in $(jobs -p); do wait "$job" || status=1; done  # a failed run fails the script
for variant in full no-radical no-ring; do tail -n 1 "$runs/$variant.log"; done
exit $status
