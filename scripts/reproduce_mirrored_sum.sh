#!/usr/bin/env bash
# Multi-Scale Transformer paper, Fig. 2: mirrored summation (N = 100, d = 50), test MSE against K for
#   transformer       the Transformer baseline (2 layers, 10 heads; padded dense attention, the faster here)
#   ms-flex           MS-Trans-Flex: 2 layers, 10 heads, five scales 3, N/16, N/8, N/4, N/2, two heads each
#                     (our reading of the garbled text: "five scales from 3 up to N/2"; α = 0 gives 2 each)
#   ms-hier-s         MS-Trans-Hier-S: 2 layers, every head on ω = 3
#   ms-hier-s-deep    the same with 6 layers
#   star              the Star-Transformer (2 layers, residual)
# each at width 100 with 10 heads, Adam 1e-3, warm-up 300, batch 32. Environment: KS (default
# "1 5 10 20 30 40 50"), TRAIN (examples, default 10000; the paper: 200000), EPOCHS (default 10), THREADS
# (default 1; the runs go one model at a time, the K values of a model in parallel: PARALLEL, default 2),
# MODELS (default all five, in the order above), OUT (default runs/mirrored), BIN (default build/bin), SEED
# (default 1: the model's initialisation and the generated examples both follow it). Over seeds:
# OUT=runs/mirrored-5k-sN for N = 1, 2, 3, then scripts/summarize_seeds.py mirrored runs/mirrored-5k.
# Calling it again with the same OUT skips the finished runs and resumes the interrupted ones (bit-identical
# to an uninterrupted run). Results: OUT/<model>/k<K>/result.json, summarised as OUT/summary.md (table) and OUT/mse_vs_k.svg by
# ROOT=$root scripts/summarize_mirrored_sum.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
ks=${KS:-"1 5 10 20 30 40 50"}
train=${TRAIN:-10000}
epochs=${EPOCHS:-10}
threads=${THREADS:-1}
parallel=${PARALLEL:-2}
root=${OUT:-runs/mirrored}
bin=${BIN:-build/bin}
common=(--task mirrored-sum --n 100 --d 50 --train-size "$train" --dev-size 1000 --test-size 2000 --hidden 100
        --heads 10 --lr 1e-3 --warmup 300 --batch 32 --epochs "$epochs" --seed "${SEED:-1}" --threads "$threads"
        --progress lines --log-every 500)
declare -A model_flags=(
  [transformer]="--model transformer --layers 2 --attention dense"
  [ms-flex]="--model multiscale --layers 2 --scales 3,N/16,N/8,N/4,N/2 --alpha 0"
  [ms-hier-s]="--model multiscale --layers 2 --scales 3 --alpha 0"
  [ms-hier-s-deep]="--model multiscale --layers 6 --scales 3 --alpha 0"
  [star]="--model star --layers 2 --residual"
)
for model in ${MODELS:-transformer ms-flex ms-hier-s ms-hier-s-deep star}; do
  running=0
  for k in $ks; do
    out="$root/$model/k$k"
    [ -f "$out/result.json" ] && continue  # finished by an earlier call of this script
    mkdir -p "$out"
    # An interrupted run (a session's end, a kill) continues from its last checkpoint: --resume auto starts
    # afresh where there is none. Its log is appended to.
    # shellcheck disable=SC2086  # the model's flags are words
    "$bin/topo-train" "${common[@]}" ${model_flags[$model]} --k "$k" --out "$out" --resume auto >> "$out.log" 2>&1 &
    running=$((running + 1))
    if [ "$running" -ge "$parallel" ]; then wait -n; running=$((running - 1)); fi
  done
  wait
done
ROOT=$root scripts/summarize_mirrored_sum.sh
