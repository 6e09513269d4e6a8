// environment.cc: see environment.h.
#include "rules/environment.h"

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

}  // namespace

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
      Keep(&facts.gpu, Str(e, "gpu_name"));
      Keep(&facts.driver, Str(e, "driver_version"));
      Keep(&facts.cuda, Str(e, "cuda_version"));
      const FieldValue total = e.Get("total_bytes");
      if (facts.gpu_memory_bytes == 0 && total.is_number()) facts.gpu_memory_bytes = static_cast<int64_t>(total.number());
    } else if (e.kind == "gpu_topology") {
      topo_rows.push_back(Str(e, "links"));
    }
  }
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
