#!/usr/bin/env bash
# archive_inputs_test.sh TPTRIAGE SOURCE_DIR: inputs as they come. A log as
# .xz and .zst gives the same answer as the plain log; GitHub's log archive
# (.zip: a file per job, a folder per job with a file per step) reads like the
# folder it unpacks to, and a .zip of runs works with --runs like the folder;
# a truncated archive is named in a warning and judged like a truncated .gz of
# the same log; a .zip on stdin is refused with what to do. Flight-recorder
# dumps and stack dumps packed in a .tar.gz or .zip beside a log are found by
# content and give the verdict their folder gives.
set -uo pipefail
bin=$(realpath "$1"); src=$(realpath "$2")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
log="$src/samples/logs/sglang-tp2-not-enough-memory.log"
healthy="$src/samples/logs/vllm-v1-tp2-healthy.log"
cd "$work" || exit 1

verdict() {  # root cause and exit code of `analyze --format json "$@"`
  local out code
  out=$("$bin" analyze --format json "$@" 2>/dev/null); code=$?
  printf '%s exit=%s' "$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("root_cause"))')" "$code"
}
want=$(verdict "$log")
case "$want" in kv_pool_no_room*exit=1) ;; *) fail "the plain log: $want" ;; esac

# .xz and .zst, by their magic bytes whatever the name.
python3 -c 'import lzma,sys; sys.stdout.buffer.write(lzma.compress(open(sys.argv[1],"rb").read()))' "$log" > run.log.xz
[ "$(verdict run.log.xz)" = "$want" ] || fail ".xz: $(verdict run.log.xz), want $want"
cp run.log.xz renamed.log
[ "$(verdict renamed.log)" = "$want" ] || fail ".xz named .log: $(verdict renamed.log)"
if command -v zstd >/dev/null; then
  zstd -q "$log" -o run.log.zst || fail "zstd"
  [ "$(verdict run.log.zst)" = "$want" ] || fail ".zst: $(verdict run.log.zst), want $want"
else
  echo "note: zstd (the command) not installed; .zst is covered by parser/reader_archive_test"
fi

# GitHub's log archive: the job's whole log at the top, its steps in a folder.
mkdir -p gh/serve
printf '2026-12-01T10:00:00.0000000Z ##[group]Runner Image\n2026-12-01T10:00:00.0000000Z ##[endgroup]\n' > "gh/serve/1_Set up job.txt"
cp "$log" "gh/serve/2_Run server.txt"
cat "gh/serve/1_Set up job.txt" "$log" > gh/0_serve.txt
(cd gh && python3 -c 'import sys,zipfile,os
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for d, _, fs in sorted(os.walk(".")):
        for f in sorted(fs): z.write(os.path.join(d, f))' ../logs_7.zip)
[ "$(verdict logs_7.zip)" = "$(verdict gh)" ] || fail ".zip: $(verdict logs_7.zip), the folder: $(verdict gh)"
[ "$(verdict logs_7.zip/serve)" = "$want" ] || fail "a folder in the .zip: $(verdict logs_7.zip/serve)"
[ "$(verdict "logs_7.zip/serve/2_Run server.txt")" = "$want" ] || fail "a file in the .zip"
json=$("$bin" analyze --format json logs_7.zip/serve 2>/dev/null)
grep -q '"file": "logs_7.zip/serve/2_Run server.txt"' <<< "$json" || fail "evidence does not name the file inside the archive"

# A .zip of runs (zipped with its folder, as `zip -r ci.zip ci` does) = --runs on the folder.
runs_of() {
  "$bin" analyze --runs "$1" --format json 2>/dev/null | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(" ".join("%s:%s:%s" % (r["name"], (r.get("analysis") or {}).get("root_cause"), r["exit_code"]) for r in d["runs"]))'
}
(cd "$src/samples/runs" && python3 -c 'import sys,zipfile,os
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    for d, _, fs in sorted(os.walk("ci")):
        for f in sorted(fs): z.write(os.path.join(d, f))' "$work/ci.zip")
want_runs=$(runs_of "$src/samples/runs/ci")
[ "$(echo "$want_runs" | wc -w)" -ge 5 ] || fail "--runs samples/runs/ci: $want_runs"
[ "$(runs_of ci.zip)" = "$want_runs" ] || fail "--runs ci.zip: $(runs_of ci.zip), the folder: $want_runs"

# Truncated: a warning that names the archive, and the same judgement as a
# truncated .gz of the same log (partial input is never healthy).
# The log comes first and plain lines follow, so both cuts land after it.
for f in "$log" "$healthy"; do
  { cat "$f"; seq 1 200000 | sed 's/^/plain output line /'; } > long.log
  python3 -c 'import sys,zipfile
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z: z.write(sys.argv[1], "job/2_Run server.txt")' long.log cut.zip
  gzip -c long.log > cut.log.gz
  for a in cut.zip cut.log.gz; do
    size=$(stat -c %s "$a"); head -c $((size * 6 / 10)) "$a" > "part-$a"
  done
  err=$("$bin" analyze part-cut.zip 2>&1 >/dev/null)
  grep -q 'part-cut.zip.*truncated or corrupt' <<<"$err" || fail "truncated .zip: no warning naming it: $err"
  json=$("$bin" analyze --format json part-cut.zip 2>/dev/null)
  grep -q 'truncated or corrupt' <<< "$json" || fail "truncated .zip: no warning in the JSON"
  [ "$(verdict part-cut.zip)" = "$(verdict part-cut.log.gz)" ] \
    || fail "truncated .zip of $(basename "$f"): $(verdict part-cut.zip), truncated .gz: $(verdict part-cut.log.gz)"
done

# Dumps in an archive beside the log: the same verdict, rule and rank as the folder.
verdict_of() {  # rule, rank and verdict text of `analyze --format json "$@"`
  "$bin" analyze --format json "$@" 2>/dev/null | python3 -c 'import json,sys
j = json.load(sys.stdin); d = (j.get("diagnoses") or [{}])[0]
print(d.get("rule"), d.get("rank"), j.get("verdict"))'
}
printf '%s\n' "[rank0]:[E1205 15:57:51.100000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) ran for 600010 milliseconds before timing out." > train.log
for case in pos_hang_8ranks pos_nodump_4ranks pos_p2p_4ranks; do
  dir="$src/samples/rules/fr_hang_wavefront/$case"
  mkdir -p "fr_$case" && cp "$dir"/* "fr_$case/"
  folder=$(verdict_of train.log "fr_$case")
  case "$folder" in fr_hang_wavefront\ *) ;; *) fail "$case as a folder: $folder" ;; esac
  tar czf "$case.tar.gz" -C "$dir" .
  python3 -c 'import sys,zipfile,os
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(os.listdir(sys.argv[1])): z.write(os.path.join(sys.argv[1], f), "dumps/" + f)' "$dir" "$case.zip"
  for a in "$case.tar.gz" "$case.zip"; do
    [ "$(verdict_of train.log "$a")" = "$folder" ] || fail "$a beside the log: $(verdict_of train.log "$a"); the folder: $folder"
  done
done

# A zip on stdin: refused, naming what to do.
out=$("$bin" analyze - < logs_7.zip 2>&1); code=$?
[ "$code" -eq 2 ] || fail "a .zip on stdin: exit $code"
grep -q 'pass it as a file' <<<"$out" || fail "a .zip on stdin: $out"
echo "archive inputs: ok"
