#!/usr/bin/env bash
# kill -9 at any point loses nothing: a training run is killed with SIGKILL again and again, at random
# moments and on purpose while it writes a checkpoint or has just appended to metrics.jsonl, and resumed
# after every kill (a fresh start while no epoch checkpoint exists yet). The finished run must equal an
# uninterrupted one bit for bit: every metrics.jsonl line (timings aside), the parameters and Adam state of
# checkpoint.ckpt, the parameters of best.ckpt and the test figures of result.json.
#   scripts/kill9_test.sh                  KILLS=30 kills (default), build/bin/topo-train
#   KILLS=100 SEED=7 scripts/kill9_test.sh
# Exit 0 when identical; 1 with the first difference otherwise. Prints the kills survived and by kind.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/same_run.sh
kills_wanted=${KILLS:-30}
seed=${SEED:-$$}
topo_train=${TOPO_TRAIN:-build/bin/topo-train}
work=$(mktemp -d "${TMPDIR:-/tmp}/topo_kill9.XXXXXX")
trap 'rm -rf "$work"' EXIT
RANDOM=$seed

# Star with dropout (the generator state must survive), warm-up and decay (the step), evaluations that
# straddle epochs (metrics lines past the last checkpoint are dropped on resume). One thread: the loss curve
# is bitwise reproducible per thread count, and a loaded CI machine makes OpenMP spin-waits crawl.
args=(--task masked-sum --model star --n 12 --k 3 --d 4 --train-size 256 --dev-size 32 --test-size 32
      --layers 1 --hidden 64 --heads 4 --dropout 0.1 --epochs 8 --batch 32 --lr 1e-3 --warmup 10
      --schedule linear --eval-every 5 --seed 3 --threads 1 --progress none)

start_ns=$(date +%s%N)
"$topo_train" "${args[@]}" --out "$work/reference" > "$work/reference.log" 2>&1 \
  || { cat "$work/reference.log"; echo "kill9: the uninterrupted run failed" >&2; exit 1; }
reference_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
echo "kill9: uninterrupted run ${reference_ms} ms; killing the second run ${kills_wanted} times (seed $seed)"

out="$work/killed"
kills=0 during_checkpoint=0 after_metrics=0 at_random=0 attempts=0
metrics_size() { stat -c %s "$out/metrics.jsonl" 2>/dev/null || echo 0; }
while :; do
  attempts=$((attempts + 1))
  if [ "$attempts" -gt $((kills_wanted * 4 + 20)) ]; then echo "kill9: no progress after $attempts starts" >&2; exit 1; fi
  resume=()
  [ -f "$out/checkpoint.ckpt" ] && resume=(--resume)
  "$topo_train" "${args[@]}" "${resume[@]}" --out "$out" >> "$work/killed.log" 2>&1 &
  pid=$!
  if [ "$kills" -ge "$kills_wanted" ]; then  # enough: let it finish
    wait "$pid" || { tail -n 20 "$work/killed.log"; echo "kill9: the final resumed run failed" >&2; exit 1; }
    break
  fi
  mode=$((RANDOM % 3))
  deadline_ns=$(( $(date +%s%N) + reference_ms * 1000000 ))
  if [ "$mode" -eq 2 ]; then
    # Any moment of the run, start-up and evaluations included.
    sleep "$(awk -v r="$RANDOM" -v ms="$reference_ms" 'BEGIN { printf "%.3f", r / 32768 * ms / 1000 }')"
  else
    # 0: while a checkpoint's temp file exists (mid-write); 1: right after a metrics.jsonl append.
    size0=$(metrics_size)
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s%N)" -lt "$deadline_ns" ]; do
      if [ "$mode" -eq 0 ] && compgen -G "$out/*.ckpt.tmp.*" > /dev/null; then break; fi
      if [ "$mode" -eq 1 ] && [ "$(metrics_size)" != "$size0" ]; then break; fi
    done
  fi
  if kill -9 "$pid" 2>/dev/null; then
    wait "$pid" 2>/dev/null || true
    kills=$((kills + 1))
    # What the kill interrupted, judged by what it left behind.
    if compgen -G "$out/*.tmp.*" > /dev/null; then
      during_checkpoint=$((during_checkpoint + 1))
      rm -f "$out"/*.tmp.*  # leftovers are harmless; removed so the next kill is judged afresh
    elif [ "$mode" -eq 1 ]; then
      after_metrics=$((after_metrics + 1))
    else
      at_random=$((at_random + 1))
    fi
  else
    wait "$pid" || { tail -n 20 "$work/killed.log"; echo "kill9: a resumed run failed" >&2; exit 1; }
    [ -f "$out/result.json" ] && { echo "kill9: the run finished before $kills_wanted kills; restarting it"; \
                                   rm -rf "$out"; }
  fi
done
echo "kill9: survived $kills kills in $attempts starts ($during_checkpoint during a checkpoint write," \
     "$after_metrics right after a metrics append, $at_random at random moments)"

# Compare with the uninterrupted run (scripts/same_run.sh).
same_run kill9 "$work/reference" "$out"
