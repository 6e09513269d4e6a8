// box_plan.cc: check plans from a diagnosis and the log's events.
#include "repro/box_plan.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <tuple>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "memory/memory_model.h"
#include "repro/checkability.h"
#include "repro/repro_plan.h"

namespace tpt::repro {
namespace {

using nlohmann::json;

// NCCL's SHM connection (transport/shm.cc shmRecvSetup): ncclRecvMem (4 KiB)
// + the LL (512 KiB), LL128 (4,800 KiB) and SIMPLE (4 MiB) buffers:
// 9,637,888 B, the size NCCL's own "Error while creating shared memory
// segment ... (size 9637888)" prints.
// Channels NCCL opens between two local ranks over SHM (rings) when nothing says: 2.
constexpr int kNcclShmChannels = 2;
// NCCL's buffer sizes by protocol (src/init.cc at v2.30.7: DEFAULT_LL_BUFFSIZE,
// DEFAULT_LL128_BUFFSIZE, DEFAULT_BUFFSIZE 4 MiB; NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE,
// NCCL_BUFFSIZE set them) and the connection's header (sizeof(ncclRecvMem), 4 KiB).
constexpr int64_t kNcclShmHeaderBytes = 4096, kNcclLlBytes = 524288, kNcclLl128Bytes = 4915200,
                  kNcclSimpleBytes = 4194304;
constexpr int64_t kNcclShmSegmentBytes = kNcclShmHeaderBytes + kNcclLlBytes + kNcclLl128Bytes + kNcclSimpleBytes;

std::string Fixed2(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The first whole number after `key` in `text` (digits and commas), or -1.
int64_t NumberAfter(const std::string& text, const std::string& key) {
  size_t p = text.find(key);
  if (p == std::string::npos) return -1;
  p += key.size();
  while (p < text.size() && !std::isdigit(static_cast<unsigned char>(text[p]))) {
    if (p - text.find(key) > key.size() + 3) return -1;  // the number must follow closely
    ++p;
  }
  int64_t v = 0;
  bool any = false;
  for (; p < text.size() && (std::isdigit(static_cast<unsigned char>(text[p])) || text[p] == ','); ++p) {
    if (text[p] == ',') continue;
    v = v * 10 + (text[p] - '0');
    any = true;
    if (v > (int64_t(1) << 50)) return -1;
  }
  return any ? v : -1;
}

// "sm_75", "sm75", "compute_90", "8.6" tokens of `text` -> 75, 75, 90, 86.
std::vector<int> ArchsIn(const std::string& text) {
  std::vector<int> out;
  const std::string t = Lower(text);
  for (const char* key : {"sm_", "sm", "compute_"}) {
    for (size_t p = t.find(key); p != std::string::npos; p = t.find(key, p + 1)) {
      if (p > 0 && std::isalpha(static_cast<unsigned char>(t[p - 1]))) continue;
      size_t q = p + std::string(key).size();
      int v = 0, digits = 0;
      while (q < t.size() && std::isdigit(static_cast<unsigned char>(t[q])) && digits < 3) v = v * 10 + (t[q++] - '0'), ++digits;
      if (digits >= 2 && v >= 30 && v <= 130) out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

struct Events {
  const json& all;
  // Every event of `kind`, in log order.
  std::vector<const json*> Of(const std::string& kind) const {
    std::vector<const json*> out;
    if (!all.is_array()) return out;
    for (const auto& e : all) {
      if (e.is_object() && e.value("kind", "") == kind) out.push_back(&e);
    }
    return out;
  }
  // The first string field `field` of an event of `kind`.
  std::string Field(const std::string& kind, const std::string& field) const {
    for (const json* e : Of(kind)) {
      const json f = e->value("fields", json::object());
      if (f.contains(field) && f[field].is_string()) return f[field].get<std::string>();
      if (f.contains(field) && f[field].is_number()) {
        std::ostringstream o;
        o << f[field].get<double>();
        return o.str();
      }
    }
    return "";
  }
  double Number(const std::string& kind, const std::string& field) const {
    for (const json* e : Of(kind)) {
      const json f = e->value("fields", json::object());
      if (f.contains(field) && f[field].is_number()) return f[field].get<double>();
    }
    return 0;
  }
};

bool EnvOfInterest(const std::string& name) {
  for (const char* p : {"NCCL_", "CUDA_", "TORCH_NCCL_", "MASTER_", "GLOO_SOCKET_IFNAME", "NVIDIA_VISIBLE_DEVICES",
                        "LOCAL_RANK", "WORLD_SIZE"}) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

void Add(BoxPlan* p, const std::string& name, const std::string& value, const std::string& source) {
  p->figures.push_back({name, value, source});
}

// The texts of the primary diagnosis' evidence, joined.
std::string EvidenceText(const json& diag) {
  std::string out;
  if (diag.contains("evidence") && diag["evidence"].is_array()) {
    for (const auto& e : diag["evidence"]) out += e.value("text", "") + "\n";
  }
  return out;
}

// An NCCL_* size from the log's environment (a byte count), or `dflt`.
int64_t EnvBytes(const BoxPlan& p, const char* name, int64_t dflt) {
  auto it = p.env.find(name);
  if (it == p.env.end()) return dflt;
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  return end != it->second.c_str() && *end == '\0' && v > 0 ? v : dflt;
}

// The SHM connections a rank opens, from the log when it says: NCCL prints one
// "Channel NN : a[x] -> b[y] via SHM/..." line for each channel and peer it connects
// over SHM (transport/shm.cc shmSendSetup), and each connection's buffers are one
// segment (shmRecvSetup: on the receiving side by default). Distinct (channel, from,
// to) over the ranks that printed them, per rank. Else NCCL_MIN_NCHANNELS (init.cc:
// NCCL opens at least that many channels; NCCL_MAX_NCHANNELS caps it), a ring's one
// connection a channel; else 2 channels, assumed.
void ShmConnections(const Events& ev, BoxPlan* p) {
  std::string* how = &p->shm_count_how;
  std::string* source = &p->shm_count_source;
  std::set<std::tuple<int, int, int>> conns;
  std::set<int> ranks, channels;
  for (const json* e : ev.Of("nccl_transport")) {
    const json f = e->value("fields", json::object());
    if (f.value("transport", "").rfind("SHM", 0) != 0 || !f.contains("channel")) continue;
    const int ch = f.value("channel", -1), src = f.value("src_rank", -1), dst = f.value("dst_rank", -1);
    conns.insert({ch, src, dst});
    ranks.insert(src);
    channels.insert(ch);
  }
  if (!conns.empty()) {
    p->shm_segments_per_rank = double(conns.size()) / double(ranks.size());
    p->shm_channels_assumed = false;
    *how = std::to_string(conns.size()) + " 'via SHM' connections of " + std::to_string(ranks.size()) + " rank(s) over " +
           std::to_string(channels.size()) + " channel(s)";
    *source = std::string(kFromLog) + ": NCCL INFO 'Channel NN : a -> b via SHM' lines (transport/shm.cc)";
    return;
  }
  const int64_t min_ch = EnvBytes(*p, "NCCL_MIN_NCHANNELS", 0), max_ch = EnvBytes(*p, "NCCL_MAX_NCHANNELS", 0);
  if (min_ch > 0) {
    const int64_t n = max_ch > 0 ? std::min(min_ch, max_ch) : min_ch;
    p->shm_segments_per_rank = double(n);
    p->shm_channels_assumed = false;
    *how = std::to_string(n) + " channels (NCCL_MIN_NCHANNELS" + (max_ch > 0 ? ", NCCL_MAX_NCHANNELS" : "") + ")";
    *source = std::string(kFromLog) + ": environment; NCCL opens at least NCCL_MIN_NCHANNELS channels (init.cc)";
    return;
  }
  p->shm_segments_per_rank = kNcclShmChannels;
  if (max_ch > 0) p->shm_segments_per_rank = std::min<double>(kNcclShmChannels, double(max_ch));
  *how = std::to_string(int(p->shm_segments_per_rank)) + " channels";
  *source = std::string(kFromAssumed) + ": NCCL's ring of 2 SHM channels a rank (no 'via SHM' line in the log)";
}

// Segments and bytes for the local ranks (up to 8), the figures and the question.
void ShmNeeded(BoxPlan* p) {
  const std::string& how = p->shm_count_how;
  const std::string& source = p->shm_count_source;
  const int local = std::min(p->world, 8);
  p->shm_segments = std::max(1, static_cast<int>(std::ceil(p->shm_segments_per_rank * local)));
  const int64_t needed = p->shm_segment_bytes * p->shm_segments;
  const std::string seg = std::to_string(p->shm_segments) + " (" + std::to_string(local) + " local ranks x " +
                          (p->shm_channels_assumed ? how : how + ", " + Fixed2(p->shm_segments_per_rank) + " a rank") + ")";
  bool have = false;
  for (auto& f : p->figures) {
    if (f.name == "segments") {
      f = {"segments", seg, source};
      have = true;
    }
    if (f.name == "/dev/shm needed") f.value = FormatBytes(needed);
  }
  if (!have) {
    Add(p, "segments", seg, source);
    Add(p, "/dev/shm needed", FormatBytes(needed), "computed");
  }
  p->asked.erase(std::remove_if(p->asked.begin(), p->asked.end(), [](const std::string& a) { return a.rfind("--shm-needed ", 0) == 0; }),
                 p->asked.end());
  if (p->shm_channels_assumed) {
    p->asked.push_back("--shm-needed " + FormatBytes(needed) + " (assumed: " + how +
                       " a rank; NCCL_DEBUG=INFO's 'via SHM' lines give the real count)");
  }
  p->fix_env["TPT_SHM_BYTES"] = std::to_string(std::max<int64_t>(int64_t(1) << 30, 2 * needed));
}

void PlanShm(const Events& ev, const std::string& evidence, BoxPlan* p) {
  std::string msg = ev.Field("shm_error", "message");
  const std::string all = msg + "\n" + evidence;
  int64_t size = NumberAfter(all, "(size ");
  if (size <= 0) {
    // "failed to extend /dev/shm/nccl-XXXX to 9637892 bytes" (the segment and NCCL's 4-byte trailer)
    const size_t ext = all.find("extend /dev/shm/");
    const size_t to = ext == std::string::npos ? ext : all.find(" to ", ext);
    if (to != std::string::npos) size = NumberAfter(all.substr(to), " to ");
  }
  if (size > 0) {
    p->shm_segment_bytes = size;
    Add(p, "SHM segment", FormatBytes(size) + " (" + std::to_string(size) + " B)", std::string(kFromLog) + ": NCCL's shmutils line");
  } else {
    const int64_t ll = EnvBytes(*p, "NCCL_LL_BUFFSIZE", kNcclLlBytes), ll128 = EnvBytes(*p, "NCCL_LL128_BUFFSIZE", kNcclLl128Bytes),
                  simple = EnvBytes(*p, "NCCL_BUFFSIZE", kNcclSimpleBytes);
    p->shm_segment_bytes = kNcclShmHeaderBytes + ll + ll128 + simple;
    const bool env = p->shm_segment_bytes != kNcclShmSegmentBytes;
    Add(p, "SHM segment", FormatBytes(p->shm_segment_bytes),
        env ? std::string(kFromLog) + ": environment; 4 KiB header + LL " + FormatBytes(ll) + " + LL128 " + FormatBytes(ll128) +
                  " + SIMPLE " + FormatBytes(simple) + " (NCCL_*BUFFSIZE)"
            : std::string(kFromDefault) + ": NCCL's SHM connection, 4 KiB header + LL 512 KiB + LL128 4800 KiB + SIMPLE 4 MiB");
  }
  ShmConnections(ev, p);
  ShmNeeded(p);
  p->steps = {kCheckShm};
  p->fix = "a /dev/shm that holds it: docker run --shm-size 1g (or --ipc=host); Kubernetes: an emptyDir "
           "{medium: Memory} mounted at /dev/shm";
}

void PlanNetwork(const Events& ev, BoxPlan* p) {
  for (const json* e : ev.Of("nccl_net")) {
    const json f = e->value("fields", json::object());
    if (f.contains("interface") && f["interface"].is_string()) {
      Add(p, "interface NCCL used", f["interface"].get<std::string>() +
                                        (f.contains("address") && f["address"].is_string() ? " " + f["address"].get<std::string>() : ""),
          std::string(kFromLog) + ": line " + std::to_string(e->value("line", 0)));
      break;
    }
  }
  for (const char* k : {"NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_NET", "NCCL_SOCKET_FAMILY", "NCCL_IB_DISABLE",
                        "GLOO_SOCKET_IFNAME", "NCCL_NET_PLUGIN"}) {
    if (!p->env.count(k)) Add(p, k, "unset", std::string(kFromLog) + ": not shown (NCCL's default applies)");
  }
  p->steps = {kCheckInterfaces};
  if (p->env.count("NCCL_IB_HCA") || p->env.count("NCCL_NET")) p->steps.push_back(kCheckIbHcas);
  p->steps.push_back(kCheckBootstrap);
  p->fix = "NCCL_SOCKET_IFNAME set to an interface of this box with a routable address (chosen at run time)";
  p->fix_env["NCCL_SOCKET_IFNAME"] = "@routable";
}

void PlanDuplicate(const Events& ev, BoxPlan* p) {
  const std::string bus = ev.Field("duplicate_gpu", "bus_id");
  if (!bus.empty()) {
    p->bus_id = bus;
    Add(p, "device both ranks used", "bus id " + bus, kFromLog);
  }
  Add(p, "CUDA_VISIBLE_DEVICES", p->env.count("CUDA_VISIBLE_DEVICES") ? p->env["CUDA_VISIBLE_DEVICES"] : "unset",
      p->env.count("CUDA_VISIBLE_DEVICES") ? kFromLog : "log: not shown (every rank sees every GPU, device = local rank)");
  p->steps = {kCheckDuplicateGpu};
  p->fix = "one GPU a rank: device = LOCAL_RANK within CUDA_VISIBLE_DEVICES (needs " + std::to_string(p->world) +
           " GPUs)";
}

void PlanP2p(const Events& ev, const json& run, BoxPlan* p) {
  const std::string msg = ev.Field("p2p_error", "message") + ev.Field("custom_ar_error", "message");
  if (!msg.empty()) Add(p, "the log's P2P/IPC error", msg.substr(0, 160), kFromLog);
  if (!run.value("topology", "").empty()) Add(p, "topology", run.value("topology", ""), kFromEnvDump);
  p->steps = {kCheckPeerMatrix, kCheckIpc, kCheckPeerCopy, kCheckCustomAr};
  p->fix = "custom all-reduce off (SGLang --disable-custom-all-reduce, vLLM --disable-custom-all-reduce); "
           "NCCL_P2P_DISABLE=1 when the peer copy itself is wrong";
  p->fix_env["NCCL_P2P_DISABLE"] = "1";
}

std::string CollectiveName(std::string op) {
  op = Lower(op);
  op.erase(std::remove(op.begin(), op.end(), '_'), op.end());
  if (op.find("allgather") != std::string::npos) return "all_gather";
  if (op.find("reducescatter") != std::string::npos) return "reduce_scatter";
  if (op.find("broadcast") != std::string::npos) return "broadcast";
  if (op.find("alltoall") != std::string::npos) return "all_to_all";
  return "all_reduce";
}

void PlanCollective(const Events& ev, BoxPlan* p) {
  const std::string op = ev.Field("watchdog_timeout", "op_type");
  const double numel = ev.Number("watchdog_timeout", "numel");
  const double timeout = ev.Number("watchdog_timeout", "timeout_s");
  p->collective = CollectiveName(op);
  Add(p, "collective", p->collective, op.empty() ? std::string(kFromAssumed) + ": the log names none (tensor parallelism's all-reduce)"
                                                 : std::string(kFromLog) + ": watchdog OpType=" + op);
  if (numel > 0) {
    p->collective_bytes = static_cast<int64_t>(numel) * 2;
    Add(p, "size", FormatBytes(p->collective_bytes) + " (" + std::to_string(int64_t(numel)) + " elements x 2 B)",
        std::string(kFromLog) + ": NumelIn; bf16 assumed");
  } else {
    p->collective_bytes = 64 * kMiB;
    Add(p, "size", FormatBytes(p->collective_bytes), std::string(kFromAssumed) + ": nccl-tests' usual message");
    p->asked.push_back("--collective-bytes 64MiB (assumed: the log prints no NumelIn)");
  }
  if (timeout > 0) Add(p, "the log's timeout", std::to_string(int(timeout)) + " s", kFromLog);
  p->steps = {kCheckBootstrap, kCheckCollective};
  p->fix = "none to run: a healthy collective here points at the workload (a rank that stopped or called another "
           "collective); a hang points at the transport";
}

// The newest CUDA a driver branch supports (CUDA toolkit release notes,
// table 3, "minimum required driver version" per toolkit): 384.81 -> 9.0.
int DriverBranchCuda(double driver) {
  static constexpr struct { double branch; int cuda; } kTable[] = {
      {580, 13000}, {575, 12090}, {570, 12080}, {560, 12060}, {555, 12050}, {550, 12040}, {545, 12030},
      {535, 12020}, {530, 12010}, {525, 12000}, {520, 11080}, {515, 11070}, {510, 11060}, {495, 11050},
      {470, 11040}, {465, 11030}, {460, 11020}, {455, 11010}, {450, 11000}, {440, 10020}, {418, 10010},
      {410, 10000}, {396, 9020},  {390, 9010},  {384, 9000}};
  for (const auto& row : kTable) {
    if (driver >= row.branch) return row.cuda;
  }
  return 0;
}

void PlanDriver(const Events& ev, const json& run, const std::string& evidence, BoxPlan* p) {
  std::string msg = ev.Field("driver_mismatch", "message") + "\n" + evidence;
  for (const json* e : ev.Of("gpu_info")) msg += "\n" + e->value("text", "");
  if (const std::string dv = ev.Field("gpu_info", "driver_version"); !dv.empty()) msg += "\nDriver Version: " + dv + " ";
  // "found version 11060" (torch), NCCL "cudaDriverVersion 12020".
  int64_t found = NumberAfter(msg, "found version ");
  if (found <= 0) found = static_cast<int64_t>(ev.Number("gpu_info", "cuda_driver_version"));
  if (found > 1000) {
    p->log_driver_cuda = static_cast<int>(found);
    Add(p, "driver's CUDA", FormatCudaVersion(p->log_driver_cuda), kFromLog);
  } else if (const size_t dv = msg.find("Driver Version: "); dv != std::string::npos &&
             DriverBranchCuda(std::atof(msg.c_str() + dv + 16)) > 0) {
    p->log_driver_cuda = DriverBranchCuda(std::atof(msg.c_str() + dv + 16));
    Add(p, "driver's CUDA", FormatCudaVersion(p->log_driver_cuda) + " (driver " + msg.substr(dv + 16, msg.find(' ', dv + 16) - dv - 16) + ")",
        std::string(kFromLog) + ": nvidia-smi's driver, its branch's newest CUDA");
  } else if (!run.value("driver", "").empty() && DriverBranchCuda(std::atof(run.value("driver", "").c_str())) > 0) {
    p->log_driver_cuda = DriverBranchCuda(std::atof(run.value("driver", "").c_str()));
    Add(p, "driver's CUDA", FormatCudaVersion(p->log_driver_cuda) + " (driver " + run.value("driver", "") + ")", kFromEnvDump);
  } else if (!run.value("cuda", "").empty()) {
    p->log_driver_cuda = ParseCudaVersion(run.value("cuda", ""));
    Add(p, "driver's CUDA", run.value("cuda", ""), kFromEnvDump);
  }
  // What the runtime or wheel needs: "+cu121", "cu128", "CUDA 12.8", "cuda>=12.4".
  std::string l = Lower(msg);
  for (const json* e : ev.Of("framework_version")) l += " " + Lower(e->value("text", ""));
  int need = 0;
  for (size_t pos = l.find("cu1"); pos != std::string::npos && need == 0; pos = l.find("cu1", pos + 1)) {
    need = ParseCudaVersion(l.substr(pos, 5));
  }
  for (const char* key : {"cuda runtime version ", "requires cuda ", "cuda>=", "cuda "}) {
    if (need) break;
    size_t pos = l.find(key);
    if (pos != std::string::npos) need = ParseCudaVersion(l.substr(pos + std::string(key).size(), 5));
  }
  if (need) {
    p->required_cuda = need;
    Add(p, "CUDA the runtime/wheel needs", FormatCudaVersion(need), kFromLog);
  } else {
    p->asked.push_back("--required-cuda 12.8 (assumed: the log names neither the runtime's nor the wheel's CUDA)");
    p->required_cuda = 12080;
    Add(p, "CUDA the runtime/wheel needs", "12.8", std::string(kFromAssumed) + ": current wheels of SGLang and vLLM (cu128)");
  }
  p->steps = {kCheckDriver};
  p->fix = "a driver whose CUDA is at least the runtime's, or a wheel built for the driver's CUDA "
           "(pip install torch --index-url https://download.pytorch.org/whl/cuXYZ)";
}

void PlanArch(const Events& ev, const json& run, const std::string& evidence, BoxPlan* p) {
  std::string supported = ev.Field("unsupported_arch", "supported");
  if (!supported.empty()) {
    p->built_archs = ArchsIn(supported);
    Add(p, "built for", supported, kFromLog);
  }
  const double major = ev.Number("unsupported_arch", "cc_major"), minor = ev.Number("unsupported_arch", "cc_minor");
  int sm = major > 0 ? int(major * 10 + minor) : 0;
  if (sm == 0) {
    auto a = ArchsIn(ev.Field("unsupported_arch", "sm") + " " + ev.Field("no_kernel_image", "sm"));
    if (!a.empty()) sm = a.front();
  }
  if (sm > 0) {
    Add(p, "the log's GPU", "sm_" + std::to_string(sm), kFromLog);
  } else if (!p->gpu.empty()) {
    auto g = memory::FindGpu(p->gpu);
    if (g.ok() && g->sm > 0) {
      sm = g->sm;
      Add(p, "the log's GPU", g->name + ", sm_" + std::to_string(sm), std::string(kFromCatalog) + ": '" + p->gpu + "' named in the log");
    }
  }
  p->log_gpu_sm = sm;
  if (p->built_archs.empty()) {
    p->built_archs = ArchsIn(evidence);
    p->built_archs.erase(std::remove(p->built_archs.begin(), p->built_archs.end(), sm), p->built_archs.end());
    if (!p->built_archs.empty()) Add(p, "built for", "sm_" + std::to_string(p->built_archs.front()) + "...", std::string(kFromLog) + ": the evidence lines");
  }
  if (p->built_archs.empty()) {
    p->asked.push_back("--built-archs 80,90 (assumed unknown: the log does not list the architectures built for)");
  }
  (void)run;
  p->steps = {kCheckArch};
  p->fix = "a wheel or build that includes the GPU's architecture (TORCH_CUDA_ARCH_LIST, the project's sm_XX "
           "wheel), or a backend that supports it";
}

void PlanHardware(const Events& ev, BoxPlan* p) {
  const std::string bus = ev.Field("xid", "bus_id");
  const std::string xid = ev.Field("xid", "xid");
  if (!bus.empty()) {
    p->bus_id = bus;
    Add(p, "GPU", "PCI " + bus, std::string(kFromLog) + ": the Xid line");
  } else {
    Add(p, "GPU", "every GPU of this box", std::string(kFromAssumed) + ": the log names no bus id");
  }
  if (!xid.empty()) Add(p, "Xid", xid, kFromLog);
  p->steps = {kCheckNvml};
  p->fix = "none on the box: drain the node, `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER`, reset or RMA";
}

// NCCL's NVLS transport (transport/nvls.cc) needs multicast objects the fabric
// manager grants: a GPU the fabric has not registered, or one left behind by
// a fabric manager restarted under running processes (NVIDIA/nccl#976,
// #1338), fails there with 'invalid argument'. repro reads the registration
// (NVML, read only) and never turns NVLS on; the fix run is NCCL without it.
void PlanNvls(BoxPlan* p) {
  Add(p, "transport", "NVLS (NVLink SHARP multicast)", std::string(kFromLog) + ": transport/nvls.cc");
  p->collective = "all_reduce";
  p->collective_bytes = 64 * kMiB;
  Add(p, "fix run's collective", "all_reduce of " + FormatBytes(p->collective_bytes),
      std::string(kFromDefault) + ": nccl-tests' usual message (it checks NCCL without NVLS, not a size)");
  p->steps = {kCheckFabric, kCheckCollective};
  p->fix_env = {{"NCCL_NVLS_ENABLE", "0"}};
  p->fix = "NCCL_NVLS_ENABLE=0 (ring/tree instead); to have NVLS back: nvidia-fabricmanager running at the "
           "driver's version, the GPUs reset after it (re)starts, or a reboot";
}

// A write that found no room (ENOSPC) or the user's quota spent (EDQUOT):
// the filesystem of the path the log names, read on this box (statvfs).
void PlanDisk(const Events& ev, BoxPlan* p) {
  p->disk_path = ev.Field("disk_full", "path");
  p->disk_errno = static_cast<int>(ev.Number("disk_full", "errno"));
  if (!p->disk_path.empty()) {
    Add(p, "path", p->disk_path, std::string(kFromLog) + ": the failed write");
  } else {
    const char* home = std::getenv("HOME");
    p->disk_path = std::string(home != nullptr && *home != '\0' ? home : "/root") + "/.cache";
    Add(p, "path", p->disk_path,
        std::string(kFromAssumed) + ": the log names no path; the caches servers write (Hugging Face, vLLM, Triton, "
                                    "Inductor) default to ~/.cache");
    p->asked.push_back("--disk-path PATH (assumed ~/.cache: the log names no path)");
  }
  if (p->disk_errno == 122) Add(p, "error", "EDQUOT (Disk quota exceeded): the user's quota, not the disk", kFromLog);
  if (p->disk_errno == 28) Add(p, "error", "ENOSPC (No space left on device)", kFromLog);
  p->steps = {kCheckDisk};
  p->fix = "free space there, or point the caches at a filesystem with room (HF_HOME, VLLM_CACHE_ROOT, "
           "TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR)";
}

void PlanPort(const Events& ev, const json& run, BoxPlan* p) {
  double port = ev.Number("address_in_use", "port");
  if (port <= 0) {
    const json cfg = run.value("config", json::object());
    if (cfg.contains("port") && cfg["port"].is_number()) port = cfg["port"].get<double>();
  }
  if (port > 0 && port < 65536) {
    p->port = static_cast<int>(port);
    Add(p, "port", std::to_string(p->port), kFromLog);
  } else {
    p->port = 30000;
    Add(p, "port", "30000", std::string(kFromAssumed) + ": SGLang's default --port");
    p->asked.push_back("--port 30000 (assumed: the log names no port)");
  }
  p->steps = {kCheckPort};
  p->fix = "a free port (the server's --port, or MASTER_PORT)";
}

}  // namespace

int ParseCudaVersion(const std::string& t) {
  std::string s = Lower(t);
  if (s.rfind("cu", 0) == 0) s = s.substr(2);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  s = s.substr(0, i);
  if (s.empty()) return 0;
  const size_t dot = s.find('.');
  if (dot != std::string::npos) {
    const int major = std::atoi(s.substr(0, dot).c_str()), minor = std::atoi(s.substr(dot + 1).c_str());
    return major >= 7 && major <= 20 ? major * 1000 + minor * 10 : 0;
  }
  const long v = std::atol(s.c_str());
  if (v >= 7000 && v <= 20000) return static_cast<int>(v);          // 12080
  if (s.size() == 3 && v >= 100) return static_cast<int>(v / 10 * 1000 + v % 10 * 10);  // 128 (cu128)
  return 0;
}

std::string FormatCudaVersion(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::vector<std::string> NcclSelectInterfaces(const std::vector<std::string>& names, const std::string& ifname_env) {
  auto match = [](const std::string& name, const std::string& list) {
    std::string l = list;
    bool exclude = false, exact = false;
    if (!l.empty() && l[0] == '^') exclude = true, l = l.substr(1);
    if (!l.empty() && l[0] == '=') exact = true, l = l.substr(1);
    bool hit = false;
    std::stringstream ss(l);
    std::string item;
    while (std::getline(ss, item, ',')) {
      if (item.empty()) continue;
      if (exact ? name == item : name.rfind(item, 0) == 0) hit = true;
    }
    return exclude ? !hit : hit;
  };
  std::vector<std::string> out;
  auto pick = [&](const std::string& list) {
    for (const auto& n : names) {
      if (match(n, list) && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  };
  if (!ifname_env.empty()) {
    pick(ifname_env);
    return out;
  }
  pick("ib");
  if (out.empty()) pick("^docker,lo,virbr");
  if (out.empty()) pick("docker");
  if (out.empty()) pick("lo");
  return out;
}

StatusOr<BoxPlan> BoxPlanFromAnalysis(const json& a, const json& events, const std::string& name) {
  BoxPlan p;
  p.source = name;
  if (!a.is_object()) return InvalidArgumentError(name + ": expected analyze's JSON");
  const json* diag = nullptr;
  if (a.contains("diagnoses") && a["diagnoses"].is_array() && !a["diagnoses"].empty()) {
    diag = &a["diagnoses"][0];
    for (const auto& d : a["diagnoses"]) {
      if (d.is_object() && !d.value("consequence", false)) {
        diag = &d;
        break;
      }
    }
  }
  p.root_cause = diag ? diag->value("id", "") : a.value("root_cause", "");
  const Checkability* c = CheckabilityOf(p.root_cause);
  if (c == nullptr || c->kind != ReproKind::kBoxCheck) {
    return InvalidArgumentError(name + ": " + p.root_cause + " is not a check repro runs on a box");
  }
  const json run = a.value("run", json::object());
  p.framework = run.value("framework", "");
  p.version = run.value("version", "");
  p.gpu = run.value("gpu", "");
  const bool dumps = run.contains("environment") && run["environment"].is_array() && !run["environment"].empty();
  const int tp = run.value("tp", 0), pp = std::max(1, run.value("pp", 1));
  const Events ev{events};
  int ranks_seen = 0;
  bool world_assumed = false;
  if (a.contains("ranks") && a["ranks"].is_array()) {
    for (const auto& r : a["ranks"]) {
      if (r.value("role", "rank") == "rank") ranks_seen = std::max(ranks_seen, r.value("rank", -1) + 1);
    }
  }
  const int comm_ranks = static_cast<int>(ev.Number("nccl_comm_init", "nranks"));
  const int world_size = static_cast<int>(ev.Number("rank_assignment", "world_size"));
  if (tp > 0) {
    p.world = tp * pp;
    Add(&p, "ranks", std::to_string(p.world) + " (TP " + std::to_string(tp) + " x PP " + std::to_string(pp) + ")", kFromLog);
  } else if (comm_ranks > 0 || world_size > 0) {
    p.world = std::max(comm_ranks, world_size);
    Add(&p, "ranks", std::to_string(p.world), std::string(kFromLog) + ": NCCL's nranks / the world size");
  } else if (ranks_seen > 1) {
    p.world = ranks_seen;
    Add(&p, "ranks", std::to_string(p.world), std::string(kFromLog) + ": ranks that printed");
  } else {
    p.world = 2;
    Add(&p, "ranks", "2", std::string(kFromAssumed) + ": the smallest communicator that shows it");
    world_assumed = true;
  }
  if (!p.gpu.empty()) Add(&p, "GPU", p.gpu, dumps ? std::string(kFromLog) + " / " + kFromEnvDump : std::string(kFromLog));
  if (!p.version.empty()) Add(&p, "server", p.framework + " " + p.version, kFromLog);
  for (const json* e : ev.Of("env_var")) {
    const json f = e->value("fields", json::object());
    const std::string n = f.value("name", "");
    if (EnvOfInterest(n) && f.contains("value") && f["value"].is_string()) p.env[n] = f["value"].get<std::string>();
  }
  for (const auto& [k, v] : p.env) Add(&p, k, v, std::string(kFromLog) + ": environment");
  const std::string evidence = diag ? EvidenceText(*diag) : "";
  if (diag && diag->contains("evidence") && (*diag)["evidence"].is_array() && !(*diag)["evidence"].empty()) {
    p.failure_message = (*diag)["evidence"][0].value("text", "");
  }
  p.log_verdict = a.value("verdict", "");
  const std::string& rc = p.root_cause;
  if (rc == "shm_too_small") {
    PlanShm(ev, evidence, &p);
  } else if (rc == "nccl_network_config") {
    PlanNetwork(ev, &p);
  } else if (rc == "duplicate_gpu") {
    PlanDuplicate(ev, &p);
  } else if (rc == "custom_allreduce_failure" || rc == "p2p_topology_problem") {
    PlanP2p(ev, run, &p);
  } else if (rc == "nccl_timeout_hang" || rc == "collective_desync" || rc == "nccl_error") {
    PlanCollective(ev, &p);
  } else if (rc == "cuda_driver_mismatch") {
    PlanDriver(ev, run, evidence, &p);
  } else if (rc == "unsupported_gpu_arch") {
    PlanArch(ev, run, evidence, &p);
  } else if (rc == "hardware_fault") {
    PlanHardware(ev, &p);
  } else if (rc == "port_in_use") {
    PlanPort(ev, run, &p);
  } else if (rc == "nvls_fabric_manager") {
    PlanNvls(&p);
  } else if (rc == "disk_full") {
    PlanDisk(ev, &p);
  }
  // Only the checks that build a communicator depend on the rank count.
  const bool uses_world = rc == "shm_too_small" || rc == "duplicate_gpu" || rc == "nccl_timeout_hang" ||
                          rc == "collective_desync" || rc == "nccl_error" || rc == "custom_allreduce_failure" ||
                          rc == "p2p_topology_problem" || rc == "nvls_fabric_manager";
  if (world_assumed && uses_world) p.asked.insert(p.asked.begin(), "--tp 2 (assumed: the log names no rank count)");
  return p;
}

void ApplyBoxOverrides(const BoxOverrides& o, BoxPlan* p) {
  auto set = [p](const std::string& name, const std::string& value) {
    for (auto& f : p->figures) {
      if (f.name == name) f = {name, value, kFromFlag};
    }
    p->asked.erase(std::remove_if(p->asked.begin(), p->asked.end(),
                                  [&](const std::string& a) { return a.find(name) != std::string::npos; }),
                   p->asked.end());
  };
  if (o.world) {
    p->world = *o.world;
    set("ranks", std::to_string(*o.world));
    p->asked.erase(std::remove_if(p->asked.begin(), p->asked.end(), [](const std::string& a) { return a.rfind("--tp", 0) == 0; }),
                   p->asked.end());
    if (p->root_cause == "shm_too_small" && p->shm_segment_bytes > 0) {
      // The segments follow the ranks; the question about the channels states the new total.
      ShmNeeded(p);
    }
  }
  if (o.shm_needed_bytes && p->shm_segment_bytes > 0) {
    p->shm_segments = static_cast<int>((*o.shm_needed_bytes + p->shm_segment_bytes - 1) / p->shm_segment_bytes);
    set("/dev/shm needed", FormatBytes(*o.shm_needed_bytes));
    p->asked.erase(std::remove_if(p->asked.begin(), p->asked.end(), [](const std::string& a) { return a.rfind("--shm-needed", 0) == 0; }),
                   p->asked.end());
  }
  if (o.port) {
    p->port = *o.port;
    set("port", std::to_string(*o.port));
  }
  if (o.disk_path) {
    p->disk_path = *o.disk_path;
    set("path", *o.disk_path);
    p->asked.erase(std::remove_if(p->asked.begin(), p->asked.end(), [](const std::string& a) { return a.rfind("--disk-path", 0) == 0; }),
                   p->asked.end());
  }
  if (o.bus_id) {
    p->bus_id = *o.bus_id;
    set("GPU", "PCI " + *o.bus_id);
  }
  if (o.required_cuda) {
    p->required_cuda = *o.required_cuda;
    set("CUDA the runtime/wheel needs", FormatCudaVersion(*o.required_cuda));
    set("--required-cuda", "");
  }
  if (o.built_archs) {
    p->built_archs = *o.built_archs;
    std::string list;
    for (int a : *o.built_archs) list += (list.empty() ? "sm_" : " sm_") + std::to_string(a);
    set("built for", list);
    set("--built-archs", "");
    if (std::none_of(p->figures.begin(), p->figures.end(), [](const PlanFigure& f) { return f.name == "built for"; })) {
      p->figures.push_back({"built for", list, kFromFlag});
    }
  }
}

json BoxPlanToJson(const BoxPlan& p) {
  json figs = json::array();
  for (const auto& f : p.figures) figs.push_back({{"name", f.name}, {"value", f.value}, {"source", f.source}});
  return {{"kind", "box_check"},
          {"root_cause", p.root_cause},
          {"framework", p.framework},
          {"version", p.version},
          {"gpu", p.gpu},
          {"world", p.world},
          {"env", p.env},
          {"figures", figs},
          {"steps", p.steps},
          {"asked", p.asked},
          {"failure_message", p.failure_message},
          {"log_verdict", p.log_verdict},
          {"fix", p.fix},
          {"fix_env", p.fix_env},
          {"shm_segment_bytes", p.shm_segment_bytes},
          {"shm_segments", p.shm_segments},
          {"built_archs", p.built_archs},
          {"log_gpu_sm", p.log_gpu_sm},
          {"required_cuda", p.required_cuda},
          {"log_driver_cuda", p.log_driver_cuda},
          {"bus_id", p.bus_id},
          {"port", p.port},
          {"collective", p.collective},
          {"collective_bytes", p.collective_bytes}};
}

std::string DescribeBoxPlan(const BoxPlan& p) {
  std::ostringstream o;
  const Checkability* c = CheckabilityOf(p.root_cause);
  o << "plan (" << p.source << ")\n";
  o << "  check         " << p.root_cause << ": " << (c ? std::string(c->how) : "") << "\n";
  o << "  figures (where each came from):\n";
  for (const auto& f : p.figures) o << "    " << f.name << " = " << f.value << "  [" << f.source << "]\n";
  o << "  the log says  " << (p.failure_message.empty() ? "(no line quoted)" : p.failure_message.substr(0, 200)) << "\n";
  o << "\nsteps:\n";
  int i = 1;
  for (const auto& s : p.steps) o << "  " << i++ << ". " << s << "\n";
  o << "  then the verdict: REPRODUCED / NOT REPRODUCED / INCONCLUSIVE (what is missing)\n";
  if (!p.fix.empty()) o << "fix to check: " << p.fix << "\n";
  if (!p.asked.empty()) {
    o << "\nfigures the log lacks (assumed; pass the flag to set them):\n";
    for (const auto& a : p.asked) o << "  " << a << "\n";
  }
  return o.str();
}

}  // namespace tpt::repro
