// nccl_dl.cc: NCCL loaded with dlopen on the first NCCL call, so a CUDA build
// of tptriage starts (and analyze/plan/diff/events run) on a machine without
// NCCL. Each NCCL function repro/ uses is defined here and forwards to the
// library found, in this order:
//   1. $TPT_NCCL_LIBRARY (a path to libnccl.so.2), when set;
//   2. the system: libnccl.so.2 through the dynamic loader (LD_LIBRARY_PATH, ld.so.cache);
//   3. the CUDA toolkit: $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64;
//   4. the nvidia-nccl pip wheel: .../site-packages/nvidia/nccl/lib of $VIRTUAL_ENV,
//      $CONDA_PREFIX, the user's ~/.local and the system's Python folders.
// When none loads, every call returns ncclSystemError and ncclGetErrorString /
// ncclGetLastError say where it looked and how to install it.
// (The CUDA driver needs nothing like this: the static CUDA runtime already
// loads libcuda.so.1 with dlopen when the first CUDA call is made.)
#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include <nccl.h>

namespace {

struct Loaded {
  void* handle = nullptr;
  std::string message;  // why it failed, when handle is null
};

std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  if (const char* p = std::getenv("TPT_NCCL_LIBRARY"); p && *p) out.push_back(p);
  out.push_back("libnccl.so.2");
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* p = std::getenv(var); p && *p) out.push_back(std::string(p) + "/lib64/libnccl.so.2");
  }
  out.push_back("/usr/local/cuda/lib64/libnccl.so.2");
  std::vector<std::string> roots;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (const char* p = std::getenv(var); p && *p) roots.push_back(std::string(p) + "/lib/python3*/site-packages");
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    roots.push_back(std::string(home) + "/.local/lib/python3*/site-packages");
  }
  roots.push_back("/usr/local/lib/python3*/dist-packages");
  roots.push_back("/usr/local/lib/python3*/site-packages");
  roots.push_back("/usr/lib/python3/dist-packages");
  for (const auto& root : roots) {
    glob_t g{};
    if (glob((root + "/nvidia/nccl/lib/libnccl.so.2").c_str(), 0, nullptr, &g) == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
    }
    globfree(&g);
  }
  return out;
}

const Loaded& Nccl() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    for (const auto& path : Candidates()) {
      loaded.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (loaded.handle) return;
      tried += (tried.empty() ? "" : ", ") + path;
    }
    loaded.message =
        "NCCL (libnccl.so.2) was not found; tried " + tried +
        ". Install it (Debian/Ubuntu: libnccl2; pip: nvidia-nccl-cu12 or nvidia-nccl-cu13; or the CUDA "
        "toolkit's copy) or point TPT_NCCL_LIBRARY at libnccl.so.2. analyze, plan, diff and events do not need it.";
  });
  return loaded;
}

template <typename F>
F Sym(const char* name) {
  const Loaded& l = Nccl();
  return l.handle ? reinterpret_cast<F>(dlsym(l.handle, name)) : nullptr;
}

}  // namespace

// Forwards NAME(args) to the loaded NCCL, or returns ncclSystemError.
#define TPT_NCCL_FORWARD(NAME, PARAMS, ARGS)                            \
  extern "C" ncclResult_t NAME PARAMS {                                 \
    static auto fn = Sym<ncclResult_t(*) PARAMS>(#NAME);                \
    return fn ? fn ARGS : ncclSystemError;                              \
  }

TPT_NCCL_FORWARD(ncclGetVersion, (int* version), (version))
TPT_NCCL_FORWARD(ncclGetUniqueId, (ncclUniqueId * id), (id))
TPT_NCCL_FORWARD(ncclCommInitRank, (ncclComm_t * comm, int nranks, ncclUniqueId id, int rank),
                 (comm, nranks, id, rank))
TPT_NCCL_FORWARD(ncclCommInitRankConfig,
                 (ncclComm_t * comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config),
                 (comm, nranks, id, rank, config))
TPT_NCCL_FORWARD(ncclCommDestroy, (ncclComm_t comm), (comm))
TPT_NCCL_FORWARD(ncclCommAbort, (ncclComm_t comm), (comm))
TPT_NCCL_FORWARD(ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t * async_error), (comm, async_error))
TPT_NCCL_FORWARD(ncclAllReduce,
                 (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                  ncclComm_t comm, cudaStream_t stream),
                 (sendbuff, recvbuff, count, datatype, op, comm, stream))
TPT_NCCL_FORWARD(ncclAllGather,
                 (const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype, ncclComm_t comm,
                  cudaStream_t stream),
                 (sendbuff, recvbuff, sendcount, datatype, comm, stream))

extern "C" const char* ncclGetErrorString(ncclResult_t result) {
  static auto fn = Sym<const char* (*)(ncclResult_t)>("ncclGetErrorString");
  return fn ? fn(result) : Nccl().message.c_str();
}

extern "C" const char* ncclGetLastError(ncclComm_t comm) {
  static auto fn = Sym<const char* (*)(ncclComm_t)>("ncclGetLastError");
  return fn ? fn(comm) : Nccl().message.c_str();
}
