// gpu_checks.cc (CUDA builds): see gpu_checks.h. Each check forks its
// children before any CUDA call of this process; a child reports one JSON
// line through a pipe: {"code": "ok"|"failed"|"unavailable", "message", ...}.
#include "repro/gpu_checks.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "repro/allreduce_bench.h"

namespace tpt::repro {
namespace {

using nlohmann::json;

double Now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

json Ok(json extra = json::object()) {
  extra["code"] = "ok";
  return extra;
}
json Failed(const std::string& m) { return {{"code", "failed"}, {"message", m}}; }
json Unavailable(const std::string& m) { return {{"code", "unavailable"}, {"message", m}}; }

std::string CudaErr(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}
std::string NcclErr(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) {
  std::string last = ncclGetLastError(comm);
  return std::string(what) + ": " + ncclGetErrorString(r) + (last.empty() ? "" : " (NCCL: " + last + ")");
}
bool NcclMissing(std::string* why) {
  int v = 0;
  if (ncclGetVersion(&v) == ncclSuccess) return false;
  *why = ncclGetLastError(nullptr);
  return true;
}

// Read end of a pipe with all of `bytes`, or false at EOF.
bool ReadAll(int fd, void* p, size_t bytes) {
  char* c = static_cast<char*>(p);
  while (bytes > 0) {
    const ssize_t n = read(fd, c, bytes);
    if (n <= 0) return false;
    c += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}
void WriteAll(int fd, const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  while (bytes > 0) {
    const ssize_t n = write(fd, c, bytes);
    if (n <= 0) return;
    c += n;
    bytes -= static_cast<size_t>(n);
  }
}

// What a child gets: its rank, and the byte channels to its peers (rank 0
// writes to every other rank's `from0`; rank r writes to rank 0's `to0[r]`).
struct Channels {
  int rank = 0, n = 1;
  std::vector<int> from0_read, from0_write;  // index r: rank 0 -> rank r
  std::vector<int> to0_read, to0_write;      // index r: rank r -> rank 0
};

// Runs fn in `n` children; their JSON results in rank order. A child that
// has not reported at the deadline is killed: its result says so.
std::vector<json> InChildren(int n, double deadline_s, const std::map<std::string, std::string>& env,
                             const std::function<json(Channels&)>& fn) {
  Channels ch;
  ch.n = n;
  ch.from0_read.assign(n, -1), ch.from0_write.assign(n, -1), ch.to0_read.assign(n, -1), ch.to0_write.assign(n, -1);
  for (int r = 1; r < n; ++r) {
    int a[2], b[2];
    if (pipe(a) == 0) ch.from0_read[r] = a[0], ch.from0_write[r] = a[1];
    if (pipe(b) == 0) ch.to0_read[r] = b[0], ch.to0_write[r] = b[1];
  }
  std::vector<int> result_fd(n, -1);
  std::vector<pid_t> pids(n, -1);
  std::fflush(nullptr);
  for (int r = 0; r < n; ++r) {
    int res[2];
    if (pipe(res) != 0) break;
    const pid_t pid = fork();
    if (pid == 0) {
      close(res[0]);
      // Keep only this rank's ends, so that a peer that dies closes its channel.
      for (int q = 1; q < n; ++q) {
        const bool mine = r == 0 || q == r;
        if (r != 0 || !mine) close(ch.from0_write[q]), close(ch.to0_read[q]);
        if (r == 0 || !mine) close(ch.from0_read[q]), close(ch.to0_write[q]);
      }
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      setenv("NCCL_NVLS_ENABLE", "0", 1);
      signal(SIGINT, SIG_IGN);   // the parent ends children by its own deadline
      signal(SIGPIPE, SIG_IGN);  // a peer that died is an EOF or EPIPE, not a signal
      ch.rank = r;
      json out;
      try {
        out = fn(ch);
      } catch (const std::exception& e) {
        out = Failed(std::string("exception: ") + e.what());
      }
      const std::string line = out.dump() + "\n";
      WriteAll(res[1], line.data(), line.size());
      close(res[1]);
      std::fflush(nullptr);
      _exit(0);
    }
    close(res[1]);
    result_fd[r] = res[0];
    pids[r] = pid;
  }
  for (int q = 1; q < n; ++q) {
    for (int fd : {ch.from0_read[q], ch.from0_write[q], ch.to0_read[q], ch.to0_write[q]}) {
      if (fd >= 0) close(fd);
    }
  }
  std::vector<std::string> text(n);
  std::vector<bool> open(n, true);
  const double t0 = Now();
  int left = n;
  while (left > 0) {
    std::vector<pollfd> fds;
    std::vector<int> who;
    for (int r = 0; r < n; ++r) {
      if (open[r] && result_fd[r] >= 0) fds.push_back({result_fd[r], POLLIN, 0}), who.push_back(r);
    }
    if (fds.empty()) break;
    const double remaining = deadline_s - (Now() - t0);
    if (remaining <= 0) break;
    poll(fds.data(), fds.size(), static_cast<int>(std::min(remaining, 0.2) * 1000) + 1);
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        text[who[i]].append(buf, static_cast<size_t>(got));
      } else {
        open[who[i]] = false;
        --left;
      }
    }
  }
  std::vector<json> out(n);
  for (int r = 0; r < n; ++r) {
    if (pids[r] <= 0) {
      out[r] = Unavailable("could not start child " + std::to_string(r));
      continue;
    }
    if (open[r]) kill(pids[r], SIGKILL);
    int st = 0;
    waitpid(pids[r], &st, 0);
    if (result_fd[r] >= 0) close(result_fd[r]);
    json j = json::parse(text[r], nullptr, false);
    if (!j.is_discarded() && j.is_object()) {
      out[r] = j;
    } else if (open[r]) {
      out[r] = {{"code", "timeout"}, {"message", "rank " + std::to_string(r) + " did not finish within " +
                                                     std::to_string(int(deadline_s)) + " s (killed)"}};
    } else {
      out[r] = Failed("rank " + std::to_string(r) + " died" +
                      (WIFSIGNALED(st) ? " by signal " + std::to_string(WTERMSIG(st)) : "") + " without a result");
    }
  }
  return out;
}

// The first non-ok result as a Status.
Status ToStatus(const std::vector<json>& rs) {
  for (const auto& j : rs) {
    const std::string code = j.value("code", "failed");
    if (code == "ok") continue;
    const std::string m = j.value("message", "");
    if (code == "unavailable") return UnavailableError(m);
    if (code == "timeout") return DeadlineExceededError(m);
    return InternalError(m);
  }
  return OkStatus();
}

// NCCL id from rank 0 to every rank, then a communicator of ch.n ranks on `device`.
json InitComm(Channels& ch, int device, ncclComm_t* comm) {
  std::string why;
  if (NcclMissing(&why)) return Unavailable(why);
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) return Unavailable(CudaErr(e, "cudaSetDevice"));
  ncclUniqueId id{};
  if (ch.rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) return Failed(NcclErr(r, "ncclGetUniqueId"));
    for (int q = 1; q < ch.n; ++q) WriteAll(ch.from0_write[q], &id, sizeof id);
  } else if (!ReadAll(ch.from0_read[ch.rank], &id, sizeof id)) {
    return Failed("rank 0 ended before sending the NCCL id");
  }
  ncclResult_t r = ncclCommInitRank(comm, ch.n, id, ch.rank);
  if (r != ncclSuccess) {
    json f = Failed(NcclErr(r, "ncclCommInitRank", nullptr));
    f["nccl_result"] = static_cast<int>(r);
    return f;
  }
  return Ok();
}

// The log's NCCL_* settings a child applies: never its NCCL_COMM_ID (the
// rendezvous of its own hosts, not dialled from here) nor NVLS (kept off).
std::map<std::string, std::string> NcclSettings(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> e;
  for (const auto& [k, v] : env) {
    if (k.rfind("NCCL_", 0) == 0 && k != "NCCL_COMM_ID" && k != "NCCL_NVLS_ENABLE") e[k] = v;
  }
  return e;
}

}  // namespace

StatusOr<std::vector<GpuFacts>> GpuList(double deadline_s) {
  auto rs = InChildren(1, deadline_s, {}, [](Channels&) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return Unavailable(CudaErr(e, "cudaGetDeviceCount"));
    json gpus = json::array();
    for (int i = 0; i < n; ++i) {
      cudaDeviceProp p{};
      if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
      char bus[32] = {0};
      cudaDeviceGetPCIBusId(bus, sizeof bus, i);
      gpus.push_back({{"index", i}, {"name", p.name}, {"bus_id", bus}, {"sm", p.major * 10 + p.minor}});
    }
    return Ok({{"gpus", gpus}});
  });
  TPT_RETURN_IF_ERROR(ToStatus(rs));
  std::vector<GpuFacts> out;
  for (const auto& g : rs[0].value("gpus", json::array())) {
    out.push_back({g.value("index", 0), g.value("name", ""), g.value("bus_id", ""), g.value("sm", 0)});
  }
  return out;
}

StatusOr<int> GpuDriverCudaVersion(double deadline_s) {
  auto rs = InChildren(1, deadline_s, {}, [](Channels&) {
    int v = 0;
    cudaError_t e = cudaDriverGetVersion(&v);
    if (e != cudaSuccess) return Unavailable("no CUDA driver: " + CudaErr(e, "cudaDriverGetVersion"));
    if (v == 0) return Unavailable("no CUDA driver (cudaDriverGetVersion reports 0)");
    return Ok({{"version", v}});
  });
  TPT_RETURN_IF_ERROR(ToStatus(rs));
  return rs[0].value("version", 0);
}

Status GpuNcclBootstrap(const std::map<std::string, std::string>& env, double deadline_s) {
  auto rs = InChildren(1, deadline_s, NcclSettings(env), [](Channels& ch) {
    ncclComm_t comm = nullptr;
    json r = InitComm(ch, 0, &comm);
    if (comm) ncclCommDestroy(comm);
    return r;
  });
  return ToStatus(rs);
}

Status GpuTwoRanksOneGpu(int device, double deadline_s) {
  auto rs = InChildren(2, deadline_s, {}, [device](Channels& ch) {
    ncclComm_t comm = nullptr;
    json r = InitComm(ch, device, &comm);
    if (comm) {
      if (r.value("code", "") == "ok") ncclCommDestroy(comm); else ncclCommAbort(comm);
    }
    return r;
  });
  return ToStatus(rs);
}

StatusOr<std::vector<std::vector<int>>> GpuPeerMatrix(double deadline_s) {
  auto rs = InChildren(1, deadline_s, {}, [](Channels&) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return Unavailable(CudaErr(e, "cudaGetDeviceCount"));
    json m = json::array();
    for (int i = 0; i < n; ++i) {
      json row = json::array();
      for (int j = 0; j < n; ++j) {
        int can = i == j ? 1 : 0;
        if (i != j) cudaDeviceCanAccessPeer(&can, i, j);
        row.push_back(can);
      }
      m.push_back(row);
    }
    return Ok({{"matrix", m}});
  });
  TPT_RETURN_IF_ERROR(ToStatus(rs));
  return rs[0]["matrix"].get<std::vector<std::vector<int>>>();
}

// Rank 0 exports a buffer of words i, rank 1 (on GPU 1 when there is one,
// as the custom all-reduce maps a peer's buffer) opens it, checks it and
// writes 3i+1; rank 0 checks that back.
Status GpuIpcBetweenProcesses(double deadline_s) {
  constexpr size_t kWords = 1 << 20;  // 4 MiB
  auto rs = InChildren(2, deadline_s, {}, [](Channels& ch) -> json {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return Unavailable("no CUDA device");
    std::vector<uint32_t> host(kWords);
    if (ch.rank == 0) {
      if (cudaSetDevice(0) != cudaSuccess) return Unavailable("cudaSetDevice(0) failed");
      void* d = nullptr;
      cudaError_t e = cudaMalloc(&d, kWords * 4);
      if (e != cudaSuccess) return Unavailable(CudaErr(e, "cudaMalloc"));
      for (size_t i = 0; i < kWords; ++i) host[i] = static_cast<uint32_t>(i);
      cudaMemcpy(d, host.data(), kWords * 4, cudaMemcpyHostToDevice);
      cudaIpcMemHandle_t h{};
      e = cudaIpcGetMemHandle(&h, d);
      if (e != cudaSuccess) {
        cudaFree(d);
        return Failed(CudaErr(e, "cudaIpcGetMemHandle"));
      }
      WriteAll(ch.from0_write[1], &h, sizeof h);
      char done = 0;
      if (!ReadAll(ch.to0_read[1], &done, 1) || done != 1) {
        cudaFree(d);
        return Failed("the other process did not finish with the buffer" + std::string(done == 2 ? " (it failed)" : ""));
      }
      cudaMemcpy(host.data(), d, kWords * 4, cudaMemcpyDeviceToHost);
      cudaFree(d);
      size_t wrong = 0;
      for (size_t i = 0; i < kWords; ++i) wrong += host[i] != static_cast<uint32_t>(3 * i + 1);
      if (wrong) return Failed("the exporter read back " + std::to_string(wrong) + " of " + std::to_string(kWords) + " words wrong");
      return Ok({{"devices", n > 1 ? "0 -> 1" : "0 -> 0 (one GPU: the same device, two processes)"}});
    }
    const int dev = n > 1 ? 1 : 0;
    if (cudaSetDevice(dev) != cudaSuccess) return Unavailable("cudaSetDevice failed");
    cudaIpcMemHandle_t h{};
    char verdict = 2;
    if (!ReadAll(ch.from0_read[1], &h, sizeof h)) return Failed("rank 0 sent no IPC handle");
    void* d = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&d, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      WriteAll(ch.to0_write[1], &verdict, 1);
      return Failed(CudaErr(e, "cudaIpcOpenMemHandle"));
    }
    cudaMemcpy(host.data(), d, kWords * 4, cudaMemcpyDeviceToHost);
    size_t wrong = 0;
    for (size_t i = 0; i < kWords; ++i) wrong += host[i] != static_cast<uint32_t>(i);
    for (size_t i = 0; i < kWords; ++i) host[i] = static_cast<uint32_t>(3 * i + 1);
    cudaMemcpy(d, host.data(), kWords * 4, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    cudaIpcCloseMemHandle(d);
    verdict = wrong ? 2 : 1;
    WriteAll(ch.to0_write[1], &verdict, 1);
    if (wrong) return Failed("the importer read " + std::to_string(wrong) + " of " + std::to_string(kWords) + " words wrong");
    return Ok();
  });
  return ToStatus(rs);
}

StatusOr<std::string> GpuPeerCopy(double deadline_s) {
  constexpr size_t kWords = 4 << 20;  // 16 MiB
  auto rs = InChildren(1, deadline_s, {}, [](Channels&) -> json {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) return Unavailable("no CUDA device");
    if (n < 2) return Unavailable("peer copies need 2 GPUs; this box has " + std::to_string(n));
    std::vector<uint32_t> host(kWords), back(kWords);
    std::string bad;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        void *src = nullptr, *dst = nullptr;
        cudaSetDevice(i);
        if (cudaMalloc(&src, kWords * 4) != cudaSuccess) return Unavailable("cudaMalloc failed on GPU " + std::to_string(i));
        int can = 0;
        cudaDeviceCanAccessPeer(&can, i, j);
        if (can) cudaDeviceEnablePeerAccess(j, 0);
        cudaSetDevice(j);
        if (cudaMalloc(&dst, kWords * 4) != cudaSuccess) {
          cudaSetDevice(i), cudaFree(src);
          return Unavailable("cudaMalloc failed on GPU " + std::to_string(j));
        }
        for (size_t k = 0; k < kWords; ++k) host[k] = static_cast<uint32_t>(k * 2654435761u + i * 31 + j);
        cudaSetDevice(i);
        cudaMemcpy(src, host.data(), kWords * 4, cudaMemcpyHostToDevice);
        cudaError_t e = cudaMemcpyPeer(dst, j, src, i, kWords * 4);
        cudaDeviceSynchronize();
        cudaSetDevice(j);
        cudaMemcpy(back.data(), dst, kWords * 4, cudaMemcpyDeviceToHost);
        size_t wrong = 0;
        for (size_t k = 0; k < kWords; ++k) wrong += back[k] != host[k];
        if (e != cudaSuccess) bad += std::to_string(i) + "->" + std::to_string(j) + ": " + CudaErr(e, "cudaMemcpyPeer") + "; ";
        else if (wrong) bad += std::to_string(i) + "->" + std::to_string(j) + ": " + std::to_string(wrong) + " words wrong" + (can ? " (P2P claimed)" : "") + "; ";
        cudaFree(dst);
        cudaSetDevice(i);
        if (can) cudaDeviceDisablePeerAccess(j);
        cudaFree(src);
      }
    }
    return Ok({{"bad", bad}});
  });
  TPT_RETURN_IF_ERROR(ToStatus(rs));
  return rs[0].value("bad", "");
}

StatusOr<int64_t> GpuCustomAllreduceWrong(int ranks, double deadline_s) {
  auto rs = InChildren(1, deadline_s, {}, [ranks](Channels&) -> json {
    BenchOptions o;
    o.ranks = {ranks};
    o.min_bytes = 64 << 10;
    o.max_bytes = 4 << 20;
    o.ops_per_graph = 2;
    o.replays = 1;
    auto rows = RunAllreduceBench(o);
    if (!rows.ok()) return Unavailable(rows.status().message());
    int64_t wrong = 0;
    for (const auto& r : *rows) wrong += std::max<int64_t>(0, r.one_shot.wrong) + std::max<int64_t>(0, r.two_shot.wrong);
    return Ok({{"wrong", wrong}, {"rows", rows->size()}});
  });
  TPT_RETURN_IF_ERROR(ToStatus(rs));
  return rs[0].value("wrong", int64_t{0});
}

StatusOr<CollectiveRun> GpuCollective(const std::string& op, int64_t bytes, int ranks,
                                      const std::map<std::string, std::string>& env, double deadline_s) {
  const std::map<std::string, std::string> e = NcclSettings(env);
  const size_t count = static_cast<size_t>(std::max<int64_t>(bytes, 2) / 2);  // bf16 elements
  auto rs = InChildren(ranks, deadline_s, e, [&](Channels& ch) -> json {
    ncclComm_t comm = nullptr;
    json init = InitComm(ch, ch.rank, &comm);
    if (init.value("code", "") != "ok") {
      if (comm) ncclCommAbort(comm);
      return init;
    }
    void *send = nullptr, *recv = nullptr;
    const bool gather = op == "all_gather";
    cudaMalloc(&send, count * 2);
    cudaMalloc(&recv, count * 2 * (gather ? ch.n : 1));
    cudaMemset(send, 0, count * 2);
    cudaStream_t s = nullptr;
    cudaStreamCreate(&s);
    auto run = [&] {
      return gather ? ncclAllGather(send, recv, count, ncclBfloat16, comm, s)
                    : ncclAllReduce(send, recv, count, ncclBfloat16, ncclSum, comm, s);
    };
    ncclResult_t r = run();  // warm-up
    cudaStreamSynchronize(s);
    const double t0 = Now();
    constexpr int kIters = 5;
    for (int i = 0; i < kIters && r == ncclSuccess; ++i) r = run();
    cudaStreamSynchronize(s);
    const double t = (Now() - t0) / kIters;
    json out = r == ncclSuccess ? Ok({{"seconds", t}}) : Failed(NcclErr(r, gather ? "ncclAllGather" : "ncclAllReduce", comm));
    cudaFree(send), cudaFree(recv), cudaStreamDestroy(s);
    ncclCommDestroy(comm);
    return out;
  });
  CollectiveRun cr;
  cr.ranks = ranks;
  for (const auto& j : rs) {
    if (j.value("code", "") == "timeout") {
      cr.completed = false;
      cr.seconds = deadline_s;
      cr.note = j.value("message", "") + "; ranks killed at the deadline";
      return cr;
    }
  }
  TPT_RETURN_IF_ERROR(ToStatus(rs));
  cr.completed = true;
  for (const auto& j : rs) cr.seconds = std::max(cr.seconds, j.value("seconds", 0.0));
  // nccl-tests: algbw = bytes / time; busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (all-gather).
  const double algbw = cr.seconds > 0 ? static_cast<double>(bytes) / cr.seconds / 1e9 : 0;
  cr.busbw_gbs = algbw * (op == "all_gather" ? (ranks - 1.0) / ranks : 2.0 * (ranks - 1) / ranks);
  return cr;
}

}  // namespace tpt::repro
