#!/bin/bash
# run_parser_bench.sh: parser throughput and memory, against ripgrep on the same
# literals in the same run. Figures go to bench/RESULTS.md (parser section).
#   bench/run_parser_bench.sh [BUILD_DIR] [SIZE]      # defaults: build, 200M
# Needs: BUILD_DIR/bench/{gen_serving_log,parse_bench}, rg, taskset, /usr/bin/time (2 GiB line RSS).
#   ROUNDS=15 bench/run_parser_bench.sh build 50M   # more rounds on a noisy machine
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

cpu_of() {  # command... -> prints user+sys seconds of the command (getrusage, ms)
  local TIMEFORMAT='%3U %3S'
  { time "$@" > /dev/null 2>&1; } 2> "$TMP/t"
  awk '{printf "%.3f", $1 + $2}' "$TMP/t"
}

# Loading and checking the built-in formats is a fixed cost per run.
printf 'x\n' > "$TMP/one.log"
load=$(cpu_of taskset -c 0 "$BENCH" "$TMP/one.log")
echo "format load+check (cpu s): $load"

# Each round runs ours, ours reading every event's fields (--decode, what
# `tptriage events` pays) and rg back to back on one core: a shared machine
# changes speed over minutes, so the ratio is taken per round.
ROUNDS=${ROUNDS:-7}
for mix in serving sparse; do
  "$GEN" --bytes "$SIZE" --mix "$mix" > "$TMP/$mix.log"
  echo "--- mix=$mix"
  taskset -c 0 "$BENCH" "$TMP/$mix.log"
  : > "$TMP/rounds"
  for _ in $(seq "$ROUNDS"); do
    ours=$(cpu_of taskset -c 0 "$BENCH" "$TMP/$mix.log")
    dec=$(cpu_of taskset -c 0 "$BENCH" --decode "$TMP/$mix.log")
    rgc=$(cpu_of taskset -c 0 rg -c -F -f "$TMP/literals.txt" "$TMP/$mix.log")
    echo "$ours $dec $rgc" >> "$TMP/rounds"
  done
  sort -n -k1 "$TMP/rounds" | awk '{print "round_cpu_seconds ours=" $1 " decode=" $2 " rg=" $3}'
  awk '{a[NR]=$1/$3; d[NR]=$2/$3; if (NR==1||$1<mo) mo=$1; if (NR==1||$3<mr) mr=$3; if (NR==1||$2<md) md=$2}
       function med(x, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
                                     return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
       END {printf "ratio_ours_to_rg=%.2f (median of %d rounds; min/min %.2f)\n", med(a, NR), NR, mo / mr;
            printf "ratio_decode_to_rg=%.2f (median; min/min %.2f)\n", med(d, NR), md / mr}' "$TMP/rounds"
  rm -f "$TMP/$mix.log"
done

echo "--- one 2 GiB line through stdin (no file kept)"
"$GEN" --long-line 2G | /usr/bin/time -f "max_rss_kib=%M" "$BENCH" - 2>&1 | grep -E 'bytes|long_lines|events|max_rss'
