#!/usr/bin/env bash
# run_scale_bench.sh: time and memory of `tptriage analyze` as inputs grow
# (issue 18: memory bounded by the run's shape, time linear in its length).
#
#   bench/run_scale_bench.sh BUILD/tptriage loop         # crash loop: the founding log x 1 .. 5,000
#   bench/run_scale_bench.sh BUILD/tptriage volume 1G    # 1 GiB of each high-volume line kind
#   bench/run_scale_bench.sh BUILD/tptriage files 1100   # 1,100 rank files under ulimit -n 1024
#
# Inputs are generated in $TMPDIR (bench/gen_volume_log.py), measured one at
# a time under `nice` with /usr/bin/time (wall seconds, peak RSS), and removed.
# Prints one markdown table row per input (bench/RESULTS.md keeps them).
set -euo pipefail
bin=$(realpath "${1:?usage: run_scale_bench.sh TPTRIAGE loop|volume SIZE|files N}")
what=${2:-loop}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

startup=0  # seconds of a run of one line: loading formats and rules
measure() {  # label file...
  local label=$1; shift
  local mb verdict secs kb
  mb=$(du -cb "$@" | tail -1 | awk '{printf "%.2f", $1 / 1048576}')
  nice -n 10 /usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" analyze "$@" > "$tmp/out" 2>/dev/null || true
  read -r secs kb < <(tail -1 "$tmp/time")
  verdict=$(head -1 "$tmp/out" | cut -c1-40)
  awk -v l="$label" -v mb="$mb" -v s="$secs" -v kb="$kb" -v v="$verdict" \
    -v st="$startup" 'BEGIN { printf "| %s | %s | %.2f | %.3f | %.1f | %s |\n", l, mb, s, (mb > 0 ? (s - st) / mb : 0), kb / 1024, v }'
  last_secs=$secs
}

head -1 "$here/../samples/founding/sglang-tp8-rtxpro6000-mfs050.log" > "$tmp/one.log"
measure "start-up" "$tmp/one.log" > /dev/null
measure "start-up" "$tmp/one.log" > /dev/null
startup=$last_secs
echo "start-up (one line): $startup s"
echo "| input | MB | seconds | s/MB after start-up | peak RSS MiB | verdict |"
echo "|---|---:|---:|---:|---:|---|"
case $what in
  loop)
    for n in ${REPEATS:-1 10 50 100 200 500 1000 2000 5000}; do
      "$here/gen_volume_log.py" crashloop "$n" "$tmp/loop.log"
      measure "founding x $n" "$tmp/loop.log"
      rm -f "$tmp/loop.log"
    done ;;
  volume)
    size=${3:-1G}
    for k in ${KINDS:-nccl_info nccl_warn batch_stats warnings tracebacks}; do
      "$here/gen_volume_log.py" "$k" "$size" "$tmp/$k.log"
      measure "$k $size" "$tmp/$k.log"
      rm -f "$tmp/$k.log"
    done ;;
  files)
    n=${3:-1100}
    mkdir "$tmp/d"
    for i in $(seq -w 0 $((n - 1))); do
      echo '[2025-11-20 09:14:09 TP0] Init torch distributed begin.' > "$tmp/d/r$i.log"
    done
    last=$(ls "$tmp/d" | tail -1)
    echo '[2025-11-20 09:15:36 TP0] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: self.server_args.mem_fraction_static=0.5' >> "$tmp/d/$last"
    (ulimit -n 1024; measure "$n files, ulimit -n 1024" "$tmp/d") ;;
  *) echo "run_scale_bench.sh: unknown mode $what (loop, volume or files)" >&2; exit 2 ;;
esac
