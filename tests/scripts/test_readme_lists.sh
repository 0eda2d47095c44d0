#!/usr/bin/env bash
# The README's lists against the registries: every task and model that `topo-train --help` lists must be named
# in README.md as `--task NAME` / `--model NAME`, and every suite `topo-bench --list` lists as `NAME` on the
# README's topo-bench line; a name the README gives that the programs do not know fails too.
#   test_readme_lists.sh README.md build/bin/topo-train build/bin/topo-bench
set -euo pipefail
readme=$1 train=$2 bench=$3
help=$("$train" --help)
tasks=$(awk '/^Tasks \(--task NAME/{on=1; next} /^[^ ]/{on=0} on{print $1}' <<<"$help")
models=$(awk '/^Models \(--model NAME/{on=1; next} /^[^ ]/{on=0} on{print $1}' <<<"$help")
suites=$("$bench" --list | awk '/^suites:/{on=1; next} on && $1 != "all" {print $1}')
failed=0
[ -n "$tasks" ] && [ -n "$models" ] && [ -n "$suites" ] || { echo "could not read the lists from --help / --list"; exit 1; }
for t in $tasks; do
  grep -q -- "--task $t\b" "$readme" || { echo "README.md does not name --task $t (topo-train --help lists it)"; failed=1; }
done
for m in $models; do
  grep -q -- "--model $m\b" "$readme" || { echo "README.md does not name --model $m (topo-train --help lists it)"; failed=1; }
done
# The topo-bench bullet: from its line to the next bullet or blank line.
bench_line=$(awk '/build\/bin\/topo-bench SUITE/{on=1} on && (/^- / && !/topo-bench SUITE/ || /^$/){exit} on' "$readme" | tr '\n' ' ')
[ -n "$bench_line" ] || { echo "README.md has no 'build/bin/topo-bench SUITE' line"; failed=1; }
for s in $suites; do
  grep -q -- "\`$s\`" <<<"$bench_line" || { echo "README.md's topo-bench line does not name suite \`$s\`"; failed=1; }
done
# And the other way round: names the README gives must exist.
for t in $(grep -o -- '--task [a-z-]*' "$readme" | awk '{print $2}' | sort -u); do
  grep -qx -- "$t" <<<"$tasks" || { echo "README.md names --task $t, which topo-train does not know"; failed=1; }
done
for m in $(grep -o -- '--model [a-z|-]*' "$readme" | awk '{print $2}' | tr '|' '\n' | sort -u); do
  [ -z "$m" ] || [ "$m" = "NAME" ] || grep -qx -- "$m" <<<"$models" || { echo "README.md names --model $m, which topo-train does not know"; failed=1; }
done
[ $failed -eq 0 ] && echo "README lists: $(wc -w <<<"$tasks") tasks, $(wc -w <<<"$models") models, $(wc -w <<<"$suites") suites named"
exit $failed
