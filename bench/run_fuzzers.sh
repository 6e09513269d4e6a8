#!/usr/bin/env bash
# run_fuzzers.sh: long libFuzzer runs of every target, one at a time, under
# nice (a script run by hand, never by CI; CI replays the stored inputs).
#
#   cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTPT_FUZZ=ON -DTPT_BUILD_TESTS=OFF
#   cmake --build build-fuzz --target reader_parser_fuzzer formats_fuzzer rules_fuzzer plan_fuzzer archive_fuzzer file_loaders_fuzzer model_config_fuzzer
#   bench/run_fuzzers.sh build-fuzz 900                 # 15 minutes each
#   bench/run_fuzzers.sh build-fuzz 3600 rules plan     # an hour each, two of them
#   FUZZ_JOBS=15 bench/run_fuzzers.sh build-fuzz 240 archive   # 15 processes at once for 4 min: an hour of fuzzing on 16 cores
#
# Targets: reader_parser (logs), formats (--formats files), rules (rule and
# finding files, expressions), plan (the plan / analysis JSON repro reads),
# archive (zip and tar.* listing and members), file_loaders (the small-file
# loader of catalogs, rule/format files and configs, and the GPU catalog),
# model_config (a config.json through `plan --model`'s reading and every server's formulas).
# An hour each of the two new ones: bench/run_fuzzers.sh build-fuzz 3600 archive file_loaders
# Each starts from its stored inputs plus the repository's own files of its
# kind; what it learns stays in fuzz-out/<target>/corpus (ignored by git) and
# crash/timeout/leak inputs land in fuzz-out/<target>/. Copy each found input
# into the target's regressions folder (named in the table below) and fix it:
# the regression tests replay those folders in every build. Prints one row
# per target: runs, seconds, crashes.
set -euo pipefail
build=${1:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
secs=${2:?usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]}
shift 2
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(reader_parser formats rules plan archive file_loaders model_config)
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/fuzz-out

seed() {  # target dir: the repository's own inputs of the target's kind
  local t=$1 d=$2 f
  case $t in
    reader_parser) cp "$root"/parser/fuzz/regressions/* "$d"/ ;;
    formats)
      cp "$root"/parser/fuzz/formats_regressions/* "$d"/
      for f in "$root"/parser/formats/*.json; do (printf '1'; cat "$f") > "$d/formats_$(basename "$f")"; done ;;
    rules)
      cp "$root"/rules/fuzz/regressions/* "$d"/
      for f in "$root"/rules/defs/*.json; do (printf '0'; cat "$f") > "$d/rule_$(basename "$f")"; done
      for f in "$root"/rules/findings/*.json; do (printf '1'; cat "$f") > "$d/finding_$(basename "$f")"; done ;;
    plan) cp "$root"/repro/fuzz/regressions/* "$root"/samples/repro/*.json "$d"/ ;;
    archive)  # a zip and a tar.gz of a sample log (first byte: 0 = .zip, 2 = .tar.gz)
      (cd "$d" && cp "$root"/samples/logs/sglang-tp4-healthy.log r.log &&
        python3 -c "import zipfile; z=zipfile.ZipFile('z','w'); z.write('r.log'); z.close()" &&
        { printf '\0'; cat z; } > seed_zip && tar -czf t r.log && { printf '\2'; cat t; } > seed_targz &&
        rm -f r.log z t) ;;
    model_config) cp "$root"/memory/fuzz/regressions/* "$d"/
      for f in "$root"/samples/models/*/config.json; do cp "$f" "$d/model_$(basename "$(dirname "$f")").json"; done ;;
    file_loaders)  # the built-in GPU catalog, read as a regular file under a 64 KiB cap (first byte 0x0f)
      { printf '\x0f'; cat "$root"/memory/gpu_catalog.json; } > "$d/catalog" ;;
  esac
}
regressions() {
  case $1 in
    reader_parser) echo parser/fuzz/regressions ;;
    formats) echo parser/fuzz/formats_regressions ;;
    rules) echo rules/fuzz/regressions ;;
    plan) echo repro/fuzz/regressions ;;
    model_config) echo memory/fuzz/regressions ;;
    archive | file_loaders) echo "(none yet: keep what it finds under parser/fuzz/)" ;;
  esac
}
bin_of() {
  case $1 in
    reader_parser) echo "$build/parser/fuzz/reader_parser_fuzzer" ;;
    formats) echo "$build/parser/fuzz/formats_fuzzer" ;;
    rules) echo "$build/rules/rules_fuzzer" ;;
    plan) echo "$build/repro/plan_fuzzer" ;;
    model_config) echo "$build/memory/model_config_fuzzer" ;;
    archive) echo "$build/parser/fuzz/archive_fuzzer" ;;
    file_loaders) echo "$build/parser/fuzz/file_loaders_fuzzer" ;;
  esac
}

echo "| target | runs | seconds x processes | crashes/timeouts | regressions folder |"
echo "|---|---:|---:|---:|---|"
for t in "${targets[@]}"; do
  bin=$(bin_of "$t")
  [ -x "$bin" ] || { echo "run_fuzzers.sh: $bin not built (see the header)" >&2; exit 2; }
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  mkdir -p "$out/$t/corpus" "$out/$t/seeds"
  seed "$t" "$out/$t/seeds"
  before=$(ls "$out/$t" | grep -cE '^(crash|timeout|leak|oom)-' || true)
  start=$(date +%s)
  # -timeout: one input taking 25 s is a hang; -rss_limit_mb: 2 GiB is a leak or a blow-up.
  # FUZZ_JOBS=N: N processes sharing the corpus (libFuzzer -jobs/-workers), each logging fuzz-K.log.
  jobs=${FUZZ_JOBS:-1}
  if [ "$jobs" -gt 1 ]; then
    rm -f "$out/$t"/fuzz-*.log
    (cd "$out/$t" && nice -n 10 "$bin" -jobs="$jobs" -workers="$jobs" -max_total_time="$secs" -timeout=25 \
      -rss_limit_mb=2048 -max_len=16384 -artifact_prefix="$out/$t/" -print_final_stats=1 corpus seeds \
      > "$out/$t.log" 2>&1) || true
    runs=$(cat "$out/$t"/fuzz-*.log 2>/dev/null | grep -oE 'stat::number_of_executed_units: *[0-9]+' |
      grep -oE '[0-9]+$' | awk '{s += $1} END {print s}')
  else
    nice -n 10 "$bin" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -max_len=16384 \
      -artifact_prefix="$out/$t/" -print_final_stats=1 "$out/$t/corpus" "$out/$t/seeds" \
      > "$out/$t.log" 2>&1 || true
    runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$out/$t.log" | grep -oE '[0-9]+$' | tail -1 || true)
  fi
  took=$(( $(date +%s) - start ))
  after=$(ls "$out/$t" | grep -cE '^(crash|timeout|leak|oom)-' || true)
  echo "| $t | ${runs:-?} | $took x ${FUZZ_JOBS:-1} | $((after - before)) | $(regressions "$t") |"
done
