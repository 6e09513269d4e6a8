#!/usr/bin/env bash
# hostile_reproducers.sh: the reproducers of both hostile-input rounds
# (2026-12-01 D1-D18, 2026-12-05 D1-D20), each with its expected behaviour,
# against a built tptriage. Prints one table row per reproducer: PASS/FAIL
# and what was seen. Inputs are generated in a scratch folder (removed).
#
#   bench/hostile_reproducers.sh build/tptriage            # both rounds
#   bench/hostile_reproducers.sh build/tptriage new        # the 2026-12-05 round only
set -uo pipefail
T=$(realpath "${1:?usage: hostile_reproducers.sh TPTRIAGE [new|old|all]}")
which_round=${2:-all}
R=$(cd "$(dirname "$0")/.." && pwd)
F=$R/samples/founding/sglang-tp8-rtxpro6000-mfs050.log
HL=$R/samples/logs/sglang-tp4-healthy.log
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
cd "$S" || exit 2
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$(echo "$4" | tr '\n|' ' /' | cut -c1-150)"; }
check() {  # id expected condition-command seen
  local id=$1 expected=$2 seen=$4
  if eval "$3"; then row "$id" "$expected" PASS "$seen"; else row "$id" "$expected" "**FAIL**" "$seen"; fi
}
PLAN="plan --framework vllm --server-version 0.11.0 --tp 2 --params 8B --dtype bf16 --layers 32 --kv-heads 8 --head-dim 128"
echo "| id | expected | result | seen |"
echo "|---|---|---|---|"
if [ "$which_round" != old ]; then
# D1
mkdir -p h/.config/tptriage/gpus.json
o=$(HOME=$PWD/h XDG_CONFIG_HOME= TPTRIAGE_GPU_CATALOG= timeout 60 "$T" analyze "$F" 2>&1); rc=$?
check new-D1 "catalog dir: exit 2 naming it, no abort" '[ $rc = 2 ] && [[ $o == *"is a directory"* ]]' "rc=$rc $(echo "$o" | head -1)"
o=$(timeout 60 "$T" $PLAN --gpu H100 --gpu-catalog /tmp 2>&1); rc=$?
check new-D1b "plan --gpu-catalog /tmp: exit 2" '[ $rc = 2 ]' "rc=$rc $(echo "$o" | head -1)"
# D2
o=$( (ulimit -v 4000000; timeout 60 "$T" $PLAN --gpu H100 --gpu-catalog /dev/zero) 2>&1); rc=$?
check new-D2 "/dev/zero catalog: refused at once" '[ $rc = 2 ]' "rc=$rc $(echo "$o" | head -1)"
mkdir r2; mkfifo r2/x.json
o=$(timeout 10 "$T" analyze "$F" --rules r2 2>&1); rc=$?
check new-D2b "FIFO in --rules: refused, no hang" '[ $rc = 2 ]' "rc=$rc $(echo "$o" | head -1)"
# D3
python3 -c "import zipfile; z=zipfile.ZipFile('t.zip','w'); [z.writestr(f'r/{i}.log','[2025-11-20 09:14:09 TP0] Init torch distributed begin.\n') for i in range(5000)]; z.close()"
s0=$(date +%s.%N); o=$(timeout 60 "$T" analyze t.zip 2>&1); rc=$?; s1=$(date +%s.%N)
check new-D3 "zip of 5,000 logs: finishes in seconds" '[ $rc != 124 ]' "rc=$rc $(echo "$s1 - $s0" | bc) s"
# D4
# (the red team's file held 1.6 GB of lines; a small stream carries the same 1.5 GiB dictionary in its header)
python3 -c "import lzma; open('bigdict.log.xz','wb').write(lzma.compress(b'[2025-09-02 10:02:14 TP0] Decode batch. #running-req: 128\n'*20000, format=lzma.FORMAT_XZ, filters=[{'id': lzma.FILTER_LZMA2, 'dict_size': 1536<<20}]))"
o=$( /usr/bin/time -f 'rss=%M' timeout 60 "$T" analyze bigdict.log.xz 2>&1); rc=$?
rss=$(echo "$o" | grep -o 'rss=[0-9]*' | cut -d= -f2)
check new-D4 "xz with 1.5 GiB dictionary: bounded memory, clear message" '[ "${rss:-9999999}" -lt 400000 ]' "rc=$rc rss=${rss}kB $(echo "$o" | head -1)"
# D5
yes "[2025-09-02 10:02:14 TP0] Decode batch. #running-req: 128, #token: 66560, token usage: 0.15, cuda graph: True, gen throughput (token/s): 3120.87, #queue-req: 0, " | head -c 64M | zstd -q -3 > c.zst
for i in $(seq 1600); do cat c.zst; done > b.log.zst
o=$(timeout 60 "$T" analyze b.log.zst --max-input-bytes 1G 2>&1); rc=$?
check new-D5 "100 GiB .zst with --max-input-bytes 1G: warning + not healthy" '[ $rc = 3 ] && [[ $o == *"max-input-bytes"* ]]' "rc=$rc $(echo "$o" | grep -m1 max-input)"
# D6
python3 -c "import zipfile,sys,warnings; warnings.simplefilter('ignore'); z=zipfile.ZipFile('d.zip','w'); z.writestr('rank0.log',open(sys.argv[1]).read()); z.writestr('rank0.log', open(sys.argv[2]).read()); z.close()" "$HL" "$F"
o=$("$T" analyze d.zip 2>&1); rc=$?
check new-D6 "duplicate member names: never a silent healthy" '[ $rc != 0 ] && [[ $o == *"more than one file"* ]]' "rc=$rc $(echo "$o" | grep -m1 -i 'verdict')"
# D7
mkdir d7; cp "$HL" d7/; cp "$F" r.log; zip -q d7/r.zip r.log
o=$("$T" analyze d7 2>&1); rc=$?
check new-D7 "zip in a folder: read or named, not a silent healthy" '[ $rc != 0 ]' "rc=$rc $(echo "$o" | head -1)"
# D8
head -38 "$F" > h.log; tail -n +39 "$F" | gzip | head -c 30 > t.log.gz
o=$("$T" analyze h.log t.log.gz 2>&1); rc=$?
check new-D8 "cut sibling: not healthy" '[ $rc = 3 ]' "rc=$rc $(echo "$o" | grep -m1 Verdict)"
o=$("$T" analyze h.log missing.log 2>&1); rc=$?
check new-D8b "missing sibling: not healthy" '[ $rc = 3 ]' "rc=$rc $(echo "$o" | grep -m1 Verdict)"
# D9
o=$("$T" analyze h.log 2>&1); rc=$?
check new-D9 "cut after weights, SHORT ledger: not healthy" '[ $rc != 0 ]' "rc=$rc $(echo "$o" | grep -m1 Verdict)"
# D10
mkdir -p r10/j1 r10/j2; cp "$F" r10/j1/; cp "$HL" r10/j2/; : > "r10/j2/x"$'\n'"::add-mask::hunter2"$'\n'"::error title=forged::x.log"
n=$("$T" analyze --runs r10 --format github 2>&1 >/dev/null | grep -c '^::')
check new-D10 "hostile names: no forged workflow command on stderr" '[ "$n" = 0 ]' "lines starting with :: on stderr: $n"
# D11
sed '/^RuntimeError: Not enough/s/$/ ::add-mask::hunter2 ::set-output name=x::y/' "$F" > h11.log
n=$("$T" analyze h11.log | grep -cE '^\s+::')
check new-D11 "wrapped log text: no line starting with ::" '[ "$n" = 0 ]' "indented :: lines: $n"
# D12
o=$("$T" analyze "$F" "$R/samples/env/sglang-check-env.txt" "$R/samples/env/nvidia-smi-q.txt" 2>&1)
check new-D12 "disagreeing dumps: a warning, no merged card" '[[ $o != *"RTX PRO 6000 Blackwell Server Edition (143771 MiB)"* ]] && [[ $o == *"disagree"* ]]' "$(echo "$o" | grep -m1 -o 'disagree[^;]*')"
sed 's/143771 MiB/99999999999999999999999 MiB/' "$R/samples/env/nvidia-smi-q.txt" > q.txt
v=$("$T" analyze "$F" q.txt --format json | python3 -c "import json,sys; print(json.load(sys.stdin)['run'].get('gpu_memory_bytes'))")
check new-D12b "absurd memory total: not a negative number" '[ "${v#-}" = "$v" ]' "gpu_memory_bytes=$v"
# D13
echo '{"gpus":[{"name":"X","aliases":["x1"],"memory_gib":1e308,"arch":"hopper","sm":90,"interconnect":"nvlink"}]}' > c.json
o=$("$T" $PLAN --gpu x1 --gpu-catalog c.json 2>&1); rc=$?
check new-D13 "memory_gib 1e308: refused, no inf" '[ $rc = 2 ] && [[ $o != *"inf"* || $o == *"memory_gib"* ]]' "rc=$rc $(echo "$o" | head -1)"
o=$("$T" $PLAN --gpu-mem 1B 2>&1); rc=$?
check new-D13b "--gpu-mem 1B: the error names --gpu-mem" '[ $rc = 2 ] && [[ $o == *"--gpu-mem"* ]]' "rc=$rc $(echo "$o" | head -1)"
# D14
mkdir r14; python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r['when']=\"matches(anchor.text, '(')\"; json.dump(r, open('r14/disk_full.json','w'))" "$R/rules/defs/disk_full.json"
o=$("$T" analyze "$R/samples/rules/disk_full/pos_inductor_cache.log" --rules r14 2>&1); rc=$?
check new-D14 "bad regex in a rule: refused at load" '[ $rc = 2 ]' "rc=$rc $(echo "$o" | head -1)"
# D15
mkdir f15; python3 -c "import json,sys; f=json.load(open(sys.argv[1])); f['patterns'][0]['regex']='((a{1000}){1000})'; json.dump(f,open('f15/sglang.json','w'))" "$R/parser/formats/sglang.json"
o=$("$T" analyze "$R/samples/logs/sglang-tp2-not-enough-memory.log" --formats f15 2>&1); rc=$?
check new-D15 "bad --formats file: run refused (unless --skip-bad-formats)" '[ $rc = 2 ]' "rc=$rc $(echo "$o" | head -1)"
# D16
o=$("$T" events "$F" --kinds not_enough_memry 2>&1); rc=$?
check new-D16 "--kinds typo: refused with the list" '[ $rc = 2 ]' "rc=$rc $(echo "$o" | head -1)"
# D17
o=$(PAGER=/nonexistent/pager script -qec "$T log $F; echo rc=\$?" /dev/null 2>&1)
check new-D17 "missing pager: the view still shown" '[[ $o == *"Not enough memory"* ]]' "$(echo "$o" | grep -m1 -E 'pager|rc=')"
# D18
mkdir r18; for k in 5 6 7; do yes "[2025-09-02 10:02:14 TP$k] Decode batch. #running-req: 128, #token: 66560, token usage: 0.15, cuda graph: True, gen throughput (token/s): 3120.87, #queue-req: 0, " | head -2000 > r18/rank$k.log; done
o=$("$T" analyze r18 | head -1)
check new-D18 "3 rank files: 'from 3 ranks'" '[[ $o == *"from 3 ranks"* ]]' "$o"
# D19
mkdir o19; o=$("$T" analyze "$F" --json o19/x --sarif ./o19/../o19/x 2>&1); rc=$?
check new-D19 "one file under two spellings: refused" '[ $rc = 2 ]' "rc=$rc $(echo "$o" | head -1)"
# D20
cp "$F" x.log; zip -q -P pw e.zip x.log
o=$("$T" analyze e.zip 2>&1); rc=$?
check new-D20 "encrypted member: says encrypted" '[[ $o == *"encrypted"* ]]' "rc=$rc $(echo "$o" | head -1)"
fi
if [ "$which_round" != new ]; then
yes 'node1:1234:1290 [0] NCCL WARN NET/IB : Got async event : port error' | head -n 1000000 > warn.log
/usr/bin/time -o rss.txt -f '%M' "$T" analyze warn.log >/dev/null 2>&1; rss=$(tail -1 rss.txt)
check old-D1 "1M NCCL WARN lines: bounded memory" '[ "$rss" -lt 200000 ]' "rss=${rss}kB"
mkdir o2; python3 -c "import json,sys; r=json.load(open(sys.argv[1]+'/rules/defs/disk_full.json')); r['when']='('*10000+'true'+')'*10000; json.dump(r, open('o2/disk_full.json','w'))" "$R"
"$T" analyze "$R/samples/logs/sglang-tp2-not-enough-memory.log" --rules o2 >/dev/null 2>&1; rc=$?
check old-D2 "10,000-deep rule: exit 2" '[ $rc = 2 ]' "rc=$rc"
mkdir o3; for i in $(seq -w 0 1099); do echo '[2025-11-20 09:14:09 TP0] Init torch distributed begin.' > o3/r$i.log; done; echo '[2025-11-20 09:15:36 TP0] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: self.server_args.mem_fraction_static=0.5' >> o3/r1099.log
rc=$( (ulimit -n 1024; "$T" analyze o3 >/dev/null 2>&1; echo $?) )
check old-D3 "1,100 files at ulimit -n 1024: the failure found" '[ "$rc" = 1 ]' "rc=$rc"
printf 'node0:9:30 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes X\xef\xbf\xbeY\n' | "$T" analyze - --format junit > j.xml 2>/dev/null
xmllint --noout j.xml 2>/dev/null; rc=$?
check old-D4 "U+FFFE in JUnit: well-formed" '[ $rc = 0 ]' "xmllint rc=$rc"
python3 -c "import random,sys; random.seed(3); sys.stdout.buffer.write(random.randbytes(65536))" > r.bin
"$T" analyze r.bin >/dev/null 2>&1; rc=$?
check old-D5 "random bytes: exit 2" '[ $rc = 2 ]' "rc=$rc"
"$T" analyze /etc/services >/dev/null 2>&1; rc=$?; gzip -c "$F" | head -c 700 > cut.log.gz; "$T" analyze cut.log.gz >/dev/null 2>&1; rc2=$?
check old-D6 "/etc/services exit 4, cut .gz exit 3" '[ $rc = 4 ] && [ $rc2 = 3 ]' "rc=$rc, $rc2"
yes 'node1:1234:1290 [0] NCCL WARN NET/IB : Got async event : port error' | head -n 1500000 > big.log; cat "$F" >> big.log
"$T" repro big.log --backend simulated > out.txt 2>&1 & p=$!; sleep 3; kill -INT $p; s0=$(date +%s.%N); wait $p; s1=$(date +%s.%N)
el=$(echo "$s1 - $s0" | bc)
check old-D7 "repro stops at once on SIGINT" '[ "$(echo "$el < 1" | bc)" = 1 ]' "exit ${el}s after SIGINT"
"$T" events "$F" > /dev/full 2>/dev/null; rc=$?
check old-D8 "events > /dev/full: exit 2" '[ $rc = 2 ]' "rc=$rc"
mkdir -p runs/r1; cp "$F" runs/r1/; cp cut.log.gz runs/r1/
miss=""; for f in text junit markdown sarif github json; do n=$("$T" analyze --runs runs --format $f 2>&1 | grep -c truncated); [ "$n" = 0 ] && miss="$miss $f"; done
check old-D9 "every format carries the truncation warning" '[ -z "$miss" ]' "formats without it:${miss:- none}"
mkdir -p md/r1; sed 's/NCCL WARN Failed to CUDA calloc 6291456 bytes/& @octocat `a|b` c|d/' "$R/samples/rules/nccl_error/pos_calloc.log" > md/r1/rank0.log
n=$("$T" analyze --runs md --format markdown | grep '^|' | grep -c 'a|b')
m=$("$T" analyze md/r1/rank0.log --format markdown | grep -v '^    ' | grep -v '`[^`]*@octocat' | grep -c '[^;]@octocat\|^@octocat')
check old-D10 "markdown: a|b escaped in table cells, no live @mention" '[ "$n" = 0 ] && [ "$m" = 0 ]' "unescaped a|b cells: $n, live @octocat lines: $m"
"$T" analyze "$F" --max-line-bytes -1 >/dev/null 2>&1; rc=$?; "$T" analyze "$F" --max-line-bytes 2M >/dev/null 2>&1; rc2=$?
check old-D11 "--max-line-bytes -1 refused, 2M accepted" '[ $rc = 2 ] && [ $rc2 = 1 ]' "rc=$rc, $rc2"
/usr/bin/time -o rss.txt -f '%M' "$T" events "$F" --buffer-bytes 1G --summary >/dev/null 2>&1; rss=$(tail -1 rss.txt)
check old-D12 "--buffer-bytes 1G on a small file: small RSS" '[ "$rss" -lt 100000 ]' "rss=${rss}kB"
mkdir F13; cp "$R"/parser/formats/*.json F13/; head -c 3000 "$R/parser/formats/nccl.json" > F13/nccl.json
n=$("$T" analyze "$F" --formats F13 --skip-bad-formats 2>&1 >/dev/null | grep -c nccl.json)
check old-D13 "a bad --formats file named once" '[ "$n" = 1 ]' "named $n time(s)"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]+'/samples/repro/sglang_tp8_rtxpro6000.json')); d['fix']={'mem_fraction_statc':0.77}; json.dump(d,open('p.json','w'))" "$R"
"$T" repro p.json --backend simulated >/dev/null 2>&1; rc=$?
check old-D14 "unknown fix key: exit 2" '[ $rc = 2 ]' "rc=$rc"
o=$("$T" plan --framework vllm --server-version 0.11.0 --gpu H100 --tp 4 --params 700B --dtype bf16 --layers 80 --kv-heads 8 --head-dim 128 --max-model-len 8192 2>&1 | grep -m1 remedy)
check old-D15 "plan's TP remedy: the smallest TP that fits" '[[ $o == *"tensor-parallel-size"* ]]' "$o"
"$T" analyze "$F" "$HL" >/dev/null 2>&1; rc=$?
check old-D16 "two runs as one: refused" '[ $rc = 2 ]' "rc=$rc"
cp "$F" x17.log; "$T" analyze x17.log -o x17.log >/dev/null 2>&1; rc=$?
check old-D17 "-o onto the input: refused, log kept" '[ $rc = 2 ] && cmp -s x17.log "$F"' "rc=$rc"
n=$(printf 'node0:9:30 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes \x07\x08\x0b\n' | "$T" analyze - --format github | head -1 | grep -cP '[\x07\x08\x0b]')
check old-D18 "github format: no raw C0 controls" '[ "$n" = 0 ]' "raw C0 in the first line: $n"
fi
