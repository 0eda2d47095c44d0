#!/usr/bin/env bash
# Times DGL, fastNLP and PyTorch on topo-bench's shapes and threads and writes the ratios into
# docs/performance/peers.md (issue #20). Never part of the build: it makes its own virtual environment
# (bench/peers/.venv, git-ignored) and installs pinned CPU-usable versions from PyPI into it.
#   bench/peers/run.sh [--threads N] [--bin build-cpu/bin/topo-bench] [--out DIR]
#                      [--topo-kernels FILE --topo-models FILE]   # reuse topo-bench reports of the same threads
# Versions: PyTorch 2.2.1 (PyPI's Linux wheel; its CUDA libraries install but stay unused on a CPU machine;
# DGL 2.1.0 ships its graphbolt library for torch 2.0.0 ... 2.2.1 only, so not 2.2.2),
# DGL 2.1.0 (its PyPI wheel is the CPU build; it wants torchdata 0.7, and its graphbolt import needs pandas,
# pyyaml and pydantic, which it does not declare; pandas < 2.3 builds against numpy 1), fastNLP 1.0.1, numpy < 2 (torch 2.2 was built against numpy 1).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
threads=2 bin="$root/build-cpu/bin/topo-bench" out="$root/runs/peers" kernels_json="" models_json=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --topo-kernels) kernels_json="$2"; shift 2 ;;
    --topo-models) models_json="$2"; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
venv="${PEERS_VENV:-$here/.venv}"
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
fi
"$venv/bin/pip" install -q "torch==2.2.1" "numpy<2" "dgl==2.1.0" "torchdata==0.7.1" "fastNLP==1.0.1" "pandas<2.3" pyyaml pydantic
echo "load before: $(cat /proc/loadavg)" >&2
export OMP_NUM_THREADS="$threads"
DGLBACKEND=pytorch "$venv/bin/python" "$here/peers.py" --threads "$threads" --json "$out/peers.json"
if [[ -z "$kernels_json" ]]; then
  kernels_json="$out/topo-kernels.json"
  "$bin" kernels --threads "$threads" --json "$kernels_json" > "$out/topo-kernels.txt"
fi
if [[ -z "$models_json" ]]; then
  models_json="$out/topo-models.json"
  "$bin" models --threads "$threads" --sizes 128,512,2048 --json "$models_json" > "$out/topo-models.txt"
fi
python3 "$here/compare.py" --peers "$out/peers.json" --topo-kernels "$kernels_json" --topo-models "$models_json" \
  --doc "$root/docs/performance/peers.md" --command "bench/peers/run.sh --threads $threads"
echo "wrote the ratios into docs/performance/peers.md (reports in $out)" >&2
