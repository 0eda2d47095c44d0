#!/usr/bin/env bash
# The default thread count against one thread on every shipped recipe (issues #39 item 4, #41 item 4): the
# default must never be the slower. Each recipe runs as a user runs it (its task and model, the data and vectors
# of docs/results.md's command), cut short so that the table fits in about half an hour on 2 cores: the large
# training files are cut to their first sentences or lines (in a temporary folder, never in the project) and
# most recipes train one or a few epochs. Time per training step does not depend on the cut; a run's evaluations
# (full dev and test files) are part of what a user waits for, so both are reported:
#   step ms   = epoch_train_seconds (steps only, no evaluation) x epochs / steps, from result.json;
#   run s     = train_seconds (steps and evaluations).
# Thread counts alternate inside each round (their order reversed every round), so a drifting load slows both.
#
#   bench/threads.sh                       # every recipe, the default count and 1, 2 rounds
#   bench/threads.sh --only mr-star,cora-gcn --rounds 3 --threads "2 1 3"
#
# Options: --bin DIR (default build/bin), --data DIR (default ../shared/data), --rounds N (2), --threads "LIST"
# (counts to compare; "default" is the count the program picks; default "default 1"), --only NAMES (comma-
# separated recipe names), --list, --out DIR (run folders and the TSV of every run; default a temporary folder,
# removed at the end). Needs jq. A recipe whose data is missing fails the script (it is never skipped).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=build/bin
data=../shared/data
rounds=2
counts="default 1"
only=""
out=""
list=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --data) data="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --threads) counts="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --list) list=1; shift ;;
    *) echo "threads.sh: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
command -v jq > /dev/null || { echo "threads.sh: needs jq" >&2; exit 2; }
[[ -x "$bin/topo-train" ]] || { echo "threads.sh: no executable '$bin/topo-train' (build first: scripts/setup.sh)" >&2; exit 2; }
if [[ -z "$out" ]]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/topo-threads.XXXXXX")
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/data"

D=$data
S=$out/data
vec=(--vectors "$D/glove6b50d/glove.6B.50d.subset.txt.gz")
# name | what a user runs (data paths under $D, cut files under $S) | the cut files the command reads
recipes=(
  "masked-sum-star|--config configs/masked_sum_star.json --epochs 4"
  "mirrored-sum-multiscale|--task mirrored-sum --model multiscale --epochs 1"
  "mr-star|--config configs/mtl16_star.json --train $D/mtl16/MR.task.train"
  "mr-transformer|--config configs/mtl16_transformer.json --train $D/mtl16/MR.task.train"
  "mr-multiscale|--config configs/mtl16_multiscale.json --train $D/mtl16/MR.task.train"
  "mr-topology-longformer|--task classify --format mtl --model graph --topology configs/topologies/longformer.json --train $D/mtl16/MR.task.train"
  "sst5-star|--config configs/sst5_star.json --train $D/sst/trees/train.txt --dev $D/sst/trees/dev.txt --test $D/sst/trees/test.txt ${vec[*]} --epochs 1"
  "chnsenticorp-big|--task classify --model big --format tsv --text-field text_a --train $S/csc_train.tsv --dev $D/chnsenticorp/dev.tsv --epochs 1"
  "conll-star|--task tag --model star --train $S/conll_train.txt --dev $D/conll2003/iob2/valid.txt ${vec[*]} --epochs 1"
  "conll-transformer|--task tag --model transformer --train $S/conll_train.txt --dev $D/conll2003/iob2/valid.txt ${vec[*]} --epochs 1"
  "conll-multiscale|--task tag --model multiscale --train $S/conll_train.txt --dev $D/conll2003/iob2/valid.txt ${vec[*]} --epochs 1"
  "ewt-star|--task tag --model star --format conllu --train $S/ewt_train.conllu --dev $D/ud_english_ewt/en_ewt-ud-dev.conllu ${vec[*]} --epochs 1"
  "resume-big|--task tag --model big --train $S/resume_train.bmes --dev $D/resume_ner/dev.char.bmes --epochs 1"
  "snli-star|--task nli --model star --train $S/snli_train.jsonl --dev $D/snli/snli_1.0_dev_part.jsonl.gz ${vec[*]} --epochs 1"
  "cora-gcn|--task node-classify --model gcn --data $D/planetoid/cora.npz"
  "cora-gat|--task node-classify --model gat --data $D/planetoid/cora.npz"
  "cora-sage|--task node-classify --model sage --data $D/planetoid/cora.npz"
)
if [[ $list == 1 ]]; then
  for r in "${recipes[@]}"; do echo "${r%%|*}: topo-train ${r#*|}"; done
  exit 0
fi

need() { [[ -f "$1" ]] || { echo "threads.sh: $1 is missing: the recipes need ../shared/data (--data DIR)" >&2; exit 1; }; }
# The first N blank-line-separated sentences of a CoNLL-style file.
first_sentences() { need "$1"; awk -v n="$2" 'NF == 0 { if (++s >= n) exit } { print }' "$1" > "$3"; }
first_sentences "$D/conll2003/iob2/train.txt" 2000 "$S/conll_train.txt"
first_sentences "$D/ud_english_ewt/en_ewt-ud-train.conllu" 2000 "$S/ewt_train.conllu"
first_sentences "$D/resume_ner/train.char.bmes" 1000 "$S/resume_train.bmes"
need "$D/chnsenticorp/train.tsv"; head -n 2001 "$D/chnsenticorp/train.tsv" > "$S/csc_train.tsv"  # header + 2000
need "$D/snli/snli_1.0_train_part.jsonl.gz"; { zcat "$D/snli/snli_1.0_train_part.jsonl.gz" || true; } | head -n 12800 > "$S/snli_train.jsonl"
for f in "$D/mtl16/MR.task.train" "$D/sst/trees/train.txt" "$D/glove6b50d/glove.6B.50d.subset.txt.gz" \
         "$D/planetoid/cora.npz" "$D/conll2003/iob2/valid.txt" "$D/snli/snli_1.0_dev_part.jsonl.gz"; do need "$f"; done

selected=()
for r in "${recipes[@]}"; do
  name=${r%%|*}
  if [[ -z "$only" || ",$only," == *",$name,"* ]]; then selected+=("$r"); fi
done
[[ ${#selected[@]} -gt 0 ]] || { echo "threads.sh: --only '$only' names no recipe (--list)" >&2; exit 2; }

load() { cut -d' ' -f1 /proc/loadavg; }
read -r -a order <<< "$counts"
tsv=$out/runs.tsv
printf 'recipe\tround\tthreads_asked\tthreads\tsteps\tstep_ms\trun_s\n' > "$tsv"
echo "threads.sh: $bin/topo-train, $(nproc) CPUs usable, load at start $(load), $rounds rounds, counts: $counts"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
for ((round = 1; round <= rounds; ++round)); do
  for r in "${selected[@]}"; do
    name=${r%%|*}
    read -r -a args <<< "${r#*|}"
    for t in "${order[@]}"; do
      dir="$out/$name-r$round-t$t"
      rm -rf "$dir"
      flag=()
      [[ $t == default ]] || flag=(--threads "$t")
      if ! "$bin/topo-train" "${args[@]}" "${flag[@]}" --progress none --out "$dir" > "$dir.log" 2>&1; then
        echo "threads.sh: $name (threads $t) failed; its log, $dir.log, ends:" >&2
        tail -5 "$dir.log" >&2
        exit 1
      fi
      jq -r --arg n "$name" --arg r "$round" --arg t "$t" \
        '[$n, $r, $t, .threads, .steps, (1000 * .epoch_train_seconds.mean * .epoch_train_seconds.epochs / .steps), .train_seconds] | @tsv' \
        "$dir/result.json" >> "$tsv"
    done
  done
  order=($(printf '%s\n' "${order[@]}" | tac))
done
echo "load at end $(load)"

# One row per recipe: per count the median over rounds (min-max), and each count's ratio to the first.
python3 - "$tsv" "$counts" << 'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
counts = sys.argv[2].split()
by = {}
for r in rows:
    by.setdefault(r["recipe"], {}).setdefault(r["threads_asked"], []).append(r)
def med(rs, key):
    return statistics.median(float(r[key]) for r in rs)
head = ["recipe", "steps"]
for c in counts:
    head += [f"step ms ({c})", f"run s ({c})"]
for c in counts[1:]:
    head += [f"step {c}/{counts[0]}", f"run {c}/{counts[0]}"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for name, per in by.items():
    first = per[counts[0]]
    cells = [name, first[0]["steps"]]
    for c in counts:
        rs = per[c]
        t = rs[0]["threads"]
        cells += [f"{med(rs, 'step_ms'):.2f} ({min(float(r['step_ms']) for r in rs):.2f}-{max(float(r['step_ms']) for r in rs):.2f}, {t}t)",
                  f"{med(rs, 'run_s'):.2f}"]
    for c in counts[1:]:
        cells += [f"{med(per[c], 'step_ms') / med(first, 'step_ms'):.2f}", f"{med(per[c], 'run_s') / med(first, 'run_s'):.2f}"]
    print("| " + " | ".join(cells) + " |")
EOF
echo "every run: $tsv"
