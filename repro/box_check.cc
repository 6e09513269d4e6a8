// box_check.cc: the steps of a box check, their verdict and rendering.
#include "repro/box_check.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "repro/checkability.h"

namespace tpt::repro {
namespace {

double Now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// What one step found: the log's failure shows here (`shows`), or the step
// could not run (`missing`: what this box lacks), or neither.
struct Outcome {
  bool shows = false;
  std::string missing;
  std::string note;
};

bool Virtual(const std::string& n) {
  for (const char* p : {"lo", "docker", "virbr", "veth", "br-", "cni", "flannel", "cali"}) {
    if (n.rfind(p, 0) == 0) return true;
  }
  return false;
}

// An interface of this box another host could reach: up, with an address, not virtual.
std::string RoutableInterface(const std::vector<NetInterface>& ifs) {
  for (const auto& i : ifs) {
    if (i.up && !i.loopback && !i.address.empty() && !Virtual(i.name) && i.address.rfind("fe80", 0) != 0) return i.name;
  }
  return "";
}

std::string Join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string NormBus(std::string b) {
  for (char& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // "00000000:3B:00.0", "0000:3b:00.0", "PCI:0000:3b:00", "3b:00.0" -> "3b:00"
  if (b.rfind("pci:", 0) == 0) b = b.substr(4);
  const size_t dot = b.rfind('.');
  if (dot != std::string::npos && dot + 2 >= b.size()) b = b.substr(0, dot);
  const size_t colon = b.find(':');
  if (colon != std::string::npos && b.find(':', colon + 1) != std::string::npos) b = b.substr(colon + 1);
  while (b.size() > 5 && b[0] == '0') b = b.substr(1);
  return b;
}

class Checker {
 public:
  Checker(const BoxPlan& p, BoxProbe& probe, const BoxOptions& opt, bool fix)
      : p_(p), probe_(probe), opt_(opt), fix_(fix) {
    env_ = p.env;
    if (fix) {
      for (const auto& [k, v] : p.fix_env) env_[k] = v;
    }
    if (env_.count("NCCL_SOCKET_IFNAME") && env_["NCCL_SOCKET_IFNAME"] == "@routable") {
      env_["NCCL_SOCKET_IFNAME"] = RoutableInterface(probe_.Interfaces());
    }
    env_["NCCL_NVLS_ENABLE"] = "0";
  }

  Outcome Run(const std::string& step) {
    // With custom all-reduce off and NCCL_P2P_DISABLE=1 nothing maps a peer's memory.
    if (fix_ && (step == kCheckPeerMatrix || step == kCheckIpc || step == kCheckPeerCopy)) {
      return {false, "", "not used with the fix (custom all-reduce off, NCCL_P2P_DISABLE=1)"};
    }
    if (step == kCheckInterfaces) return Interfaces();
    if (step == kCheckIbHcas) return IbHcas();
    if (step == kCheckBootstrap) return Bootstrap();
    if (step == kCheckShm) return Shm();
    if (step == kCheckDuplicateGpu) return Duplicate();
    if (step == kCheckPeerMatrix) return PeerMatrix();
    if (step == kCheckIpc) return Ipc();
    if (step == kCheckPeerCopy) return PeerCopy();
    if (step == kCheckCustomAr) return CustomAr();
    if (step == kCheckCollective) return Collective();
    if (step == kCheckDriver) return Driver();
    if (step == kCheckArch) return Arch();
    if (step == kCheckNvml) return Nvml();
    if (step == kCheckPort) return Port();
    if (step == kCheckFabric) return Fabric();
    if (step == kCheckDisk) return Disk();
    return {false, "a step this tptriage does not know: " + step, ""};
  }

 private:
  int GpuCount() {
    auto g = probe_.Gpus();
    return g.ok() ? static_cast<int>(g->size()) : 0;
  }

  Outcome Interfaces() {
    Outcome o;
    std::vector<std::string> names, shown;
    for (const auto& i : probe_.Interfaces()) {
      shown.push_back(i.name + (i.address.empty() ? "" : " " + i.address) + (i.up ? "" : " (down)"));
      if (i.up && !i.address.empty() && std::find(names.begin(), names.end(), i.name) == names.end()) names.push_back(i.name);
    }
    const std::string ifname = env_.count("NCCL_SOCKET_IFNAME") ? env_["NCCL_SOCKET_IFNAME"] : "";
    const auto chosen = NcclSelectInterfaces(names, ifname);
    o.note = "this box: " + Join(shown) + "; NCCL_SOCKET_IFNAME=" + (ifname.empty() ? "(unset)" : ifname) +
             " selects " + (chosen.empty() ? "nothing" : Join(chosen));
    if (chosen.empty()) {
      o.shows = true;
      o.note += ": NCCL's 'Bootstrap : no socket interface found'";
    } else if (Virtual(chosen.front()) && p_.world > 1) {
      o.shows = true;
      o.note += ": NCCL bootstraps over " + chosen.front() + ", an address other hosts cannot reach";
    }
    const std::string good = RoutableInterface(probe_.Interfaces());
    o.note += good.empty() ? "; no routable interface on this box" : "; routable here: " + good;
    return o;
  }

  Outcome IbHcas() {
    Outcome o;
    const auto devs = probe_.IbDevices();
    const std::string hca = env_.count("NCCL_IB_HCA") ? env_["NCCL_IB_HCA"] : "";
    o.note = "this box's HCAs: " + (devs.empty() ? std::string("none") : Join(devs)) + "; NCCL_IB_HCA=" +
             (hca.empty() ? "(unset)" : hca);
    if (!hca.empty() && hca[0] != '^') {
      std::string list = hca[0] == '=' ? hca.substr(1) : hca;
      std::stringstream ss(list);
      std::string item;
      while (std::getline(ss, item, ',')) {
        item = item.substr(0, item.find(':'));
        bool found = false;
        for (const auto& d : devs) found = found || d.rfind(item, 0) == 0;
        if (!item.empty() && !found) {
          o.shows = true;
          o.note += ": " + item + " is not on this box";
        }
      }
    }
    return o;
  }

  Outcome Bootstrap() {
    Outcome o;
    std::string shown;
    for (const auto& [k, v] : env_) {
      if (k.rfind("NCCL_", 0) == 0) shown += (shown.empty() ? "" : " ") + k + "=" + v;
    }
    Status s = probe_.NcclBootstrap(env_, opt_.deadline_s);
    o.note = "communicator of 1 rank with " + shown;
    if (s.code() == StatusCode::kUnavailable) {
      o.missing = s.message();
    } else if (!s.ok()) {
      o.shows = true;
      o.note += ": " + s.message();
    } else {
      o.note += ": bootstrap and init passed";
    }
    return o;
  }

  Outcome Shm() {
    Outcome o;
    const int64_t needed = p_.shm_segment_bytes * p_.shm_segments;
    auto free = probe_.ShmFreeBytes();
    if (!free.ok()) return {false, free.status().message(), ""};
    if (fix_) {
      int64_t size = 0;
      if (p_.fix_env.count("TPT_SHM_BYTES")) size = std::atoll(p_.fix_env.at("TPT_SHM_BYTES").c_str());
      o.note = "with a /dev/shm of " + FormatBytes(size) + ": needed " + FormatBytes(needed) +
               " (by arithmetic: a container's /dev/shm is set when it starts; run repro inside the fixed one to "
               "measure it)";
      o.shows = size < needed;
      return o;
    }
    o.note = "needed " + FormatBytes(needed) + " (" + std::to_string(p_.shm_segments) + " x " +
             FormatBytes(p_.shm_segment_bytes) + "), /dev/shm free " + FormatBytes(*free);
    Status s = probe_.CreateShmSegments(p_.shm_segments, p_.shm_segment_bytes);
    if (s.code() == StatusCode::kUnavailable) return {false, s.message(), o.note};
    if (!s.ok()) {
      o.shows = true;
      o.note += ": " + s.message();
    } else {
      o.note += ": all segments created and removed";
    }
    return o;
  }

  Outcome Duplicate() {
    Outcome o;
    const int gpus = GpuCount();
    if (fix_) {
      if (gpus < 2) return {false, "the fix (one GPU a rank) needs 2 GPUs; this box has " + std::to_string(gpus), ""};
      auto r = probe_.Collective("all_reduce", 8 * kMiB, 2, env_, opt_.deadline_s);
      if (!r.ok()) {
        if (r.status().code() == StatusCode::kUnavailable) return {false, r.status().message(), ""};
        return {true, "", "2 ranks on GPUs 0 and 1: " + r.status().message()};
      }
      o.note = "2 ranks on GPUs 0 and 1: communicator and all-reduce passed";
      o.shows = !r->completed;
      return o;
    }
    if (gpus < 1) return {false, "no GPU on this box", ""};
    Status s = probe_.TwoRanksOneGpu(0, opt_.deadline_s);
    o.note = "2 processes, one communicator, both on GPU 0 (as the log's mapping put ranks" +
             (p_.bus_id.empty() ? std::string("") : " on bus id " + p_.bus_id) + ")";
    if (s.code() == StatusCode::kUnavailable) return {false, s.message(), o.note};
    if (!s.ok()) {
      o.shows = true;
      o.note += ": NCCL refused: " + s.message();
    } else {
      o.note += ": NCCL accepted it (this NCCL does not refuse duplicate GPUs)";
    }
    return o;
  }

  Outcome PeerMatrix() {
    Outcome o;
    auto m = probe_.PeerMatrix();
    if (!m.ok()) return {false, m.status().message(), ""};
    if (m->size() < 2) return {false, "peer access needs 2 GPUs; this box has " + std::to_string(m->size()), ""};
    std::string no;
    for (size_t i = 0; i < m->size(); ++i) {
      for (size_t j = 0; j < m->size(); ++j) {
        if (i != j && !(*m)[i][j]) no += (no.empty() ? "" : ", ") + std::to_string(i) + "->" + std::to_string(j);
      }
    }
    o.note = no.empty() ? "every pair reports peer access" : "no peer access: " + no;
    o.shows = !no.empty() && !fix_;  // custom all-reduce needs P2P between every pair
    return o;
  }

  Outcome Ipc() {
    Status s = probe_.IpcBetweenProcesses(opt_.deadline_s);
    if (s.code() == StatusCode::kUnavailable) return {false, s.message(), ""};
    if (!s.ok()) return {true, "", "CUDA IPC between two processes: " + s.message()};
    return {false, "", "a buffer exported by one process, opened, checked and written by another, checked back: right"};
  }

  Outcome PeerCopy() {
    auto r = probe_.PeerCopy(opt_.deadline_s);
    if (!r.ok()) return {false, r.status().message(), ""};
    if (!r->empty()) return {true, "", "peer copies: " + *r};
    return {false, "", "a copy with a data check on every GPU pair: right"};
  }

  Outcome CustomAr() {
    int n = std::min(std::max(p_.world, 2), 8);
    if (n % 2) ++n;
    if (fix_) {
      const int gpus = GpuCount();
      const int ranks = std::min(p_.world, gpus);
      if (ranks < 2) {
        return {false, "", "custom all-reduce off: the servers use NCCL; with " + std::to_string(gpus) +
                                " GPU(s) NCCL's all-reduce across GPUs is not run here"};
      }
      auto r = probe_.Collective("all_reduce", 8 * kMiB, ranks, env_, opt_.deadline_s);
      if (!r.ok()) return {r.status().code() != StatusCode::kUnavailable, r.status().code() == StatusCode::kUnavailable ? r.status().message() : "",
                           "NCCL all-reduce with " + Join({"NCCL_P2P_DISABLE=1"}) + ": " + r.status().message()};
      return {!r->completed, "", "NCCL all-reduce over " + std::to_string(ranks) + " GPUs with NCCL_P2P_DISABLE=1: " +
                                     (r->completed ? "right" : "did not complete")};
    }
    auto w = probe_.CustomAllreduceWrong(n, opt_.deadline_s);
    if (!w.ok()) return {false, w.status().message(), ""};
    Outcome o;
    o.note = "custom all-reduce, " + std::to_string(n) + " ranks co-located on GPU 0, against the exact reference: " +
             std::to_string(*w) + " elements wrong";
    o.shows = *w > 0;
    return o;
  }

  Outcome Collective() {
    if (p_.root_cause == "nvls_fabric_manager" && !fix_) {
      return {false, "", "not run as logged: the log's collective went through NVLS, which repro never turns on "
                         "(NCCL_NVLS_ENABLE=0 always); the fix run runs it without NVLS"};
    }
    const int gpus = GpuCount();
    const int ranks = std::min(p_.world, gpus);
    if (ranks < 2) {
      return {false, "the log's " + p_.collective + " over " + std::to_string(p_.world) + " ranks needs " +
                         std::to_string(std::max(p_.world, 2)) + " GPUs; this box has " + std::to_string(gpus),
              ""};
    }
    auto r = probe_.Collective(p_.collective, p_.collective_bytes, ranks, env_, opt_.deadline_s);
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kUnavailable) return {false, r.status().message(), ""};
      return {true, "", r.status().message()};
    }
    char b[160];
    std::snprintf(b, sizeof b, "%s of %s over %d ranks: %s in %.3f s, busbw %.1f GB/s", p_.collective.c_str(),
                  FormatBytes(p_.collective_bytes).c_str(), r->ranks, r->completed ? "completed" : "did not complete",
                  r->seconds, r->busbw_gbs);
    Outcome o{!r->completed, "", b};
    if (ranks < p_.world) o.note += " (the log had " + std::to_string(p_.world) + " ranks; this box has " + std::to_string(gpus) + " GPUs)";
    if (!r->note.empty()) o.note += "; " + r->note;
    return o;
  }

  Outcome Driver() {
    auto d = probe_.DriverCudaVersion();
    if (!d.ok()) return {false, d.status().message(), ""};
    Outcome o;
    o.note = "this box's driver supports CUDA " + FormatCudaVersion(*d) + "; the log's runtime/wheel needs " +
             FormatCudaVersion(p_.required_cuda);
    if (p_.log_driver_cuda > 0) {
      o.note += "; the log's driver: CUDA " + FormatCudaVersion(p_.log_driver_cuda) +
                (p_.log_driver_cuda < p_.required_cuda ? " (too old, as the log says)" : "");
    }
    o.shows = *d < p_.required_cuda;
    return o;
  }

  Outcome Arch() {
    auto g = probe_.Gpus();
    if (!g.ok()) return {false, g.status().message(), ""};
    if (g->empty()) return {false, "no GPU on this box", ""};
    const int sm = g->front().sm;
    Outcome o;
    std::string built;
    for (int a : p_.built_archs) built += (built.empty() ? "sm_" : ", sm_") + std::to_string(a);
    o.note = "this box: " + g->front().name + " sm_" + std::to_string(sm);
    if (p_.log_gpu_sm > 0) o.note += "; the log's GPU: sm_" + std::to_string(p_.log_gpu_sm);
    if (p_.built_archs.empty()) {
      o.missing = "the architectures the kernels were built for (the log does not list them; --built-archs)";
      return o;
    }
    o.note += "; built for " + built;
    // A cubin runs on its own major at an equal or higher minor; PTX is not listed here.
    auto runs = [&](int dev) {
      for (int a : p_.built_archs) {
        if (a / 10 == dev / 10 && a <= dev) return true;
      }
      return false;
    };
    o.shows = !runs(sm);
    if (p_.log_gpu_sm > 0) o.note += runs(p_.log_gpu_sm) ? " (the log's GPU is covered)" : " (the log's GPU is not covered)";
    return o;
  }

  Outcome Nvml() {
    auto h = probe_.Health();
    if (!h.ok()) return {false, h.status().message(), ""};
    Outcome o;
    bool found = false;
    for (const auto& g : *h) {
      if (!p_.bus_id.empty() && NormBus(g.bus_id) != NormBus(p_.bus_id)) continue;
      found = true;
      std::string bad;
      if (g.ecc_uncorrected_volatile > 0) bad += " volatile uncorrected ECC " + std::to_string(g.ecc_uncorrected_volatile) + ";";
      if (g.ecc_uncorrected_aggregate > 0) bad += " aggregate uncorrected ECC " + std::to_string(g.ecc_uncorrected_aggregate) + ";";
      if (g.retired_pending > 0) bad += " retired pages pending;";
      if (g.remap_pending > 0) bad += " row remap pending (reset needed);";
      if (g.remap_failure > 0) bad += " row remap failed;";
      if (g.pcie_width_max > 0 && g.pcie_width < g.pcie_width_max) {
        bad += " PCIe x" + std::to_string(g.pcie_width) + " of x" + std::to_string(g.pcie_width_max) + ";";
      }
      auto num = [](int64_t v) { return v < 0 ? std::string("n/a") : std::to_string(v); };
      o.note += (o.note.empty() ? "" : " | ") + g.bus_id + " " + g.name + ": ECC uncorrected volatile " +
                num(g.ecc_uncorrected_volatile) + ", aggregate " + num(g.ecc_uncorrected_aggregate) +
                ", remap pending " + num(g.remap_pending) + ", failed " + num(g.remap_failure) + ", PCIe Gen" +
                std::to_string(g.pcie_gen) + "/" + std::to_string(g.pcie_gen_max) + " x" + std::to_string(g.pcie_width) +
                "/" + std::to_string(g.pcie_width_max) + (bad.empty() ? ": clean" : ":" + bad);
      o.shows = o.shows || !bad.empty();
    }
    if (!found) o.missing = "the log's GPU (PCI " + p_.bus_id + ") is not on this box: run repro on the host that logged it";
    return o;
  }

  // Every GPU's registration with the NVLink fabric, as NVML reads it (what
  // `nvidia-smi -q` shows under Fabric): NVLS needs all of them registered.
  Outcome Fabric() {
    if (fix_) return {false, "", "not used with the fix (NCCL_NVLS_ENABLE=0: NCCL asks the fabric for no multicast)"};
    auto h = probe_.Health();
    if (!h.ok()) return {false, h.status().message(), ""};
    if (h->empty()) return {false, "no GPU on this box", ""};
    static constexpr const char* kState[] = {"not supported", "not started", "in progress", "completed"};
    Outcome o;
    int unknown = 0, unsupported = 0;
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // what NVML says -> the GPUs saying it
    for (const auto& g : *h) {
      const int s = g.fabric_state;
      std::string said = "fabric ";
      if (s < 0 || s > kFabricCompleted) {
        ++unknown;
        said += "unknown";
      } else {
        said += kState[s];
        if (s == kFabricNotSupported) ++unsupported;
        if (s == kFabricNotStarted || s == kFabricInProgress) {
          o.shows = true;
          said += " (the fabric manager has not registered it)";
        } else if (s == kFabricCompleted && g.fabric_status != 0) {
          o.shows = true;
          said += " with error " + std::to_string(g.fabric_status) + " (registration failed)";
        }
      }
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == said; });
      if (it == groups.end()) it = groups.insert(groups.end(), {said, {}});
      it->second.push_back(g.bus_id + (g.name.empty() ? "" : " " + g.name));
    }
    for (const auto& [said, gpus] : groups) {
      o.note += (o.note.empty() ? "" : " | ") + (gpus.size() == 1 ? gpus[0] : std::to_string(gpus.size()) + " GPUs (" + Join(gpus) + ")") + ": " + said;
    }
    const int n = static_cast<int>(h->size());
    if (!o.shows && unknown == n) {
      o.missing = "NVML does not report the fabric (nvmlDeviceGetGpuFabricInfo needs driver R550 or later): read "
                  "`nvidia-smi -q | grep -A3 Fabric` and `systemctl status nvidia-fabricmanager` on the failing host";
    } else if (!o.shows && unsupported + unknown == n) {
      o.missing = "this box has no NVLink fabric (NVML: not supported), so NCCL offers no NVLS here: run repro on the "
                  "NVSwitch host that logged it";
    } else if (!o.shows) {
      o.note += ": every GPU registered now; an NVLS failure on a registered fabric is a fabric manager restarted "
                "under running processes (NVIDIA/nccl#976): reset the GPUs or reboot";
    }
    return o;
  }

  // The filesystem of the log's path: no room (or no inodes) left shows the
  // failure; a quota (EDQUOT) is the user's, which statvfs does not read.
  Outcome Disk() {
    auto s = probe_.Space(p_.disk_path);
    if (!s.ok()) return {false, s.status().message(), ""};
    if (s->checked == "/" && p_.disk_path != "/" && p_.disk_path.find('/', 1) != std::string::npos &&
        p_.disk_path.rfind("/", 0) == 0) {
      return {false, "the log's path (" + p_.disk_path + ") is not on this box: run repro on the host that logged it", ""};
    }
    constexpr int64_t kLittle = 64ll << 20;  // below one compiled kernel cache or a weight shard's write
    Outcome o;
    o.note = s->checked + (s->checked == p_.disk_path ? "" : " (the nearest directory of " + p_.disk_path + " here)") +
             ": " + FormatBytes(s->avail_bytes) + " free of " + FormatBytes(s->total_bytes);
    if (s->total_inodes > 0) o.note += ", " + std::to_string(s->avail_inodes) + " inodes free";
    if (s->avail_bytes < kLittle) {
      o.shows = true;
      o.note += ": no room (under " + FormatBytes(kLittle) + ")";
    } else if (s->total_inodes > 0 && s->avail_inodes == 0) {
      o.shows = true;
      o.note += ": no inodes left (a file cannot be created whatever the free bytes)";
    } else if (p_.disk_errno == 122) {
      o.missing = "the log's error is a quota (EDQUOT): " + o.note + " is the filesystem's room, not the user's quota; "
                  "read `quota -s` (or `lfs quota -u $USER " + p_.disk_path + "` on Lustre) as the user that ran the server";
    } else {
      o.note += ": room here now";
    }
    return o;
  }

  Outcome Port() {
    int port = p_.port;
    if (fix_) port = 0;
    Status s = probe_.BindPort(port);
    if (fix_) return {!s.ok(), "", s.ok() ? "a free port (bind to port 0) works: pick another --port" : s.message()};
    if (s.code() == StatusCode::kUnavailable) return {false, s.message(), ""};
    if (!s.ok()) return {true, "", "bind port " + std::to_string(port) + ": " + s.message()};
    return {false, "", "bind port " + std::to_string(port) + ": free on this box now"};
  }

  const BoxPlan& p_;
  BoxProbe& probe_;
  BoxOptions opt_;
  bool fix_;
  std::map<std::string, std::string> env_;
};

RunResult RunSteps(const BoxPlan& plan, BoxProbe& probe, const BoxOptions& opt, bool fix, std::vector<std::string>* missing) {
  RunResult out;
  out.label = fix ? "fix: " + plan.fix : "as logged";
  Checker c(plan, probe, opt, fix);
  const double t0 = Now();
  for (const auto& step : plan.steps) {
    if (CancelFlag().load()) {
      out.failed_step = step;
      out.failure = CancelReason();
      out.tool_error = true;
      break;
    }
    CurrentStep().store(step.c_str());
    StepRecord rec;
    rec.step = step;
    rec.start_s = Now() - t0;
    Outcome o = c.Run(step);
    rec.seconds = Now() - t0 - rec.start_s;
    rec.note = o.note;
    if (!o.missing.empty()) {
      rec.ok = false;
      rec.error = "not checked: " + o.missing;
      missing->push_back(step + ": " + o.missing);
    } else if (o.shows) {
      rec.ok = false;
      rec.error = o.note;
      if (out.failed_step.empty()) {
        out.failed_step = step;
        out.failure = o.note;
      }
    }
    out.steps.push_back(rec);
  }
  out.seconds = Now() - t0;
  return out;
}

}  // namespace

BoxReport RunBoxCheck(const BoxPlan& plan, BoxProbe& probe, const BoxOptions& opt) {
  BoxReport rep;
  const double t0 = Now();
  rep.probe = probe.Name();
  if (auto g = probe.Gpus(); g.ok()) {
    for (const auto& x : *g) rep.banner.push_back("GPU " + std::to_string(x.index) + ": " + x.name + " sm_" + std::to_string(x.sm) + " " + x.bus_id);
  } else {
    rep.banner.push_back("GPUs: " + g.status().message());
  }
  std::vector<std::string> missing;
  rep.original = RunSteps(plan, probe, opt, /*fix=*/false, &missing);
  Verdict& v = rep.verdict;
  if (!rep.original.failed_step.empty() && !rep.original.tool_error) {
    v.outcome = "reproduced";
    v.reason = plan.root_cause + " shows at " + rep.original.failed_step + ": " + rep.original.failure;
  } else if (rep.original.tool_error) {
    v.outcome = "inconclusive";
    v.reason = "the check stopped at " + rep.original.failed_step + ": " + rep.original.failure;
  } else if (!missing.empty()) {
    v.outcome = "inconclusive";
    v.reason = "nothing checked shows " + plan.root_cause + ", and this is missing: " + Join(missing, "; ");
  } else {
    v.outcome = "not reproduced";
    v.reason = "every check passed on this box";
    if (plan.root_cause == "nccl_timeout_hang" || plan.root_cause == "collective_desync") {
      v.reason += ": the fabric completes the log's collective, so the hang came from the workload (a rank that "
                  "stopped, or ranks that called different collectives), not the transport";
      if (!plan.log_verdict.empty()) v.reason += "; the log: " + plan.log_verdict;
    }
  }
  // A figure no input gave decides a check as much as a logged one.
  if (!plan.asked.empty() && v.outcome == "not reproduced") {
    v.outcome = "inconclusive";
    v.reason += "; but these figures were assumed, pass them: " + Join(plan.asked, "; ");
  }
  const bool fixable = !plan.fix_env.empty() || plan.root_cause == "duplicate_gpu" || plan.root_cause == "port_in_use" ||
                       plan.root_cause == "shm_too_small";
  if (!opt.check_fix) {
    v.fix_outcome = "not checked";
    v.fix_reason = "fix check disabled (--no-fix)";
  } else if (v.outcome != "reproduced") {
    v.fix_outcome = "not checked";
    v.fix_reason = "nothing to fix on this box";
  } else if (!fixable) {
    v.fix_outcome = "not checked";
    v.fix_reason = "the fix is not one repro can apply: " + plan.fix;
  } else {
    std::vector<std::string> fix_missing;
    rep.fix = RunSteps(plan, probe, opt, /*fix=*/true, &fix_missing);
    if (!rep.fix->failed_step.empty()) {
      v.fix_outcome = "fails";
      v.fix_reason = rep.fix->label + ": " + rep.fix->failed_step + ": " + rep.fix->failure;
    } else if (!fix_missing.empty()) {
      v.fix_outcome = "inconclusive";
      v.fix_reason = rep.fix->label + ": not checked: " + Join(fix_missing, "; ");
    } else {
      v.fix_outcome = "passes";
      std::string notes;
      for (const auto& s : rep.fix->steps) notes += (notes.empty() ? "" : "; ") + s.note;
      v.fix_reason = rep.fix->label + ": " + notes;
    }
  }
  rep.seconds = Now() - t0;
  return rep;
}

std::string RenderBoxText(const BoxReport& r) {
  std::ostringstream o;
  o << "tptriage repro (" << r.probe << " box)\n";
  for (const auto& b : r.banner) o << "  " << b << "\n";
  auto steps = [&o](const RunResult& run) {
    o << "\n" << run.label << ":\n";
    for (const auto& s : run.steps) {
      o << "  " << (s.ok ? "ok   " : (s.error.rfind("not checked", 0) == 0 ? "skip " : "FAIL ")) << s.step << ": "
        << (s.ok || s.error.rfind("not checked", 0) != 0 ? (s.ok ? s.note : s.error) : s.error) << "\n";
    }
  };
  steps(r.original);
  if (r.fix) steps(*r.fix);
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  std::string outcome = r.verdict.outcome;
  for (char& c : outcome) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  o << "\nverdict: " << outcome << ": " << r.verdict.reason << "\n";
  o << "fix check: " << r.verdict.fix_outcome << ": " << r.verdict.fix_reason << "\n";
  char b[64];
  std::snprintf(b, sizeof b, "time to verdict: %.2f s\n", r.seconds);
  o << b;
  return o.str();
}

nlohmann::json RenderBoxJson(const BoxReport& r, const BoxPlan& plan) {
  auto run = [](const RunResult& x) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& s : x.steps) {
      steps.push_back({{"step", s.step}, {"ok", s.ok}, {"error", s.error}, {"note", s.note}, {"seconds", s.seconds}});
    }
    return nlohmann::json{{"label", x.label}, {"steps", steps}, {"failed_step", x.failed_step}, {"failure", x.failure}};
  };
  nlohmann::json j = {{"schema_version", kReproSchemaVersion},
                      {"backend", r.probe},
                      {"banner", r.banner},
                      {"plan", BoxPlanToJson(plan)},
                      {"original", run(r.original)},
                      {"verdict",
                       {{"outcome", r.verdict.outcome},
                        {"reason", r.verdict.reason},
                        {"fix_outcome", r.verdict.fix_outcome},
                        {"fix_reason", r.verdict.fix_reason}}},
                      {"time_to_verdict_s", r.seconds}};
  if (r.fix) j["fix"] = run(*r.fix);
  return j;
}

}  // namespace tpt::repro
