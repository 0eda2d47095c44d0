#!/usr/bin/env bash
# The checks that need a CUDA device, as one run (a GPU is lent rarely, for minutes):
#   1. the `gpu` test executable (every CUDA op, layer, optimizer and model against the CPU result)
#   2. topo-bench ops: every op of the op table timed on the CPU and on CUDA (cuda_gbs / cuda_gflops)
#   3. the main job (Star-Transformer on masked summation) trained on CUDA and on the CPU, timed
# Usage: scripts/gpu_check.sh BIN_DIR OUT_DIR
#   BIN_DIR holds topo_test_gpu, topo-bench and topo-train from a CUDA build (-DTOPO_CUDA=ON; for a machine
#   other than the builder, -DTOPO_NATIVE=OFF and -DCMAKE_CUDA_ARCHITECTURES naming its GPU). Every step
#   runs (under its own time limit) even if one before it failed; the exit status is the number of failed steps.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "$1")
out=$(realpath "$2")
mkdir -p "$out"
failed=0
step() {  # step NAME SECONDS COMMAND...: run with a time limit, log to OUT/NAME.log, time it
  local name=$1 limit=$2 start rc
  shift 2
  start=$(date +%s.%N)
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  printf '%-12s rc=%d %.1f s\n' "$name" "$rc" "$(awk "BEGIN{print $(date +%s.%N) - $start}")" | tee -a "$out/steps.txt"
  [ "$rc" -eq 0 ] || failed=$((failed + 1))
}

{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
  lscpu | grep -E '^(Model name|CPU\(s\))'
} > "$out/machine.txt" 2>&1
runs=$(mktemp -d)
step gpu_tests 240 "$bin/topo_test_gpu" --duration=true
step star_cuda 90 "$bin/topo-train" --config configs/masked_sum_star.json --device cuda --progress none --out "$runs/cuda"
step star_cpu 90 "$bin/topo-train" --config configs/masked_sum_star.json --device cpu --progress none --out "$runs/cpu"
step bench_ops 150 "$bin/topo-bench" ops --quick --json "$out/bench_ops.json"
for dev in cuda cpu; do
  [ -f "$runs/$dev/result.json" ] && cp "$runs/$dev/result.json" "$out/star_${dev}_result.json"
done
exit "$failed"
