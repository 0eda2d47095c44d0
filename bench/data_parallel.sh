#!/usr/bin/env bash
# Data-parallel benchmark (issue #18): the same training as
#   1x2  one process, 2 threads          1x1  one process, 1 thread
#   2x1  mpirun -np 2, 1 thread each, gradient buckets reduced during backward (--dist-reduce overlap)
#   2x1a the same, buckets reduced after backward (--dist-reduce after-backward: the baseline)
# run in interleaved rounds; per configuration the median over rounds of rank 0's time per training step
# (data + forward + backward + allreduce + optimizer from --profile; evaluations and checkpoints left out),
# the part of it spent in the gradient reduction that backward did not hide (2x1a: also how much of that was
# waiting at a barrier for the other rank to end its backward), and tokens per second of training.
#
#   bench/data_parallel.sh                     # MR (MTL-16), configs/mtl16_star.json, 2 epochs, 3 rounds
#   bench/data_parallel.sh --rounds 5 -- --config configs/mtl16_star.json --train FILE --epochs 1
#
# Options: --bin PATH (default build/bin/topo-train), --rounds N, --configs "1x2 2x1 2x1a 1x1",
# --out DIR (run directories; default a temp dir). Arguments after `--` replace the training arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=build/bin/topo-train
rounds=3
configs="1x2 2x1 2x1a 1x1"
out=""
args=(--config configs/mtl16_star.json --train ../shared/data/mtl16/MR.task.train --epochs 2 --patience 0)
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --configs) configs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; args=("$@"); break ;;
    *) echo "data_parallel.sh: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
[[ -x "$bin" ]] || { echo "data_parallel.sh: no executable '$bin' (build topo_train first)" >&2; exit 2; }
command -v jq > /dev/null || { echo "data_parallel.sh: needs jq" >&2; exit 2; }
command -v mpirun > /dev/null || { echo "data_parallel.sh: needs mpirun (scripts/setup.sh installs OpenMPI)" >&2; exit 2; }
if [[ -z "$out" ]]; then
  out=$(mktemp -d /tmp/topo-data-parallel.XXXXXX)
  trap 'rm -rf "$out"' EXIT
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI and these machines run as root
load() { cut -d' ' -f1 /proc/loadavg; }

run() {  # run CONFIG DIR
  local common=("${args[@]}" --profile --progress none --out "$2")
  case "$1" in
    1x2) "$bin" "${common[@]}" --threads 2 ;;
    1x1) "$bin" "${common[@]}" --threads 1 ;;
    2x1) mpirun --oversubscribe -np 2 "$bin" "${common[@]}" --threads 1 --dist-reduce overlap ;;
    2x1a) mpirun --oversubscribe -np 2 "$bin" "${common[@]}" --threads 1 --dist-reduce after-backward ;;
    *) echo "data_parallel.sh: unknown configuration '$1'" >&2; exit 2 ;;
  esac > "$2.log" 2>&1
}

echo "data_parallel: $bin ${args[*]}"
echo "cores: $(nproc) | load at start: $(load)"
declare -A step_ms reduce_ms wait_ms tokens
for ((r = 1; r <= rounds; ++r)); do
  for c in $configs; do
    dir="$out/$c-$r"
    rm -rf "$dir"
    before=$(load)
    run "$c" "$dir" || { cat "$dir.log"; echo "data_parallel.sh: $c failed" >&2; exit 1; }
    read -r s a w t < <(jq -r '[(.profile_seconds | (.data + .forward + .backward + (.allreduce // 0) + .optimizer)) * 1000 / .steps,
                              (.profile_seconds.allreduce // 0) * 1000 / .steps,
                              (.data_parallel.peer_wait_ms_per_step // 0), .tokens_per_second] | @tsv' "$dir/result.json")
    step_ms[$c]+="$s "
    reduce_ms[$c]+="$a "
    wait_ms[$c]+="$w "
    tokens[$c]+="$t "
    printf 'round %d %-5s %8.2f ms/step (reduce %6.2f ms, of which waiting for the other rank %6.2f) load %s -> %s\n' \
      "$r" "$c" "$s" "$a" "$w" "$before" "$(load)"
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
printf '\n%-6s %14s %24s %28s %12s\n' "config" "ms/step (med)" "allreduce ms/step (med)" "of which peer wait (2x1a)" "tok/s (med)"
for c in $configs; do
  printf '%-6s %14.2f %24.2f %28.2f %12.0f\n' "$c" "$(median <<< "${step_ms[$c]}")" "$(median <<< "${reduce_ms[$c]}")" \
    "$(median <<< "${wait_ms[$c]}")" "$(median <<< "${tokens[$c]}")"
done
echo "load at end: $(load)"
