#!/usr/bin/env bash
# Neighbour sampling throughput: topo-graph sample against DGL 2.1's MultiLayerNeighborSampler on the same .npz
# graph, fan-outs, batch and threads, alternated over rounds (issue #36, item 2). Never part of the build.
#   bench/peers/sampling.sh GRAPH.npz [--fanouts 10,25] [--batch 1024] [--batches 50] [--threads 2] [--rounds 2]
#                           [--python PY] [--bin build/bin]
# PY: a Python with torch and DGL 2.1 (bench/peers/run.sh's venv). Prints each run's JSON and the medians' ratio.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
graph="$1"; shift
fanouts=10,25 batch=1024 batches=50 threads=2 rounds=2 python="${PEERS_PYTHON:-$here/.venv/bin/python}" bin="$root/build/bin"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --fanouts) fanouts="$2"; shift 2 ;;
    --batch) batch="$2"; shift 2 ;;
    --batches) batches="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    *) echo "sampling.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "graph $graph, fan-outs $fanouts, batch $batch, $batches batches, $threads threads, load $(cut -d' ' -f1 /proc/loadavg)"
args=(--fanouts "$fanouts" --batch "$batch" --batches "$batches" --threads "$threads")
for ((r = 1; r <= rounds; ++r)); do
  "$bin/topo-graph" sample "$graph" "${args[@]}" --json "$out/topo-$r.json" > /dev/null
  "$python" "$here/sampling.py" "$graph" "${args[@]}" --json "$out/dgl-$r.json" > /dev/null
  cat "$out/topo-$r.json" "$out/dgl-$r.json" | tr -d '\n '; echo
done
"$python" - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
ms = {lib: [json.load(open(f"{out}/{lib}-{r}.json"))["median_batch_ms"] for r in range(1, rounds + 1)] for lib in ("topo", "dgl")}
t, d = statistics.median(ms["topo"]), statistics.median(ms["dgl"])
print(f"median ms per batch: topograph {t:.2f}, DGL {d:.2f}; DGL / topograph {d / t:.2f}x")
PY
