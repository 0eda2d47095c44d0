#!/usr/bin/env bash
# Summarises ROOT (default runs/mirrored; scripts/reproduce_mirrored_sum.sh): markdown tables of test MSE and of
# MSE over the mean-guess baseline per model and K (ROOT/summary.md) and an SVG line plot of MSE against K
# (ROOT/mse_vs_k.svg). A run that
# has no result.json yet is shown as "-" in the table and left out of the plot.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${ROOT:-runs/mirrored}
models=(transformer ms-flex ms-hier-s ms-hier-s-deep star)
ks=$(find "$root" -mindepth 2 -maxdepth 2 -type d -name 'k*' -printf '%f\n' | sed 's/^k//' | sort -n | uniq | tr '\n' ' ')
[ -n "$ks" ] || { echo "summarize_mirrored_sum: no runs under $root" >&2; exit 1; }
value() {  # a top-level number of one run's result.json, or empty
  local f="$root/$2/k$3/result.json"
  if [ -f "$f" ]; then grep -o "\"$1\": *[0-9.eE+-]*" "$f" | head -n 1 | sed 's/.*: *//'; fi
}
mse() { value test_mse "$1" "$2"; }
{
  printf '| model |'; for k in $ks; do printf ' K=%s |' "$k"; done; printf '\n|---|'; for _ in $ks; do printf -- '---:|'; done; printf '\n'
  for m in "${models[@]}"; do
    printf '| %s |' "$m"
    for k in $ks; do v=$(mse "$m" "$k"); printf ' %s |' "${v:--}"; done
    printf '\n'
  done
  printf '\nTest MSE over the mean-guess baseline (1 = no better than guessing the mean):\n\n'
  printf '| model |'; for k in $ks; do printf ' K=%s |' "$k"; done; printf '\n|---|'; for _ in $ks; do printf -- '---:|'; done; printf '\n'
  for m in "${models[@]}"; do
    printf '| %s |' "$m"
    for k in $ks; do v=$(value mse_over_baseline "$m" "$k"); if [ -n "$v" ]; then printf ' %.3f |' "$v"; else printf ' - |'; fi; done
    printf '\n'
  done
} > "$root/summary.md"
cat "$root/summary.md"
# The plot: K on x (linear), MSE on y (linear), one polyline per model.
points=$(for m in "${models[@]}"; do for k in $ks; do v=$(mse "$m" "$k"); if [ -n "$v" ]; then echo "$m $k $v"; fi; done; done)
echo "$points" | awk -v out="$root/mse_vs_k.svg" '
  NF == 3 { m[NR] = $1; k[NR] = $2; v[NR] = $3; if ($2 > kmax) kmax = $2; if ($3 > vmax) vmax = $3; n = NR }
  END {
    if (n == 0) exit 0
    W = 640; H = 400; L = 60; R = 150; T = 30; B = 50
    split("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd", col, " ")
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H > out
    printf "<text x=\"%d\" y=\"18\">Mirrored summation (N = 100, d = 50): test MSE against K</text>\n", L > out
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, H - B, W - R, H - B > out
    printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L, H - B > out
    printf "<text x=\"%d\" y=\"%d\">K</text><text x=\"5\" y=\"%d\">MSE</text>\n", (W - R + L) / 2, H - 15, T + 10 > out
    printf "<text x=\"%d\" y=\"%d\">%g</text><text x=\"5\" y=\"%d\">%.3g</text>\n", W - R - 10, H - B + 15, kmax, T + 25, vmax > out
    c = 0
    for (i = 1; i <= n; i++) {
      if (!(m[i] in seen)) { seen[m[i]] = ++c; order[c] = m[i] }
      x = L + (W - R - L) * k[i] / kmax; y = H - B - (H - B - T) * v[i] / vmax
      pts[m[i]] = pts[m[i]] sprintf("%.1f,%.1f ", x, y)
    }
    for (j = 1; j <= c; j++) {
      printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", col[j], pts[order[j]] > out
      printf "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", W - R + 10, T + 20 * j, col[j], order[j] > out
    }
    printf "</svg>\n" > out
  }'
echo "wrote $root/summary.md and $root/mse_vs_k.svg"
