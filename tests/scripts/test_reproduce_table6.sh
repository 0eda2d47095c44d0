#!/usr/bin/env bash
# scripts/reproduce_table6.sh on a fresh clone: its run directory does not exist yet. A stub topo-train
# stands in for the hours of training; the script must create the directory, start all three variants
# and fail when one of them fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/topo-train" <<'STUB'
#!/usr/bin/env bash
for a in "$@"; do [ "$a" = "${FAIL_VARIANT:-none}" ] && { echo "stub: failing $a"; exit 1; }; done
echo "stub topo-train $*"
STUB
chmod +x "$tmp/topo-train"

RUNS="$tmp/fresh/runs/table6" TOPO_TRAIN="$tmp/topo-train" "$root/scripts/reproduce_table6.sh" > "$tmp/out.txt"
for variant in full no-radical no-ring; do
  grep -q -- "--variant $variant" "$tmp/fresh/runs/table6/$variant.log" || { echo "FAIL: no log for $variant"; exit 1; }
done
if RUNS="$tmp/fresh2" TOPO_TRAIN="$tmp/topo-train" FAIL_VARIANT=no-ring "$root/scripts/reproduce_table6.sh" > /dev/null; then
  echo "FAIL: a failed variant did not fail the script"; exit 1
fi
echo "reproduce_table6.sh: ok"
