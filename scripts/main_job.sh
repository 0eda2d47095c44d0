#!/usr/bin/env bash
# The main job on a fresh machine: set up and build (scripts/setup.sh), then train the Star-Transformer on
# the paper's masked-summation probe (generated data, no downloads) and report its test MSE against the
# "always guess k/2" baseline. Output: runs/masked-sum-star/{result.json,metrics.jsonl,*.ckpt}.
# Extra flags go to topo-train (e.g. --epochs 40, --variant no-ring, --threads 2).
set -euo pipefail
cd "$(dirname "$0")/.."
# The training needs no Python: skip the package and its torch download unless asked (TOPO_PYTHON=ON).
TOPO_PYTHON="${TOPO_PYTHON:-OFF}" scripts/setup.sh
build/bin/topo-train --config configs/masked_sum_star.json --out runs/masked-sum-star "$@"
