#!/usr/bin/env bash
# Contention benchmark (issue #22): one training alone, then 2 and 4 started at once, each slowdown printed
# beside the ideal: a run that alone keeps T of the C cores busy gets C / N of them when N run at once, so its
# ideal slowdown is max(1, N * T / C) — 2x and 4x for 2-thread runs on 2 cores. A thread runtime that spins while another process
# holds the core shows up here as a slowdown far above the ideal (30x for 2 at once on 2 cores, Nov 2026).
#
#   bench/contention.sh                      # MR (MTL-16) with configs/mtl16_star.json, 1, 2 and 4 at once
#   bench/contention.sh --counts "1 2" --bin /tmp/old/topo-train -- --config configs/masked_sum_star.json
#
# Options: --bin PATH (default build/bin/topo-train), --counts "1 2 4", --limit SECONDS (per group; a run
# still going then is killed and reported as "> limit"), --out DIR (run directories, default a temp dir).
# Arguments after `--` replace the default training arguments; --out and --progress are added per run.
# The environment passes through (OMP_NUM_THREADS, OMP_WAIT_POLICY, GOMP_SPINCOUNT, ...) for comparisons.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=build/bin/topo-train
counts="1 2 4"
limit=900
out=""
args=(--config configs/mtl16_star.json --train ../shared/data/mtl16/MR.task.train)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --counts) counts="$2"; shift 2 ;;
    --limit) limit="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; args=("$@"); break ;;
    *) echo "contention.sh: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
[[ -x "$bin" ]] || { echo "contention.sh: no executable '$bin' (build topo_train first)" >&2; exit 2; }
command -v jq > /dev/null || { echo "contention.sh: needs jq" >&2; exit 2; }
if [[ -z "$out" ]]; then
  out=$(mktemp -d /tmp/topo-contention.XXXXXX)
  trap 'rm -rf "$out"' EXIT
fi
cores=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # nproc alone would count OMP_NUM_THREADS
load() { cut -d' ' -f1 /proc/loadavg; }

echo "contention: $bin ${args[*]}"
echo "cores usable (affinity mask): $cores | load at start: $(load)"
printf '%-9s %-28s %10s %10s %8s  %s\n' "at once" "train seconds of each run" "median s" "slowdown" "ideal" "threads (source)"
alone=""
alone_threads=""
for n in $counts; do
  pids=()
  for ((i = 0; i < n; ++i)); do
    dir="$out/n$n-$i"
    rm -rf "$dir"
    timeout -s KILL "$limit" "$bin" "${args[@]}" --out "$dir" --progress none > "$dir.log" 2>&1 &
    pids+=($!)
  done
  times=()
  for ((i = 0; i < n; ++i)); do
    if wait "${pids[$i]}" && [[ -f "$out/n$n-$i/result.json" ]]; then
      times+=("$(jq -r '.train_seconds' "$out/n$n-$i/result.json")")
    else
      times+=(">$limit")
    fi
  done
  threads=$(jq -r '"\(.threads) (\(.threads_source // "?"))"' "$out/n$n-0/result.json" 2> /dev/null || echo "?")
  if printf '%s\n' "${times[@]}" | grep -q '>'; then
    median=">$limit"; slowdown="?"
  else
    median=$(printf '%s\n' "${times[@]}" | sort -g |
             awk '{v[NR] = $1} END {printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
    if [[ -z "$alone" ]]; then
      alone=$median
      alone_threads=$(jq -r '.threads' "$out/n$n-0/result.json")
    fi
    slowdown=$(awk -v m="$median" -v a="$alone" 'BEGIN {printf "%.2fx", m / a}')
  fi
  ideal=$(awk -v n="$n" -v c="$cores" -v t="${alone_threads:-$cores}" \
          'BEGIN {t = t < c ? t : c; i = n * t / c; printf "%.2fx", (i > 1 ? i : 1)}')
  shown=$(printf '%s\n' "${times[@]}" | awk '/^>/ {printf "%s ", $1; next} {printf "%.2f ", $1}')
  printf '%-9s %-28s %10s %10s %8s  %s\n' "$n" "${shown% }" "$median" \
    "$slowdown" "$ideal" "$threads"
done
echo "load at end: $(load)"
