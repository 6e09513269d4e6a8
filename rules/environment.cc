// environment.cc: see environment.h.
#include "rules/environment.h"

#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace tpt {
namespace {

// Kinds a dump yields; an input holding only these (and a dump's own lines)
// is a dump, whatever else it printed.
bool FactKind(const std::string& kind) {
  return kind == "env_dump" || kind == "framework_version" || kind == "gpu_info" || kind == "gpu_topology" ||
         kind == "env_var";
}

std::string Str(const Event& e, const char* field) {
  const FieldValue v = e.Get(field);
  if (v.is_string()) return v.string();
  if (v.json().is_number_integer()) return std::to_string(v.json().get<int64_t>());
  return "";
}

void Keep(std::string* slot, const std::string& value) {
  if (slot->empty() && !value.empty()) *slot = value;
}

// NVLink when any GPU-to-GPU cell is NV#, else the PCIe path kinds seen. The
// row's cells are in column order: GPUs first, then NICs; a row has as many
// GPU columns as there are GPU rows.
std::string Topology(const std::vector<std::string>& rows) {
  int nv = 0;
  std::set<std::string> pcie;
  const size_t gpus = rows.size();
  for (const std::string& row : rows) {
    std::istringstream in(row);
    std::string cell;
    for (size_t col = 0; col < gpus && in >> cell; ++col) {
      if (cell.size() > 2 && cell.rfind("NV", 0) == 0) nv = std::max(nv, std::atoi(cell.c_str() + 2));
      else if (cell != "X") pcie.insert(cell);
    }
  }
  if (nv > 0) return "NVLink (NV" + std::to_string(nv) + ")" + (pcie.empty() ? "" : " and PCIe between some GPUs");
  if (pcie.empty()) return "";
  std::string s = "PCIe only, no NVLink (";
  bool first = true;
  for (const char* k : {"PIX", "PXB", "PHB", "NODE", "SYS", "SOC"}) {
    if (!pcie.count(k)) continue;
    s += (first ? "" : ", ") + std::string(k);
    first = false;
  }
  return s + ")";
}

constexpr double kMaxGpuMemory = 16384.0 * (1u << 30);  // 16 TiB: the schema's bound, no card has more

// "NVIDIA H200" and "H200", "NVIDIA RTX PRO 6000 Blackwell Server Edition" and
// "RTX PRO 6000": lowercase letters and digits, without the vendor.
std::string GpuKey(const std::string& name) {
  std::string k;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (k.rfind("nvidia", 0) == 0) k = k.substr(6);
  return k;
}

}  // namespace

std::string GpuDisagreement(const HostFacts& facts, const std::string& log_gpu) {
  if (facts.gpu.empty() || log_gpu.empty()) return "";
  const std::string a = GpuKey(facts.gpu), b = GpuKey(log_gpu);
  if (a.empty() || b.empty() || a.find(b) != std::string::npos || b.find(a) != std::string::npos) return "";
  return "the environment dump's GPU (" + facts.gpu + ") is not the log's (" + log_gpu +
         "): is the dump from another machine? the log's GPU is shown";
}

bool IsHostFactEvent(const Event& e) { return e.family == "env" || e.kind == "gpu_topology"; }

HostFacts TakeEnvironment(std::vector<Event>* events, RunTotals* totals) {
  HostFacts facts;
  // Which inputs are dumps: a dump line, and nothing but facts.
  std::map<int, bool> has_dump_line, only_facts;
  for (const Event& e : *events) {
    if (!only_facts.count(e.source)) only_facts[e.source] = true;
    if (e.family == "env" || e.kind == "env_dump") has_dump_line[e.source] = true;
    if (!FactKind(e.kind)) only_facts[e.source] = false;
  }
  auto is_dump = [&](int source) { return has_dump_line.count(source) && only_facts[source]; };

  std::vector<std::string> topo_rows;
  std::set<std::string> dump_files;
  std::map<std::string, std::string> gpus, drivers;  // value -> where first seen
  std::string memory_gpu;                            // the GPU the memory total came with
  std::vector<size_t> new_index(events->size() + 1);
  size_t kept = 0;
  for (size_t i = 0; i < events->size(); ++i) {
    Event& e = (*events)[i];
    new_index[i] = kept;
    if (!IsHostFactEvent(e) && !is_dump(e.source)) {
      if (kept != i) (*events)[kept] = std::move(e);
      ++kept;
      continue;
    }
    ++facts.events;
    if (is_dump(e.source)) dump_files.insert(e.file);
    if (e.kind == "framework_version") {
      const std::string fw = Str(e, "framework"), ver = Str(e, "version");
      if (fw == "torch") Keep(&facts.torch, ver);
      else if (fw != "nccl" && facts.version.empty() && !ver.empty()) facts.framework = fw, facts.version = ver;
    } else if (e.kind == "gpu_info") {
      const std::string where = e.file + ":" + std::to_string(e.line);
      if (const std::string g = Str(e, "gpu_name"); !g.empty()) gpus.emplace(g, where);
      if (const std::string d = Str(e, "driver_version"); !d.empty()) drivers.emplace(d, where);
      Keep(&facts.cuda, Str(e, "cuda_version"));
      const FieldValue total = e.Get("total_bytes");
      if (total.is_number()) {
        const double t = total.number();
        if (!(t > 0) || !(t <= kMaxGpuMemory)) {
          facts.conflicts.push_back(where + ": GPU memory total " + std::to_string(t / (1u << 20)) +
                                    " MiB is outside what a card has (0 to 16 TiB); ignored");
        } else if (facts.gpu_memory_bytes == 0) {
          facts.gpu_memory_bytes = static_cast<int64_t>(t);
          memory_gpu = Str(e, "gpu_name");
        }
      }
    } else if (e.kind == "gpu_topology") {
      topo_rows.push_back(Str(e, "links"));
    }
  }
  // Facts the dumps disagree on are left unknown (TP across mixed cards, or
  // dumps of two machines): a warning names both, never a merged fiction.
  auto settle = [&](const std::map<std::string, std::string>& seen, const char* what, std::string* slot) {
    if (seen.size() == 1) *slot = seen.begin()->first;
    if (seen.size() < 2) return;
    std::string list;
    for (const auto& [v, at] : seen) list += (list.empty() ? "" : ", ") + v + " (" + at + ")";
    facts.conflicts.push_back(std::string("the environment dumps disagree on the ") + what + ": " + list +
                              "; mixed cards or dumps of different machines? the " + what + " is left unknown");
  };
  settle(gpus, "GPU", &facts.gpu);
  settle(drivers, "driver", &facts.driver);
  if (gpus.size() > 1 || (!memory_gpu.empty() && memory_gpu != facts.gpu)) facts.gpu_memory_bytes = 0;
  new_index[events->size()] = kept;
  events->resize(kept);
  facts.topology = Topology(topo_rows);
  facts.inputs.assign(dump_files.begin(), dump_files.end());
  if (totals != nullptr && facts.events > 0) {
    totals->events -= std::min<uint64_t>(totals->events, facts.events);
    for (auto& d : totals->dropped) d.before = new_index[std::min(d.before, new_index.size() - 1)];
  }
  return facts;
}

void ApplyHostFacts(const HostFacts& facts, RunInfo* run) {
  // A serving framework the dump names beats a log that only showed NCCL,
  // torch or kernel lines; a server the log itself names is kept.
  static const std::set<std::string> kServers = {"sglang", "vllm", "tgi", "trtllm", "lmdeploy"};
  if (!facts.framework.empty() && !kServers.count(run->framework)) {
    run->framework = facts.framework;
    run->version.clear();
  }
  if (run->version.empty() && !facts.version.empty() && run->framework == facts.framework) run->version = facts.version;
  if (run->gpu.empty()) run->gpu = facts.gpu;
  run->driver = facts.driver;
  run->cuda = facts.cuda;
  run->topology = facts.topology;
  run->gpu_memory_bytes = facts.gpu_memory_bytes;
  run->environment = facts.inputs;
}

}  // namespace tpt
