// box_probe_host.cc: the real box: network interfaces (getifaddrs), HCAs
// (/sys/class/infiniband), /dev/shm and a log's path (statvfs; segments made as NCCL's
// shmutils makes them), NVML read only (nvml_dl.h), ports (bind), and the
// GPU checks of gpu_checks.h.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "repro/box_check.h"
#include "repro/gpu_checks.h"
#include "repro/nvml_dl.h"

namespace tpt::repro {
namespace {

class HostProbe : public BoxProbe {
 public:
  std::string Name() const override { return "host"; }

  std::vector<NetInterface> Interfaces() override {
    std::vector<NetInterface> out;
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return out;
    for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
      if (a->ifa_addr == nullptr) continue;
      const int fam = a->ifa_addr->sa_family;
      if (fam != AF_INET && fam != AF_INET6) continue;
      NetInterface n;
      n.name = a->ifa_name;
      n.ipv6 = fam == AF_INET6;
      n.up = (a->ifa_flags & IFF_UP) != 0;
      n.loopback = (a->ifa_flags & IFF_LOOPBACK) != 0;
      char buf[INET6_ADDRSTRLEN] = {0};
      const void* src = fam == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
                                       : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr);
      if (inet_ntop(fam, src, buf, sizeof buf)) n.address = buf;
      out.push_back(n);
    }
    freeifaddrs(list);
    return out;
  }

  std::vector<std::string> IbDevices() override {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) out.push_back(e.path().filename());
    return out;
  }

  StatusOr<int64_t> ShmFreeBytes() override {
    struct statvfs s {};
    if (statvfs("/dev/shm", &s) != 0) return UnavailableError(std::string("statvfs /dev/shm: ") + std::strerror(errno));
    return static_cast<int64_t>(s.f_bavail) * static_cast<int64_t>(s.f_frsize);
  }

  StatusOr<DiskSpace> Space(const std::string& path) override {
    std::filesystem::path p(path);
    std::error_code ec;
    while (!p.empty() && !std::filesystem::exists(p, ec) && p != p.root_path()) p = p.parent_path();
    if (p.empty()) p = ".";
    struct statvfs s {};
    if (statvfs(p.c_str(), &s) != 0) return UnavailableError("statvfs " + p.string() + ": " + std::strerror(errno));
    const int64_t frag = static_cast<int64_t>(s.f_frsize);
    return DiskSpace{p.string(), static_cast<int64_t>(s.f_bavail) * frag, static_cast<int64_t>(s.f_blocks) * frag,
                     static_cast<int64_t>(s.f_favail), static_cast<int64_t>(s.f_files)};
  }

  // As NCCL's shmutils: a file in /dev/shm, posix_fallocate to its size (a
  // tmpfs that is full says ENOSPC here, not SIGBUS later). Every file is
  // unlinked at once, so nothing is left behind whatever happens next.
  Status CreateShmSegments(int n, int64_t bytes) override {
    std::vector<int> fds;
    Status result = OkStatus();
    for (int i = 0; i < n; ++i) {
      const std::string path = "/dev/shm/tptriage-repro-" + std::to_string(getpid()) + "-" + std::to_string(i);
      const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
      if (fd < 0) {
        result = UnavailableError("open " + path + ": " + std::strerror(errno));
        break;
      }
      unlink(path.c_str());
      fds.push_back(fd);
      const int err = posix_fallocate(fd, 0, bytes);
      if (err != 0) {
        result = InternalError("segment " + std::to_string(i + 1) + " of " + std::to_string(n) + " (" +
                               std::to_string(bytes) + " B): posix_fallocate: " + std::strerror(err) +
                               " (NCCL: 'failed to extend /dev/shm/nccl-XXXXXX to " + std::to_string(bytes) + " bytes')");
        break;
      }
    }
    for (int fd : fds) close(fd);
    return result;
  }

  StatusOr<int> DriverCudaVersion() override {
    auto v = NvmlDriverCudaVersion();
    if (v.ok()) return v;
    return GpuDriverCudaVersion(30);
  }
  StatusOr<std::vector<GpuFacts>> Gpus() override {
    if (!gpus_cached_) {
      gpus_ = GpuList(60);
      gpus_cached_ = true;
    }
    return gpus_;
  }
  StatusOr<std::vector<GpuHealth>> Health() override { return NvmlHealthOfAll(); }
  Status NcclBootstrap(const std::map<std::string, std::string>& env, double deadline_s) override {
    return GpuNcclBootstrap(env, deadline_s);
  }
  Status TwoRanksOneGpu(int device, double deadline_s) override { return GpuTwoRanksOneGpu(device, deadline_s); }
  StatusOr<std::vector<std::vector<int>>> PeerMatrix() override { return GpuPeerMatrix(60); }
  Status IpcBetweenProcesses(double deadline_s) override { return GpuIpcBetweenProcesses(deadline_s); }
  StatusOr<std::string> PeerCopy(double deadline_s) override {
    auto g = Gpus();
    if (g.ok() && g->size() < 2) return UnavailableError("peer copies need 2 GPUs; this box has " + std::to_string(g->size()));
    return GpuPeerCopy(deadline_s);
  }
  StatusOr<int64_t> CustomAllreduceWrong(int ranks, double deadline_s) override {
    return GpuCustomAllreduceWrong(ranks, deadline_s);
  }
  StatusOr<CollectiveRun> Collective(const std::string& op, int64_t bytes, int ranks,
                                     const std::map<std::string, std::string>& env, double deadline_s) override {
    return GpuCollective(op, bytes, ranks, env, deadline_s);
  }

  Status BindPort(int port) override {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return UnavailableError(std::string("socket: ") + std::strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as uvicorn and torch's TCPStore do
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    Status s = OkStatus();
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      const int e = errno;
      s = e == EACCES ? UnavailableError("bind: permission denied (a port below 1024 needs root)")
                      : InternalError(std::string("bind: ") + std::strerror(e) + (e == EADDRINUSE ? " (EADDRINUSE)" : ""));
    }
    close(fd);
    return s;
  }

 private:
  bool gpus_cached_ = false;
  StatusOr<std::vector<GpuFacts>> gpus_ = std::vector<GpuFacts>{};
};

}  // namespace

std::unique_ptr<BoxProbe> MakeHostProbe() { return std::make_unique<HostProbe>(); }

}  // namespace tpt::repro
