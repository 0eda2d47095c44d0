#!/usr/bin/env bash
# The papers' numbers (issue #38's table) from the current main, every row as a user runs it: each model's
# registered recipe (`--task T --model M`, the files, the vectors, the seed), three seeds, dev-selected
# checkpoints, the test files scored once; then the table beside the papers' figures and the goals
# (scripts/summarize_seeds.py papers). It calls the per-table scripts, so each row's runs are theirs:
#   mtl16     MTL-16, 16 domains x Star, Multi-Scale, the Transformer (+ GloVe 6B 50-d with 30 coordinates learned
#             from the training reviews: scripts/mtl16_vectors.sh builds them into VECTORS_DIR first when they are
#             missing, ~5 min of one core; dev: test is held back)
#   sst5      SST-5, trained on the labelled phrases (each distinct one once), scored on sentences; the three models
#   conll     CoNLL-2003 NER, the same three models (+ GloVe)
#   ewt       UD English EWT UPOS, Star (+ GloVe)
#   chinese   Resume and Weibo NER, Star and BiG, with People's Daily vectors (scripts/zh_vectors.sh builds
#             them into ZH_VECTORS first when they are missing, ~12 min on 2 cores)
#   mirrored  mirrored summation (Multi-Scale paper Fig. 2), the five models at K = 1, 10, 50 and two sizes
#             (5,000 and 10,000 training sequences)
#   scripts/reproduce_papers.sh [ROW ...]          (default: every row; about 9 hours on 2 cores, mirrored ~5 of them)
# Environment: DATA (default ../shared/data), BIN (default build/bin), SEEDS (default "1 2 3"), JOBS (runs side
# by side where a script takes it, default 2), ZH_VECTORS and VECTORS_DIR (default runs/vectors). Runs land in
# runs/mtl16-papers-sN/, runs/sst5-subtrees-papers-sN/, runs/tagging/<set>/<model>-papers-sN/ and
# runs/mirrored-papers-{5k,10k}-sN/; a run with a result.json is kept, so an interrupted reproduction resumes.
# Every data file a row names must exist: a missing one fails the row, it is never skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
data=${DATA:-../shared/data}
export DATA=$data BIN=${BIN:-build/bin}
seeds=${SEEDS:-1 2 3}
jobs=${JOBS:-2}
zh=${ZH_VECTORS:-runs/vectors}
vectors_dir=${VECTORS_DIR:-runs/vectors}
rows=${*:-mtl16 sst5 conll ewt chinese mirrored}
glove=$data/glove6b50d/glove.6B.50d.subset.txt.gz
[ -x "$BIN/topo-train" ] || { echo "reproduce_papers: $BIN/topo-train is missing (build first: scripts/setup.sh)" >&2; exit 1; }

classification() {  # SET VECTORS (mtl16 | sst5-subtrees): the seeds JOBS at a time (each seed's models side by side)
  local set=$1 vectors=$2 running=0
  [ -f "$vectors" ] || { echo "reproduce_papers: $vectors is missing" >&2; exit 1; }
  for seed in $seeds; do
    VECTORS=$vectors MODELS="star multiscale transformer" TAG=-papers-s$seed EXTRA="--seed $seed" \
      scripts/reproduce_classification.sh "$set" > "runs/$set-papers-s$seed.log" 2>&1 &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  done
  wait
}

status=0
mkdir -p runs
for row in $rows; do
  echo "== $row"
  case $row in
    mtl16)
      [ -f "$vectors_dir/mtl16_glove50_ft30.txt.gz" ] || OUT=$vectors_dir scripts/mtl16_vectors.sh
      classification mtl16 "$vectors_dir/mtl16_glove50_ft30.txt.gz" || status=1 ;;
    sst5) classification sst5-subtrees "$glove" || status=1 ;;
    conll|ewt) SEEDS=$seeds JOBS=$jobs TAG=-papers scripts/reproduce_tagging.sh "$row" || status=1 ;;
    chinese)
      if [ ! -f "$zh/zh_chars.vec" ] || [ ! -f "$zh/zh_bigrams.vec" ]; then OUT=$zh THREADS=$jobs scripts/zh_vectors.sh; fi
      SEEDS=$seeds JOBS=$jobs TAG=-papers ZH_VECTORS=$zh scripts/reproduce_tagging.sh resume weibo || status=1 ;;
    mirrored)
      for size in 5000 10000; do
        for seed in $seeds; do
          SEED=$seed TRAIN=$size KS="1 10 50" PARALLEL=$jobs OUT=runs/mirrored-papers-$((size / 1000))k-s$seed \
            scripts/reproduce_mirrored_sum.sh > /dev/null || status=1
        done
      done ;;
    *) echo "reproduce_papers: unknown row '$row' (mtl16 sst5 conll ewt chinese mirrored)" >&2; exit 1 ;;
  esac
done
scripts/summarize_seeds.py papers runs || status=1
exit $status
