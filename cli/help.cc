// help.cc: what `tptriage CMD --help`, `tptriage help CMD` and the man page say
// beside each command's options (the options themselves come from the
// command's own Boost description, cli/args.h).
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "report/exit_codes.h"

namespace tpt::cli {

namespace {

// analyze's exit codes, written from the one table (report/exit_codes.h).
const char* AnalyzeExitCodes() {
  static const std::string text = report::ExitCodesHelp();
  return text.c_str();
}

}  // namespace

const std::vector<CommandDoc>& CommandDocs() {
  static const std::vector<CommandDoc> docs = {
      {"analyze", "diagnose why a run died",
       "tptriage analyze [options] [LOG...]\n"
       "tptriage analyze [options] --runs DIR",
       "LOG: log files (one per rank, or stdout and stderr of one run), directories,\n"
       ".gz files, or - for stdin; all of them are one run. With no LOG and a pipe on\n"
       "stdin, stdin is read.\n"
       "--runs DIR: each subdirectory or file of DIR is one run; runs are analysed in\n"
       "parallel and grouped by failure signature.\n"
       "One analysis writes every output asked for: --format to stdout (or --output),\n"
       "plus --json, --markdown, --junit, --sarif, --html, --github files.",
       "tptriage analyze rank*.log\n"
       "tptriage analyze server.log.gz --format json\n"
       "kubectl logs pod | tptriage analyze\n"
       "tptriage analyze --runs ci-logs/ --format github --junit triage.xml --sarif triage.sarif \\\n"
       "    --markdown summary.md --html triage.html --fail-on error",
       AnalyzeExitCodes()},
      {"events", "print the typed events of LOG... as JSON Lines",
       "tptriage events [options] [LOG...]",
       "Prints the typed events of LOG... (files, directories, .gz files, - for\n"
       "stdin; all one run, merged by time) as JSON Lines, then a per-rank summary on\n"
       "stderr. With no LOG and a pipe on stdin, stdin is read. Event kinds: 'tptriage\n"
       "help kinds'.",
       "tptriage events rank0.log rank1.log --kinds cuda_oom,watchdog_timeout\n"
       "tptriage events big.log.gz --summary",
       "0  events printed\n"
       "2  usage or input error"},
      {"plan", "predict the memory ledger and KV pool of a launch",
       "tptriage plan --framework sglang|vllm|tgi|trtllm|lmdeploy --server-version VERSION [options]",
       "Predicts, before a launch, the per-rank memory ledger and the KV tokens a\n"
       "configuration gets, or the failure it will hit with the smallest fraction or\n"
       "utilization that works. Sizes take K/M/G/T and KiB/MiB/GiB/TiB.",
       "tptriage plan --framework sglang --server-version 0.5.3 --gpu \"RTX PRO 6000\" --tp 8 \\\n"
       "    --free-at-init 94GiB --avail-after-weights 21.7GiB --cell-bytes 65536 --mem-fraction-static 0.5\n"
       "tptriage plan --framework vllm --server-version 0.11.0 --gpu H100 --tp 4 --params 70B --dtype bf16 \\\n"
       "    --layers 80 --kv-heads 8 --head-dim 128 --max-model-len 131072 --format json",
       "0  the launch fits\n"
       "1  it predicts a failure\n"
       "2  usage error"},
      {"repro", "reproduce a diagnosis on this box's GPUs",
       "tptriage repro [options] DIAGNOSIS.json\n"
       "tptriage repro [options] LOG...\n"
       "tptriage repro [options] --dry-run DIAGNOSIS.json|LOG...\n"
       "tptriage repro --bench-allreduce [--bench-ranks N,...]",
       "Replays the server's start-up on this box's GPU(s): context, NCCL, custom\n"
       "all-reduce buffers, weights, the server's KV formula on measured memory, the KV\n"
       "pool and CUDA graph capture; the original card is emulated by a ballast. Then\n"
       "runs the fix the same way. DIAGNOSIS.json is `tptriage analyze --format json`\n"
       "output or a plan. Ranks: one process per GPU when there are enough GPUs (or from\n"
       "torchrun/MPI/Slurm variables); otherwise all ranks co-located on one GPU.\n"
       "The CUDA driver and NCCL are loaded only when a GPU run starts.",
       "tptriage analyze server.log --format json > diagnosis.json\n"
       "tptriage repro diagnosis.json --dry-run\n"
       "tptriage repro diagnosis.json\n"
       "tptriage repro server.log --mem-fraction-static 0.55 --target-gpu-mem 96GiB\n"
       "tptriage repro --bench-allreduce --bench-ranks 2,4,8",
       "0  reproduced, and the fix passes\n"
       "1  not reproduced\n"
       "2  usage error\n"
       "3  inconclusive\n"
       "4  reproduced, but the fix fails"},
      {"diff", "compare a working run with a failing one",
       "tptriage diff [options] GOOD BAD\n"
       "tptriage diff [options] --good LOG [--good LOG...] --bad LOG [--bad LOG...]",
       "Compares a run that worked (GOOD) with one that failed (BAD): configuration,\n"
       "versions, memory per rank and phase, the first phase where they diverge, and\n"
       "which difference explains the failure. Each run is log files, directories or\n"
       ".gz files, in any format `tptriage analyze` reads.",
       "tptriage diff good.log bad.log\n"
       "tptriage diff --good a/ --bad b/ --format json",
       "0  no failure-relevant difference\n"
       "1  failure attributed to a difference\n"
       "2  usage or input error\n"
       "3  failure not attributed"},
      {"log", "read LOG... as one view: merged by time, tagged by rank",
       "tptriage log [options] [LOG...]",
       "The run's lines merged by time, wrappers stripped, each tagged with its rank\n"
       "and kind; the diagnosis' evidence lines are marked '>'. --raw: every line as\n"
       "written, the ones not understood too. Streams: any size, bounded memory.\n"
       "LOG: files, directories, .gz, or - for stdin; all of them are one run.",
       "tptriage log rank0.log rank1.log\n"
       "tptriage log server.log -C 3 --rank 0,3\n"
       "tptriage log server.log --raw",
       "0  printed\n"
       "2  usage or input error"},
      {"schema", "print the JSON Schema of a JSON output",
       "tptriage schema NAME\n"
       "tptriage schema --list",
       "NAME: analyze (one run), analyze-runs (--runs, or a run that could not be read),\n"
       "plan, diff, events (one line of its JSON Lines) or repro. The same files are in\n"
       "the repository's schemas/ folder and installed under share/tptriage/schemas.",
       "tptriage schema analyze > analyze.schema.json\n"
       "tptriage schema --list",
       "0  printed\n"
       "2  unknown NAME"},
  };
  return docs;
}

const CommandDoc* FindCommandDoc(std::string_view name) {
  for (const auto& d : CommandDocs()) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

}  // namespace tpt::cli
