#!/usr/bin/env bash
# Markdown tables of the classification runs under runs/ (written by reproduce_classification.sh):
# per MTL-16 domain the best dev accuracy of each model, its epochs and training time, and the averages;
# SST-5 / SST-2 test / dev accuracy. Reads the top-level fields of each result.json (one "key": value per line).
# MTL_RUNS picks the MTL-16 run set (default runs/mtl16; runs/mtl16-glove for the runs with vectors).
set -euo pipefail
cd "$(dirname "$0")/.."
field() { sed -n "s/^  \"$2\": \([^,]*\),\{0,1\}$/\1/p" "$1" | tr -d '"'; }
models=${MODELS:-star transformer}
mtl=${MTL_RUNS:-runs/mtl16}

if compgen -G "$mtl/*/*/result.json" > /dev/null; then
  header="| domain |" rule="|---|"
  for m in $models; do header+=" $m dev acc | epochs | train s | ms / batch 128 |"; rule+="---:|---:|---:|---:|"; done
  echo "$header"; echo "$rule"
  declare -A sum count
  for dir in $(ls -d "$mtl"/*/*/ | xargs -n1 basename | sort -u); do
    line="| $dir |"
    for m in $models; do
      r="$mtl/$m/$dir/result.json"
      if [ -f "$r" ]; then
        acc=$(field "$r" dev_acc)
        line+=" $(awk -v a="$acc" 'BEGIN{printf "%.1f", 100*a}') | $(field "$r" epochs_done) | $(awk -v s="$(field "$r" train_seconds)" 'BEGIN{printf "%.0f", s}') | $(awk -v s="$(field "$r" dev_ms_per_batch)" 'BEGIN{printf "%.1f", s}') |"
        sum[$m]=$(awk -v a="${sum[$m]:-0}" -v b="$acc" 'BEGIN{print a+b}')
        count[$m]=$(( ${count[$m]:-0} + 1 ))
      else
        line+=" – | – | – | – |"
      fi
    done
    echo "$line"
  done
  line="| **average** |"
  for m in $models; do
    if [ "${count[$m]:-0}" -gt 0 ]; then
      line+=" **$(awk -v a="${sum[$m]}" -v n="${count[$m]}" 'BEGIN{printf "%.2f", 100*a/n}')** (${count[$m]} domains) | | | |"
    else
      line+=" – | | | |"
    fi
  done
  echo "$line"
  echo
fi

if compgen -G "runs/sst[25]*/*/result.json" > /dev/null; then
  echo "| SST | test acc | dev acc | epochs | train s | ms / test batch 128 |"
  echo "|---|---:|---:|---:|---:|---:|"
  for r in runs/sst[25]*/*/result.json; do
    set_name=$(basename "$(dirname "$(dirname "$r")")") m=$(basename "$(dirname "$r")")
    echo "| $m ($set_name) | $(awk -v a="$(field "$r" test_acc)" 'BEGIN{printf "%.1f", 100*a}') | $(awk -v a="$(field "$r" dev_acc)" 'BEGIN{printf "%.1f", 100*a}') | $(field "$r" epochs_done) | $(awk -v s="$(field "$r" train_seconds)" 'BEGIN{printf "%.0f", s}') | $(awk -v s="$(field "$r" ms_per_test_batch)" 'BEGIN{printf "%.1f", s}') |"
  done
fi
