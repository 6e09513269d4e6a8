// line_source.cc: what printed a rank-less line (rules/line_source.h).
#include "rules/line_source.h"

#include <string_view>

#include <re2/re2.h>

namespace tpt {

namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The producer prefix the parser stripped (parser/formats/*.json "prefixes"):
// "sglang.bracket_date_ranks", "trtllm.cpp_tag", ...; "" when none.
std::string PrefixId(const Event& e) {
  const nlohmann::json& p = e.Wrapper("prefix").json();
  return p.is_object() && p.contains("id") && p["id"].is_string() ? p["id"].get<std::string>() : "";
}

// A process name the producer prefix gave (vLLM's "(EngineCore_DP0 pid=210)"),
// in words; the name as the log prints it when it is not one of these.
LineSource OfProcess(const std::string& process) {
  if (StartsWith(process, "EngineCore")) {
    return {"engine core", "lines of vLLM's engine core process (" + process + ", core.py): the scheduler and KV "
                           "cache set-up, no rank of its own"};
  }
  if (process == "APIServer") return {"API server", "lines of vLLM's API server process (APIServer)"};
  if (StartsWith(process, "LLMEngine") || StartsWith(process, "AsyncLLMEngine")) {
    return {"engine", "lines of vLLM's engine process (" + process + ")"};
  }
  // A worker of no rank the prefix gives (vLLM V0's VllmWorkerProcess, Ray's
  // RayWorkerWrapper): one lane a process, by its pid when the prefix has it.
  return {process, "lines of the process the log names " + process};
}

}  // namespace

LineSource SourceOfLine(const Event& e, const LineContext& run) {
  const std::string& framework = run.framework;
  static const RE2 kPci(R"(PCI:([0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?))");
  static const RE2 kTgiShard(R"(((?:\brank=|\bshard-)(\d+))\b)");
  static const RE2 kPid(R"(\bpid[=: ]+(\d+)\b)");
  const std::string& t = e.text;
  std::string id, whole;
  if (t.find("PCI:") != std::string::npos && RE2::PartialMatch(t, kPci, &id)) {
    return {"GPU " + id, "lines of the GPU at PCI bus id " + id + " (as the kernel names it)"};
  }
  bool tgi = framework == "tgi";
  // parser/formats/tgi.json's field, on the lines that print one (fields are decoded on first read: ask only those).
  bool names_shard = tgi && (t.find("rank=") != std::string::npos || t.find("Shard ") != std::string::npos);
  if (FieldValue shard = names_shard ? e.Get("shard") : FieldValue(); shard.is_number()) {
    id = std::to_string(static_cast<long long>(shard.number()));
    return {"shard " + id, "lines of TGI shard " + id + " (the line names it: rank=" + id + ", Shard " + id + ")"};
  }
  if (tgi && (t.find("rank=") != std::string::npos || t.find("shard-") != std::string::npos) &&
      RE2::PartialMatch(t, kTgiShard, &whole, &id)) {
    return {"shard " + id, "lines of TGI shard " + id + " (the log's " + whole + ")"};
  }
  if (!e.process.empty()) {
    LineSource s = OfProcess(e.process);
    if (s.label == e.process && e.pid >= 0) {
      s.label += " pid " + std::to_string(e.pid);
      s.what = "lines of the process the log names " + e.process + " (pid " + std::to_string(e.pid) + ")";
    }
    return s;
  }
  // torchrun's elastic agent: its own logger (torch/distributed/elastic/...,
  // torch/distributed/run.py) and its ChildFailedError summary. Before the pid:
  // its "(pid: 51232)" names the child it reports on, not itself.
  if ((e.family == "torch" && (StartsWith(e.pattern_id, "elastic_") || StartsWith(e.pattern_id, "child_failed"))) ||
      t.find("torch.distributed.elastic") != std::string::npos ||
      t.find("torch/distributed/elastic/") != std::string::npos ||
      t.find("torch/distributed/run.py") != std::string::npos) {
    return {"launcher", "lines of torchrun's elastic agent (torch.distributed.elastic): the launcher, not a rank"};
  }
  if (t.find("pid") != std::string::npos && RE2::PartialMatch(t, kPid, &id)) {
    return {"pid " + id, "lines of process " + id};
  }
  if (tgi && t.find("text_generation_launcher") != std::string::npos) {
    return {"launcher", "lines of TGI's launcher (text_generation_launcher)"};
  }
  if (tgi && (t.find("text_generation_router") != std::string::npos ||
              t.find("text_generation_client") != std::string::npos)) {
    return {"router", "lines of TGI's router (text_generation_router / client)"};
  }
  if (framework == "lmdeploy" && StartsWith(t, "[TM]")) {
    return {"TurboMind", "lines of LMDeploy's TurboMind engine ([TM])"};
  }
  bool sglang = run.ranked && framework == "sglang", trtllm = framework == "trtllm";
  std::string prefix = sglang || trtllm ? PrefixId(e) : "";
  // SGLang beside TP ranks: a scheduler prints its TP rank, so a line without
  // one is the main process' (server arguments, the sigquit handler) or the
  // detokenizer's. With no ranks at all (TP 1) the scheduler prints none either.
  if (run.ranked && StartsWith(prefix, "sglang.bracket_") && e.dp_rank < 0) {
    if (t.find("Detokenizer") != std::string::npos) {
      return {"detokenizer", "lines of SGLang's detokenizer process (no TP rank in its prefix)"};
    }
    return {"main process", "lines SGLang prints with no TP rank in its prefix beside ranks that print one: its "
                            "main process (server arguments, the sigquit handler), not a scheduler of a rank"};
  }
  if (prefix == "trtllm.cpp_tag") {
    return {"C++ runtime", "lines of TensorRT-LLM's C++ runtime ([TensorRT-LLM] tag): printed by a rank's "
                           "process, which the line does not name"};
  }
  if (run.several_inputs && !e.file.empty()) {
    return {BaseName(e.file), "lines of " + e.file + " that name no GPU, shard or process"};
  }
  return {};
}

namespace {

// No time and no producer prefix: a continuation, or a bare line at exit.
bool Unprefixed(const Event& e) {
  return !e.ts && e.process.empty() && e.pid < 0 && !e.Wrapper("prefix").present();
}

}  // namespace

const LineSource& LineSources::Of(const Event& e) {
  if (last_of_ == &e) return last_;
  last_of_ = &e;
  last_ = SourceOfLine(e, run_);
  if (run_.ranked || !last_.label.empty() || !Unprefixed(e)) return last_;
  if (e.source < 0 || static_cast<size_t>(e.source) >= previous_.size()) return last_;
  Previous& p = previous_[e.source];
  if (p.event == nullptr || p.event->rank >= 0) return last_;
  if (!p.known) {
    p.source = SourceOfLine(*p.event, run_);
    p.known = true;
  }
  if (p.source.label.empty()) return last_;
  static const std::string kFollow = "; with the lines of no prefix of their own that follow one (a message's "
                                     "continuation, an error at exit)";
  last_ = p.source;
  if (last_.what.find(kFollow) == std::string::npos) last_.what += kFollow;
  return last_;
}

void LineSources::Saw(const Event& e) {
  if (e.source < 0) return;
  if (static_cast<size_t>(e.source) >= previous_.size()) previous_.resize(e.source + 1);
  Previous& p = previous_[e.source];
  p.event = &e;
  p.known = last_of_ == &e;
  if (p.known) p.source = last_;
}

}  // namespace tpt
