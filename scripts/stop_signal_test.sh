#!/usr/bin/env bash
# A scheduler's stop signals lose nothing: a training run gets SIGTERM or SIGINT at random moments, again and
# again, and is restarted each time with the same command and `--resume auto` (which starts fresh while there
# is no checkpoint). One signal must end the run after its current step with exit status 75, the message
# naming the checkpoint, and a checkpoint of exactly that step; two signals in a row end it at once (the
# default action) and lose only the steps since the last checkpoint. The finished run must equal an
# uninterrupted one bit for bit, as scripts/kill9_test.sh checks after SIGKILL: every metrics.jsonl line
# (timings aside), the parameters and Adam state of checkpoint.ckpt, best.ckpt's parameters, result.json's
# test figures.
#   scripts/stop_signal_test.sh             STOPS=12 stops (default), build/bin/topo-train
#   STOPS=40 SEED=7 scripts/stop_signal_test.sh
# Exit 0 when identical; 1 with the first difference otherwise. Prints the stops by kind.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/same_run.sh
stops_wanted=${STOPS:-12}
seed=${SEED:-$$}
topo_train=${TOPO_TRAIN:-build/bin/topo-train}
work=$(mktemp -d "${TMPDIR:-/tmp}/topo_stop.XXXXXX")
trap 'rm -rf "$work"' EXIT
RANDOM=$seed

# kill9_test.sh's run, with 4x the data: dropout (the generator state), warm-up and decay (the step),
# evaluations inside epochs (a stop between two of them), 32 steps per epoch (stops land mid-epoch and at ends).
args=(--task masked-sum --model star --n 12 --k 3 --d 4 --train-size 1024 --dev-size 32 --test-size 32
      --layers 1 --hidden 64 --heads 4 --dropout 0.1 --epochs 8 --batch 32 --lr 1e-3 --warmup 10
      --schedule linear --eval-every 5 --seed 3 --threads 1 --progress none)

start_ns=$(date +%s%N)
"$topo_train" "${args[@]}" --out "$work/reference" > "$work/reference.log" 2>&1 \
  || { cat "$work/reference.log"; echo "stop: the uninterrupted run failed" >&2; exit 1; }
reference_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
echo "stop: uninterrupted run ${reference_ms} ms; stopping the second run ${stops_wanted} times (seed $seed)"

out="$work/stopped"
stops=0 single=0 double=0 before_training=0 early=0 attempts=0
while :; do
  attempts=$((attempts + 1))
  if [ "$attempts" -gt $((stops_wanted * 4 + 20)) ]; then echo "stop: no progress after $attempts starts" >&2; exit 1; fi
  log="$work/run$attempts.log"
  "$topo_train" "${args[@]}" --resume auto --out "$out" > "$log" 2>&1 &
  pid=$!
  if [ "$stops" -ge "$stops_wanted" ]; then  # enough: let it finish
    wait "$pid" || { tail -n 20 "$log"; echo "stop: the final resumed run failed" >&2; exit 1; }
    break
  fi
  sleep "$(awk -v r="$RANDOM" -v ms="$reference_ms" 'BEGIN { printf "%.3f", r / 32768 * ms / 1000 }')"
  signal=TERM
  [ $((RANDOM % 2)) -eq 0 ] && signal=INT
  twice=$(( RANDOM % 4 == 0 ))
  kill -s "$signal" "$pid" 2>/dev/null || true
  [ "$twice" -eq 1 ] && { sleep 0.05; kill -s "$signal" "$pid" 2>/dev/null || true; }
  rc=0
  wait "$pid" || rc=$?
  case $rc in
    0) [ -f "$out/result.json" ] && { echo "stop: the run finished before $stops_wanted stops; restarting it"; rm -rf "$out"; } ;;
    75)
      stops=$((stops + 1))
      [ "$twice" -eq 1 ] && double=$((double + 1)) || single=$((single + 1))
      if grep -q "topo-train: stopped by SIG$signal before training a step; nothing new to keep" "$log"; then
        early=$((early + 1))
      else
        grep -q "topo-train: stopped by SIG$signal after step .*checkpoint.ckpt holds it: run the same command with --resume" "$log" \
          || { cat "$log"; echo "stop: exit 75 without the message naming the checkpoint" >&2; exit 1; }
      fi ;;
    130|143)  # the default action: a second signal, or one before the run installed its handlers
      stops=$((stops + 1))
      if [ "$twice" -eq 1 ]; then double=$((double + 1)); else before_training=$((before_training + 1)); fi
      rm -f "$out"/*.tmp.* ;;
    *) tail -n 20 "$log"; echo "stop: a run stopped by SIG$signal exited with $rc" >&2; exit 1 ;;
  esac
done
echo "stop: survived $stops stops in $attempts starts ($single by one signal: exit 75, $early of them before" \
     "a step; $double by two signals: ended at once; $before_training by the default action before the handlers)"

# Compare with the uninterrupted run (scripts/same_run.sh).
same_run stop "$work/reference" "$out"
