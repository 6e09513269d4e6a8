#!/usr/bin/env bash
# analysis_snapshot.sh: what `analyze --format json` says of every log, for
# comparing two builds (a change to how events are stored must not change an
# analysis).
#
#   bench/analysis_snapshot.sh build/tptriage /tmp/before [DIR...]   # before the change
#   bench/analysis_snapshot.sh build/tptriage /tmp/after  [DIR...]   # after it
#   diff -r /tmp/before /tmp/after && echo same
#
# DIRs default to samples/ (add /work/shared/corpus or any other folder of
# logs). Each log gives OUT/<path with / as __>.json: the JSON on stdout and
# the exit code. Every *.log, *.log.gz and *.txt under the folders is one run.
set -euo pipefail
bin=${1:?usage: analysis_snapshot.sh TPTRIAGE OUTDIR [DIR...]}
out=${2:?usage: analysis_snapshot.sh TPTRIAGE OUTDIR [DIR...]}
shift 2
dirs=("$@")
[ ${#dirs[@]} -eq 0 ] && dirs=("$(dirname "$0")/../samples")
mkdir -p "$out"
n=0
while IFS= read -r -d '' f; do
  name=$(printf '%s' "$f" | sed 's|^\./||; s|/|__|g')
  rc=0
  timeout 60 "$bin" analyze --format json "$f" > "$out/$name.json" 2> "$out/$name.err" || rc=$?
  echo "exit $rc" >> "$out/$name.json"
  n=$((n + 1))
done < <(find "${dirs[@]}" -type f \( -name '*.log' -o -name '*.log.gz' -o -name '*.txt' \) -print0 | sort -z)
echo "$n logs -> $out"
