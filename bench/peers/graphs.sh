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
  for lib in dgl pyg; do  # a peer that dies (PyG's GAT at 1M nodes is OOM-killed) is a row, not the end
    status=0
    "$python" "$here/graphs.py" "$graph" --lib "$lib" --model "$model" --epochs "$epochs" --threads "$threads" \
      --json "$out/$lib-$model.json" > "$out/$lib-$model.log" 2>&1 || status=$?
    [[ $status -eq 0 ]] || echo "$status" > "$out/$lib-$model.failed"
  done
done
echo "load $(cut -d' ' -f1 /proc/loadavg) at the end"
"$python" - "$out" "$models" <<'PY'
import json, os, sys
out, models = sys.argv[1], sys.argv[2].split(",")
print(f"{'model':6s} {'topograph s/epoch':>18s} {'DGL':>8s} {'PyG':>8s} {'DGL/topo':>9s} {'PyG/topo':>9s} | "
      f"{'peak RSS topo':>13s} {'DGL':>8s} {'PyG':>8s} {'topo/DGL':>9s} {'topo/PyG':>9s}")
for m in models:
    t = json.load(open(f"{out}/topo-{m}/result.json"))
    ts, tr = t["epoch_train_seconds"]["median"], t["memory"]["peak_rss_bytes"]
    p = {lib: json.load(open(f"{out}/{lib}-{m}.json")) for lib in ("dgl", "pyg") if os.path.exists(f"{out}/{lib}-{m}.json")}
    # a peer without a report died: its cells say its exit status (137: killed, usually by the OOM killer)
    failed = {lib: "exit " + open(f"{out}/{lib}-{m}.failed").read().strip() for lib in ("dgl", "pyg") if lib not in p}
    sec = {lib: f"{p[lib]['median_epoch_seconds']:8.3f}" if lib in p else failed[lib] for lib in ("dgl", "pyg")}
    rss = {lib: f"{p[lib]['peak_rss_bytes'] / 2**30:.2f} GiB" if lib in p else failed[lib] for lib in ("dgl", "pyg")}
    speed = {lib: f"{p[lib]['median_epoch_seconds'] / ts:8.2f}x" if lib in p else "       —" for lib in ("dgl", "pyg")}
    mem = {lib: f"{tr / p[lib]['peak_rss_bytes']:8.2f}x" if lib in p else "       —" for lib in ("dgl", "pyg")}
    print(f"{m:6s} {ts:18.3f} {sec['dgl']:>8s} {sec['pyg']:>8s} {speed['dgl']} {speed['pyg']} | "
          f"{tr / 2**30:9.2f} GiB {rss['dgl']:>8s} {rss['pyg']:>8s} {mem['dgl']} {mem['pyg']}")
PY
