#!/usr/bin/env bash
# A full disk at every write site (#39 item 1). A shim loaded with LD_PRELOAD (tests/support/write_fault_shim.cpp)
# fails write(2) with ENOSPC on one file. At each site the program must stop with exit status 1 and an error
# naming the file and "No space left on device". For a training run, the same command with `--resume auto` and
# room on the disk must then end exactly as an uninterrupted run: the same metrics.jsonl (timings aside) and
# test figures.
# The sites: checkpoint.ckpt (mid-write of a later epoch's), best.ckpt, metrics.jsonl (an append), result.json,
# a tagger's predictions file, topo-topology's picture, topo-bench's JSON report.
#   test_disk_full.sh TOPO_TRAIN TOPO_TOPOLOGY TOPO_BENCH SHIM SOURCE_DIR
set -euo pipefail
train=$1 topology=$2 bench=$3 shim=$4 source=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/topo_disk_full.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
failures=0
fail() { echo "disk_full: FAIL: $*" >&2; failures=$((failures + 1)); }

# Runs "$@" with writes to files matching $1 failing after $2 such writes; checks exit 1 and the message.
expect_full() {
  local pattern=$1 skip=$2 log=$3
  shift 3
  local rc=0
  TOPO_FAULT_PATH=$pattern TOPO_FAULT_SKIP=$skip LD_PRELOAD=$shim "$@" > "$log" 2>&1 || rc=$?
  if [ "$rc" -ne 1 ]; then fail "$pattern: exit $rc, expected 1"; tail -n 5 "$log" >&2; return; fi
  if ! grep -q "${pattern}.* failed: No space left on device" "$log"; then
    fail "$pattern: the error does not name the file and the errno"; tail -n 5 "$log" >&2
  fi
}

source "$source/scripts/same_run.sh"  # strip_timing, result_figures

# A short run with dropout, evaluations inside epochs and 4 checkpoints.
args=(--task masked-sum --model star --n 12 --k 3 --d 4 --train-size 256 --dev-size 32 --test-size 32 --layers 1
      --hidden 32 --heads 4 --dropout 0.1 --epochs 4 --batch 32 --lr 1e-3 --warmup 10 --eval-every 5 --seed 3
      --threads 1 --progress none)
"$train" "${args[@]}" --out "$work/reference" > "$work/reference.log" 2>&1 \
  || { cat "$work/reference.log"; echo "disk_full: the uninterrupted run failed" >&2; exit 1; }

# site, matching writes that succeed first (the checkpoint: its first file and part of the second)
# (patterns start with '/': a file name, never a folder of this test that contains it)
i=0
for site in "/checkpoint.ckpt 6" "/best.ckpt 3" "/metrics.jsonl 2" "/result.json 0"; do
  read -r name skip <<< "$site"
  i=$((i + 1))
  out="$work/run$i"
  expect_full "$name" "$skip" "$out.full.log" "$train" "${args[@]}" --out "$out"
  if ! "$train" "${args[@]}" --resume auto --out "$out" > "$out.resume.log" 2>&1; then
    fail "$name: the resumed run failed"; tail -n 5 "$out.resume.log" >&2; continue
  fi
  diff -q <(strip_timing "$work/reference/metrics.jsonl") <(strip_timing "$out/metrics.jsonl") > /dev/null \
    || fail "$name: metrics.jsonl after the resume differs from the uninterrupted run"
  diff -q <(result_figures "$work/reference/result.json") <(result_figures "$out/result.json") > /dev/null \
    || fail "$name: result.json's figures after the resume differ from the uninterrupted run"
done

# A tagger's predictions (written after the test evaluation).
tags="$work/tags.txt"
for i in $(seq 1 40); do printf 'Peter NNP B-PER\nsaw VBD O\nParis NNP B-LOC\n\n'; done > "$tags"
tag_args=(--task tag --model star --train "$tags" --dev "$tags" --test "$tags" --epochs 1 --hidden 16 --heads 2
          --layers 1 --threads 1 --progress none --out "$work/tag")
expect_full "/dev.predictions.txt" 0 "$work/tag.full.log" "$train" "${tag_args[@]}"
"$train" "${tag_args[@]}" --resume auto > "$work/tag.resume.log" 2>&1 || fail "predictions: the resumed run failed"
[ -s "$work/tag/test.predictions.txt" ] || fail "predictions: no test.predictions.txt after the resume"

# topo-topology's picture, topo-bench's report.
expect_full "/picture.svg" 0 "$work/draw.log" "$topology" draw "$source/configs/topologies/bigbird.json" --n 8 \
  --svg "$work/picture.svg"
[ ! -e "$work/picture.svg" ] || fail "picture.svg: a partial picture was left"
expect_full "/report.json" 0 "$work/bench.log" "$bench" bf16 --quick --json "$work/report.json"
[ ! -e "$work/report.json" ] || fail "report.json: a partial report was left"

if [ "$failures" -gt 0 ]; then echo "disk_full: $failures failures" >&2; exit 1; fi
echo "disk_full: ok: checkpoint, best, metrics, result, predictions, picture and report each stopped with the" \
     "file and ENOSPC named; the training runs resumed to the uninterrupted run's metrics and figures"
