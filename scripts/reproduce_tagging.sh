#!/usr/bin/env bash
# The tagging tables of docs/results.md ("Star's tagging recipe"), every run as a user runs it (`--task tag
# --model M`, the files, and the seed), over seeds, then mean +- sd per row (scripts/summarize_seeds.py tag).
#   scripts/reproduce_tagging.sh [SET ...]
# Sets (default all): conll (CoNLL-2003 IOB2 + GloVe 6B 50-d; Star, Multi-Scale, the Transformer), ewt (UD English
# EWT UPOS + GloVe 6B 50-d; Star), resume and weibo (Chinese NER on characters; Star and BiG, --case-feature=false).
# Environment: DATA (default ../shared/data), BIN (default build/bin), SEEDS (default "1 2 3"), JOBS (runs side
# by side, default 2), THREADS per run (default 1), MODELS (overrides every set's model list), EXTRA (more
# topo-train flags for every run), TAG (appended to the run folders, so variants sit side by side), ZH_VECTORS
# (a folder with scripts/zh_vectors.sh's zh_chars.vec and zh_bigrams.vec: the Chinese sets then read the pairs
# with --bigram-feature, and the character vectors). Runs land in runs/tagging/<set>/<model><TAG>-s<seed>/ (result.json, logs); a run that
# already has a result.json is kept, so an interrupted reproduction resumes.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
bin=${BIN:-build/bin}
seeds=${SEEDS:-1 2 3}
jobs=${JOBS:-2}
threads=${THREADS:-1}
tag=${TAG:-}
sets=${*:-conll ewt resume weibo}
[ -x "$bin/topo-train" ] || { echo "reproduce_tagging: $bin/topo-train is missing (build first: scripts/setup.sh)" >&2; exit 1; }

files_of() {  # set -> the topo-train flags naming its files (and the set's own flags)
  case $1 in
    conll) echo "--train $data/conll2003/iob2/train.txt --dev $data/conll2003/iob2/valid.txt" \
                "--test $data/conll2003/iob2/test.txt --vectors $data/glove6b50d/glove.6B.50d.subset.txt.gz" ;;
    ewt) echo "--format conllu --train $data/ud_english_ewt/en_ewt-ud-train.conllu" \
              "--dev $data/ud_english_ewt/en_ewt-ud-dev.conllu --test $data/ud_english_ewt/en_ewt-ud-test.conllu" \
              "--vectors $data/glove6b50d/glove.6B.50d.subset.txt.gz" ;;
    resume) echo "--train $data/resume_ner/train.char.bmes --dev $data/resume_ner/dev.char.bmes" \
                 "--test $data/resume_ner/test.char.bmes --case-feature=false" ;;
    weibo) echo "--train $data/weibo_ner/weiboNER_2nd_conll.train --dev $data/weibo_ner/weiboNER_2nd_conll.dev" \
                "--test $data/weibo_ner/weiboNER_2nd_conll.test --case-feature=false" ;;
    *) echo "reproduce_tagging: unknown set '$1' (conll, ewt, resume, weibo)" >&2; exit 1 ;;
  esac
}
models_of() {
  if [ -n "${MODELS:-}" ]; then echo "$MODELS"; return; fi
  case $1 in
    conll) echo "star multiscale transformer" ;;
    ewt) echo "star" ;;
    *) echo "star big" ;;
  esac
}

list=$(mktemp "${TMPDIR:-/tmp}/topo_tagging.XXXXXX")
trap 'rm -f "$list"' EXIT
for set in $sets; do
  files=$(files_of "$set")
  for f in $files; do  # every named data file must be there: a missing one fails, never skipped
    case $f in "$data"/*) [ -f "$f" ] || { echo "reproduce_tagging: $f is missing (DATA=...)" >&2; exit 1; } ;; esac
  done
  zh=""
  if [ -n "${ZH_VECTORS:-}" ] && { [ "$set" = resume ] || [ "$set" = weibo ]; }; then
    for f in zh_chars.vec zh_bigrams.vec; do
      [ -f "$ZH_VECTORS/$f" ] || { echo "reproduce_tagging: $ZH_VECTORS/$f is missing (scripts/zh_vectors.sh)" >&2; exit 1; }
    done
    zh="--bigram-feature --bigram-vectors $ZH_VECTORS/zh_bigrams.vec"
  fi
  for model in $(models_of "$set"); do
    chars=""
    [ -n "$zh" ] && chars="--vectors $ZH_VECTORS/zh_chars.vec"
    for seed in $seeds; do
      out=runs/tagging/$set/$model$tag-s$seed
      [ -f "$out/result.json" ] && continue
      mkdir -p "$out"
      echo "$bin/topo-train --task tag --model $model $files $chars $zh --threads $threads --seed $seed --progress lines" \
           "--out $out ${EXTRA:-} > $out/train.log 2>&1 && tail -n 1 $out/train.log ||" \
           "{ echo 'reproduce_tagging: $out failed (its train.log)' >&2; exit 1; }" >> "$list"
    done
  done
done
# Each line one run; JOBS of them at a time. A failed run is reported and fails the script at the end.
status=0
xargs -P "$jobs" -I{} -d '\n' bash -c '{}' < "$list" || status=1
for set in $sets; do
  prefixes=()
  for model in $(models_of "$set"); do prefixes+=("runs/tagging/$set/$model$tag"); done
  echo "## $set"
  scripts/summarize_seeds.py tag "${prefixes[@]}" || status=1
done
exit $status
