#!/usr/bin/env bash
# Star-Transformer paper, Table 6, masked-summation column: Star, -radical, -ring at n = 200, k = 10, d = 10,
# 10k/10k/10k examples, d_model = 100 with 10 heads of 10 (the paper's sizes). One recipe for all three
# variants: 2 layers with residuals inside the LayerNorms and lr warm-up (the authors' advice for stacks),
# Adam 1e-3, batch 16. EPOCHS (default 12) and THREADS (default 1 each, the three runs in parallel) are
# environment variables. Results: runs/table6/<variant>/result.json; docs/results.md has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${EPOCHS:-12}
threads=${THREADS:-1}
for variant in full no-radical no-ring; do
  build/bin/topo-train --task masked-sum --model star --variant "$variant" --n 200 --k 10 --d 10 \
    --train-size 10000 --dev-size 10000 --test-size 10000 --layers 2 --hidden 100 --heads 10 --residual \
    --lr 1e-3 --warmup 300 --batch 16 --epochs "$epochs" --eval-every 1250 --seed 1 --threads "$threads" \
    --progress lines --log-every 500 --out "runs/table6/$variant" > "runs/table6/$variant.log" 2>&1 &
done
wait
for variant in full no-radical no-ring; do tail -n 1 "runs/table6/$variant.log"; done
