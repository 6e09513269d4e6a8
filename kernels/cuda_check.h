// cuda_check.h: CUDA runtime errors as tpt::Status, and an RAII owner of
// device memory. Host-only (g++); never included by .cu files.
//
//   TPT_CUDA_RETURN(cudaMemsetAsync(p, 0, n, s));      // -> INTERNAL "file:line: cudaMemsetAsync(...): out of memory"
//   auto buf = tpt::kernels::DeviceBuffer::Allocate(1 << 20);
//   if (!buf.ok()) return buf.status();
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

#include "base/status.h"

namespace tpt::kernels {

inline Status CudaStatus(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return OkStatus();
  std::string msg = std::string(file) + ":" + std::to_string(line) + ": " + what + ": " + cudaGetErrorName(e) +
                    " (" + cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation) return UnavailableError(msg);
  return InternalError(msg);
}

#define TPT_CUDA_STATUS(expr) ::tpt::kernels::CudaStatus((expr), #expr, __FILE__, __LINE__)
#define TPT_CUDA_RETURN(expr) TPT_RETURN_IF_ERROR(TPT_CUDA_STATUS(expr))

// Owns one cudaMalloc allocation; frees it on destruction (errors ignored:
// nothing in kernels/ throws from a destructor).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static StatusOr<DeviceBuffer> Allocate(size_t bytes) {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error state of a failed malloc
      return CudaStatus(e, ("cudaMalloc(" + std::to_string(bytes) + " B)").c_str(), __FILE__, __LINE__);
    }
    return DeviceBuffer(p, bytes);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Reset(); }

  void Reset() {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  DeviceBuffer(void* p, size_t n) : ptr_(p), bytes_(n) {}
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Owns a stream.
class Stream {
 public:
  Stream() = default;
  static StatusOr<Stream> Create() {
    cudaStream_t s = nullptr;
    TPT_CUDA_RETURN(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return Stream(s);
  }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      if (s_) cudaStreamDestroy(s_);
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  cudaStream_t get() const { return s_; }

 private:
  explicit Stream(cudaStream_t s) : s_(s) {}
  cudaStream_t s_ = nullptr;
};

// Waits for `stream` by polling cudaStreamQuery until `deadline_s` seconds
// pass or `*cancel` becomes true: a hang becomes DEADLINE_EXCEEDED, not a
// stuck tool. (A kernel spinning on flags cannot be killed; the caller then
// reports and exits, which tears the context down.)
Status WaitStream(cudaStream_t stream, double deadline_s, const std::atomic<bool>* cancel, const std::string& what);

}  // namespace tpt::kernels
