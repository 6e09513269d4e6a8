#!/bin/bash
# run_parser_bench.sh: parser throughput and memory, against ripgrep on the same
# literals in the same run. Figures go to bench/RESULTS.md (parser section).
#   bench/run_parser_bench.sh [BUILD_DIR] [SIZE]      # defaults: build, 200M
# Needs: BUILD_DIR/bench/{gen_serving_log,parse_bench}, rg, /usr/bin/time.
set -euo pipefail
BUILD=${1:-build}
SIZE=${2:-200M}
GEN=$BUILD/bench/gen_serving_log
BENCH=$BUILD/bench/parse_bench
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo "nproc: $(nproc); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BENCH" --literals > "$TMP/literals.txt"
echo "literals: $(wc -l < "$TMP/literals.txt")"

cpu_of() {  # command... -> prints user+sys seconds of the command
  /usr/bin/time -f "%U %S" -o "$TMP/t" "$@" > /dev/null
  awk '{printf "%.3f", $1 + $2}' "$TMP/t"
}

# Loading and checking the built-in formats is a fixed cost per run.
printf 'x\n' > "$TMP/one.log"
load=$(cpu_of taskset -c 0 "$BENCH" "$TMP/one.log")
echo "format load+check (cpu s): $load"

for mix in serving sparse; do
  "$GEN" --bytes "$SIZE" --mix "$mix" > "$TMP/$mix.log"
  taskset -c 0 "$BENCH" "$TMP/$mix.log" > "$TMP/ours.txt"
  ours=$(grep cpu_seconds "$TMP/ours.txt" | cut -d= -f2)
  rg_cpu=$(cpu_of taskset -c 0 rg -c -F -f "$TMP/literals.txt" "$TMP/$mix.log")
  echo "--- mix=$mix"
  cat "$TMP/ours.txt"
  echo "rg_cpu_seconds=$rg_cpu"
  awk -v a="$ours" -v b="$rg_cpu" -v l="$load" 'BEGIN {printf "ratio_ours_to_rg=%.2f (without format load: %.2f)\n", a / b, (a - l) / b}'
  rm -f "$TMP/$mix.log"
done

echo "--- one 2 GiB line through stdin (no file kept)"
"$GEN" --long-line 2G | /usr/bin/time -f "max_rss_kib=%M" "$BENCH" - 2>&1 | grep -E 'bytes|long_lines|events|max_rss'
