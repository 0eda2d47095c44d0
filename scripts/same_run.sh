# Sourced by scripts/kill9_test.sh and scripts/stop_signal_test.sh (bash): did an interrupted-and-resumed run
# end as the uninterrupted one? same_run NAME REFERENCE_DIR RUN_DIR compares, bit for bit,
#   metrics.jsonl   every line, wall-clock and memory-peak fields removed;
#   checkpoint.ckpt, best.ckpt   their payload (every tensor's bytes: the file's tail of payload_bytes bytes);
#   result.json     the test and best-dev figures, best_step, steps, epochs_done.
# Prints "NAME: FAIL: ..." and returns 1 at the first difference; prints what matched and returns 0 otherwise.
strip_timing() {  # the measured fields: wall-clock times and memory peaks
  sed -E 's/"(seconds|ms_per_batch|epoch_train_seconds|peak_rss_bytes|allocator_peak_bytes)":[^,}]*,?//g' "$1"
}
checkpoint_payload() {
  local n
  n=$(grep -a -o '"payload_bytes":[0-9]*' "$1" | head -n 1 | cut -d: -f2)
  tail -c "$n" "$1"
}
result_figures() { grep -o -E '"(test_[a-z0-9_]+|best_dev_[a-z0-9_]+|best_step|steps|epochs_done)": [^,]*' "$1" | sort; }

same_run() {
  local name=$1 reference=$2 run=$3 f
  if ! diff <(strip_timing "$reference/metrics.jsonl") <(strip_timing "$run/metrics.jsonl"); then
    echo "$name: FAIL: metrics.jsonl differs from the uninterrupted run" >&2; return 1
  fi
  for f in checkpoint.ckpt best.ckpt; do
    if ! cmp <(checkpoint_payload "$reference/$f") <(checkpoint_payload "$run/$f"); then
      echo "$name: FAIL: $f parameters differ from the uninterrupted run" >&2; return 1
    fi
  done
  if ! diff <(result_figures "$reference/result.json") <(result_figures "$run/result.json"); then
    echo "$name: FAIL: result.json differs from the uninterrupted run" >&2; return 1
  fi
  echo "$name: ok: $(wc -l < "$run/metrics.jsonl") metrics lines, checkpoint and best parameters and test figures" \
       "identical to the uninterrupted run"
}
