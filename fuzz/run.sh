#!/usr/bin/env bash
# Builds the libFuzzer targets with clang 14 (ASan + UBSan + libFuzzer coverage) in build-sanitize/, the build
# scripts/sanitize.sh runs the tests in (only the targets' mains are compiled once it exists), replays each
# target's kept corpus (fuzz/corpus/<target>/) as a regression pass, then fuzzes each one from that corpus and
# seeds cut from the real files in ../shared/data.
#   fuzz/run.sh                       every target for FUZZ_SECONDS (default 30) each: CI's short run
#   FUZZ_RUNS=1000000 fuzz/run.sh     every target for a fixed number of executions (FUZZ_SECONDS caps it)
#   fuzz/run.sh fuzz_mtl fuzz_cli     only these targets
#   FUZZ_REFRESH_CORPUS=1 fuzz/run.sh after fuzzing, replace fuzz/corpus/<target>/ by the minimised merge
#                                     (libFuzzer -merge=1) of it, what this run found, and the seeds
#   FUZZ_SECONDS=0 fuzz/run.sh        the regression pass alone
#   FUZZ_JOBS=1 fuzz/run.sh           one target at a time (default: one per core)
# A crash, sanitizer report, leak, uncaught exception or an input running > 10 s fails the script; the input
# is kept in build-sanitize/fuzz-artifacts/. Prints the executions per target. See fuzz/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
data=$(cd .. && pwd)/shared/data
build=build-sanitize
[ -d "$data" ] || { echo "fuzz: no data sets at $data (the seeds come from there)" >&2; exit 1; }

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_mtl fuzz_tsv fuzz_jsonl fuzz_sst_trees fuzz_sst_stsa fuzz_snli fuzz_conll fuzz_conllu
                                      fuzz_weibo fuzz_bmes fuzz_word_vectors fuzz_config fuzz_cli fuzz_checkpoint
                                      fuzz_eval_metadata fuzz_topology fuzz_npz fuzz_graph_api fuzz_lexicon)

scripts/sanitize.sh configure
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

# Seeds: slices of every real file a reader reads (a few lines from the start, the middle and the end;
# whole files would make every execution slow), plus the files the project ships for the parsers.
seeds="$build/fuzz-seeds"
rm -rf "$seeds"
slices() {  # slices DIR FILE...: 10-line windows at the start, middle and end of each file
  local dir=$1 f n
  shift
  mkdir -p "$dir"
  for f in "$@"; do
    n=$(wc -l < "$f")
    head -n 10 "$f" > "$dir/$(basename "$f").head"
    sed -n "$((n / 2 + 1)),$((n / 2 + 10))p" "$f" > "$dir/$(basename "$f").mid"
    tail -n 10 "$f" > "$dir/$(basename "$f").tail"
  done
}
slices "$seeds/fuzz_mtl" "$data"/mtl16/*.task.train
# dvd's broken UTF-8 line and MR's Latin-1 bytes: lines that are not valid UTF-8.
grep -a -n -v -x '.*' "$data/mtl16/dvd.task.train" 2>/dev/null | head -n 3 | cut -d: -f2- > "$seeds/fuzz_mtl/dvd.badutf8" || true
LC_ALL=C grep -a -P '[\x80-\xff]' "$data/mtl16/MR.task.train" | head -n 5 > "$seeds/fuzz_mtl/MR.latin1" || true
slices "$seeds/fuzz_tsv" "$data"/chnsenticorp/*.tsv
slices "$seeds/fuzz_sst_trees" "$data"/sst/trees/*.txt
slices "$seeds/fuzz_sst_stsa" "$data"/sst/stsa/*
slices "$seeds/fuzz_conll" "$data"/conll2003/iob2/*.txt "$data"/conll2003/original_iob1/eng.*
slices "$seeds/fuzz_conllu" "$data"/ud_english_ewt/*.conllu
slices "$seeds/fuzz_weibo" "$data"/weibo_ner/weiboNER_2nd_conll.*
slices "$seeds/fuzz_bmes" "$data"/resume_ner/*.bmes
slices "$seeds/fuzz_lexicon" "$data"/zh_lexicon/dict.txt
mkdir -p "$seeds/fuzz_jsonl"  # no JSON-lines set is shipped: the MTL lines as {"label", "text"} objects
for f in "$seeds"/fuzz_mtl/*.head; do
  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^\([^\t]*\)\t\(.*\)$/{"label": "\1", "text": "\2"}/' "$f" > "$seeds/fuzz_jsonl/$(basename "$f")"
done
mkdir -p "$seeds/fuzz_snli"  # SNLI's gzipped JSON lines: slices as plain text, and one gzipped slice
zcat "$data/snli/snli_1.0_dev_part.jsonl.gz" | head -n 10 > "$seeds/fuzz_snli/dev.head" || true
zcat "$data/snli/snli_1.0_train_part.jsonl.gz" | tail -n 10 > "$seeds/fuzz_snli/train.tail" || true
gzip -c "$seeds/fuzz_snli/dev.head" > "$seeds/fuzz_snli/dev.head.gz"
mkdir -p "$seeds/fuzz_word_vectors"
zcat "$data/glove6b50d/glove.6B.50d.subset.txt.gz" | head -n 8 > "$seeds/fuzz_word_vectors/glove.head" || true
zcat "$data/glove6b50d/glove.6B.50d.subset.txt.gz" | head -n 3 | sed '1i 3 50' > "$seeds/fuzz_word_vectors/word2vec.head" || true
mkdir -p "$seeds/fuzz_config" "$seeds/fuzz_cli"
cp configs/*.json "$seeds/fuzz_config/"
i=0
for f in configs/*.json; do  # each shipped config as topo-train flags, one argument per line
  i=$((i + 1))
  { echo; sed -n -E 's/^ *"([a-z_]+)": *"?([^",]*)"?,?$/--\1\n\2/p' "$f" | sed -E ':a; s/^(--[a-z-]*)_/\1-/; ta'; } > "$seeds/fuzz_cli/train$i"
done
printf '\x01--checkpoint\nruns\n--test\nbooks.task.test\n--batch\n64\n--device\ncuda:1\n' > "$seeds/fuzz_cli/eval"
mkdir -p "$seeds/fuzz_topology" "$seeds/fuzz_npz"
cp configs/topologies/*.json "$seeds/fuzz_topology/"
# The real archives are far over -max_len (4096): small ones in their layout, stored and deflated, written with
# the standard library (the .npy header by hand, as numpy.save writes format 1.0).
python3 - "$seeds/fuzz_npz" <<'PY'
import struct, sys, zipfile
def npy(descr, shape, fmt, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<" + fmt * len(values), *values)
n = 5
src = [0, 1, 1, 2, 2, 3, 3, 4]; dst = [1, 0, 2, 1, 3, 2, 4, 3]
arrays = {
    "edge_index": npy("<i8", "(2, 8)", "q", src + dst),
    "x_indptr": npy("<i8", "(6,)", "q", [0, 1, 2, 3, 4, 6]),
    "x_indices": npy("<i8", "(6,)", "q", [0, 1, 2, 0, 1, 2]),
    "x_data": npy("<f4", "(6,)", "f", [1, 1, 1, 1, 2, 2]),
    "x_shape": npy("<i8", "(2,)", "q", [n, 3]),
    "y": npy("<i8", "(5,)", "q", [0, 1, 0, 1, -1]),
    "train_mask": npy("|b1", "(5,)", "?", [1, 1, 0, 0, 0]),
    "val_mask": npy("|b1", "(5,)", "?", [0, 0, 1, 0, 0]),
    "test_mask": npy("|b1", "(5,)", "?", [0, 0, 0, 1, 0]),
}
for name, method in (("path_stored.npz", zipfile.ZIP_STORED), ("path_deflated.npz", zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile(sys.argv[1] + "/" + name, "w", method) as z:
        for key, value in arrays.items():
            z.writestr(key + ".npy", value)
dense = dict(arrays)
del dense["x_indptr"], dense["x_indices"], dense["x_data"], dense["x_shape"]
dense["x"] = npy("<f8", "(5, 2)", "d", [1, 0, 0, 1, 1, 1, 0, 0, 2, 2])
with zipfile.ZipFile(sys.argv[1] + "/dense.npz", "w", zipfile.ZIP_DEFLATED) as z:
    for key, value in dense.items():
        z.writestr(key + ".npy", value)
PY
# fuzz_graph_api reads a call script (fuzz/fuzz_graph_api.cpp's decoding): a valid two-type, two-relation
# graph, then one seed per call kind, so every call starts past make_graph's checks.
mkdir -p "$seeds/fuzz_graph_api"
python3 - "$seeds/fuzz_graph_api" <<'PY'
import sys
def small(v): return v + 3  # a byte decoding to the small integer v (-3..20)
def ids(values): return bytes([len(values)] + [small(v) for v in values] + [1])  # count, values, 1-d
graph = bytes([1, 2, 0, small(6), 2, small(4), 2])  # int64 ids; types (_N, 6), (user, 4); two relations
graph += bytes([0, 1, 0, 1]) + ids([0, 1, 2, 3, 4]) + ids([1, 2, 3, 4, 5])  # (_N, _E, _N): a path
graph += bytes([2, 3, 0, 1]) + ids([0, 1, 2, 3]) + ids([0, 0, 5, 5])  # (user, item, _N)
for call in range(16):
    with open(f"{sys.argv[1]}/call{call}", "wb") as f:
        f.write(graph + bytes([call]) + bytes([1, 2, 3, 4, 5, 1, 1, 2, 0, 1]) * 4)
PY
mkdir -p "$seeds/fuzz_checkpoint" "$seeds/fuzz_eval_metadata"
for t in fuzz_checkpoint fuzz_eval_metadata; do  # real files written by the targets themselves, when built
  [ -x "$build/fuzz/$t" ] || continue
  ext=json
  [ "$t" = fuzz_checkpoint ] && ext=ckpt
  TOPO_FUZZ_WRITE_SEED="$seeds/$t/real.$ext" "$build/fuzz/$t"
done

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
options=(-max_len=4096 -timeout=10 -rss_limit_mb=2048)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/scripts/lsan.supp}

# The regression pass: every input of every kept corpus runs once (-runs=0: read and execute the corpus, no
# mutation) and must run clean, before any time goes to fuzzing.
regression_start=$(date +%s)
for t in "${targets[@]}"; do
  kept="fuzz/corpus/$t"
  if [ ! -d "$kept" ]; then
    [ -n "${FUZZ_REFRESH_CORPUS:-}" ] || { echo "fuzz: no kept corpus $kept (FUZZ_REFRESH_CORPUS=1 fuzz/run.sh $t makes one)" >&2; exit 1; }
    mkdir -p "$kept"
  fi
  log="$build/fuzz-$t.regression.log"
  if ! (cd "$artifacts" && "$root/$build/fuzz/$t" -runs=0 "${options[@]}" "$root/$kept") > "$log" 2>&1; then
    tail -n 40 "$log"
    echo "fuzz: regression pass FAILED on $t's kept corpus ($kept); the input is in $artifacts" >&2
    exit 1
  fi
done
echo "fuzz: regression pass: the kept corpora of ${#targets[@]} targets ran clean in $(( $(date +%s) - regression_start )) s"
[ "${FUZZ_SECONDS:-}" = 0 ] && [ -z "${FUZZ_RUNS:-}" ] && exit 0
# FUZZ_RUNS alone: exactly that many executions; with FUZZ_SECONDS too, whichever limit comes first.
limit=()
[ -n "${FUZZ_RUNS:-}" ] && limit+=(-runs="$FUZZ_RUNS")
[ -z "${FUZZ_RUNS:-}" ] || [ -n "${FUZZ_SECONDS:-}" ] && limit+=(-max_total_time="${FUZZ_SECONDS:-30}")
# Fuzzing: FUZZ_JOBS targets at a time (default: one per core; libFuzzer runs one thread), each for its own
# FUZZ_SECONDS. fuzz_one TARGET writes its summary line to $build/fuzz-TARGET.line and fails on a finding.
fuzz_one() {
  local t=$1 corpus="$build/fuzz-corpus/$1" log="$build/fuzz-$1.log" start result runs cov line fresh
  mkdir -p "$corpus"
  start=$(date +%s)
  # New inputs go to the first directory (the build's scratch corpus); the kept corpus is only read.
  if (cd "$artifacts" && "$root/$build/fuzz/$t" "${limit[@]}" "${options[@]}" -print_final_stats=1 \
        "$root/$corpus" "$root/fuzz/corpus/$t" "$root/$seeds/$t") > "$log" 2>&1; then
    result=ok
  else
    result=FAILED
    tail -n 40 "$log"
  fi
  if [ "$result" = ok ] && [ -n "${FUZZ_REFRESH_CORPUS:-}" ]; then
    # The smallest set of inputs (smallest first) that reaches every edge all three reach: a fresh directory
    # first, so inputs the merge drops leave the kept corpus. Edges only (-use_counters=0): with hit-count
    # buckets too, every other line length is a feature and a text reader keeps ten times the inputs.
    fresh="$build/fuzz-merged/$t"
    rm -rf "$fresh"
    mkdir -p "$fresh"
    (cd "$artifacts" && "$root/$build/fuzz/$t" -merge=1 -use_counters=0 "${options[@]}" "$root/$fresh" "$root/fuzz/corpus/$t" \
       "$root/$corpus" "$root/$seeds/$t") > "$build/fuzz-$t.merge.log" 2>&1 \
      || { tail -n 20 "$build/fuzz-$t.merge.log"; return 1; }
    rm -rf "fuzz/corpus/$t"
    mv "$fresh" "fuzz/corpus/$t"
    echo "fuzz: $t: kept corpus refreshed: $(ls "fuzz/corpus/$t" | wc -l) inputs," \
      "$(find "fuzz/corpus/$t" -type f -printf '%s\n' | awk '{ bytes += $1 } END { print bytes + 0 }') bytes"
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
  line=$(printf '%-20s %-6s %10s executions in %4ss  %s' "$t" "$result" "$runs" "$(( $(date +%s) - start ))" "$cov")
  echo "fuzz: $line"
  echo "$line" > "$build/fuzz-$t.line"
  [ "$result" = ok ]
}
status=0
running=0
for t in "${targets[@]}"; do
  rm -f "$build/fuzz-$t.line"
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "${FUZZ_JOBS:-$(nproc)}" ]; then
    wait -n || status=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || status=1
  running=$((running - 1))
done
echo "fuzz summary:"
for t in "${targets[@]}"; do cat "$build/fuzz-$t.line" 2> /dev/null || echo "$t: no result"; done
exit $status
