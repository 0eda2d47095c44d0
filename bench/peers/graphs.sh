#!/usr/bin/env bash
# Full-graph GCN, GraphSAGE and GAT per epoch and peak memory: topo-train against DGL 2.1 and PyG on the same
# .npz graph, threads and model sizes, in one run, interleaved by model (issue #36, item 2; the goal: >= 2x faster
# per epoch, <= 0.5x peak RSS). Never part of the build.
#   bench/peers/graphs.sh GRAPH.npz [--epochs 6] [--threads 2] [--models gcn,sage,gat] [--python PY]
#                         [--bin build/bin] [--out DIR]
# PY: a Python with torch, DGL 2.1 and torch_geometric (bench/peers/run.sh's venv has the first two; add
# `pip install torch_geometric`). topo-train's figures: result.json's epoch_train_seconds median (the first
# epoch apart, as graphs.py's) and memory.peak_rss_bytes; evaluation runs once, after the last epoch.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
graph="$1"; shift
epochs=6 threads=2 models=gcn,sage,gat python="${PEERS_PYTHON:-$here/.venv/bin/python}" bin="$root/build/bin" out="$(mktemp -d)"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --epochs) epochs="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "graphs.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
echo "graph $graph, $epochs epochs, $threads threads, load $(cut -d' ' -f1 /proc/loadavg) at the start; reports in $out"
for model in ${models//,/ }; do
  "$bin/topo-train" --task node-classify --model "$model" --data "$graph" --epochs "$epochs" --eval-every "$epochs" \
    --threads "$threads" --progress none --out "$out/topo-$model" > "$out/topo-$model.log" 2>&1
  for lib in dgl pyg; do
    "$python" "$here/graphs.py" "$graph" --lib "$lib" --model "$model" --epochs "$epochs" --threads "$threads" \
      --json "$out/$lib-$model.json" > "$out/$lib-$model.log" 2>&1
  done
done
echo "load $(cut -d' ' -f1 /proc/loadavg) at the end"
"$python" - "$out" "$models" <<'PY'
import json, sys
out, models = sys.argv[1], sys.argv[2].split(",")
print(f"{'model':6s} {'topograph s/epoch':>18s} {'DGL':>8s} {'PyG':>8s} {'DGL/topo':>9s} {'PyG/topo':>9s} | "
      f"{'peak RSS topo':>13s} {'DGL':>8s} {'PyG':>8s} {'topo/DGL':>9s} {'topo/PyG':>9s}")
for m in models:
    t = json.load(open(f"{out}/topo-{m}/result.json"))
    ts, tr = t["epoch_train_seconds"]["median"], t["memory"]["peak_rss_bytes"]
    p = {lib: json.load(open(f"{out}/{lib}-{m}.json")) for lib in ("dgl", "pyg")}
    s = {lib: p[lib]["median_epoch_seconds"] for lib in p}
    r = {lib: p[lib]["peak_rss_bytes"] for lib in p}
    gib = lambda b: f"{b / 2**30:.2f} GiB"
    print(f"{m:6s} {ts:18.3f} {s['dgl']:8.3f} {s['pyg']:8.3f} {s['dgl'] / ts:8.2f}x {s['pyg'] / ts:8.2f}x | "
          f"{gib(tr):>13s} {gib(r['dgl']):>8s} {gib(r['pyg']):>8s} {tr / r['dgl']:8.2f}x {tr / r['pyg']:8.2f}x")
PY
