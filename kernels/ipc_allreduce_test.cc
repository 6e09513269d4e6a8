// ipc_allreduce_test.cc: the custom all-reduce against a host reference, with
// integer-valued inputs (exact in bf16 and fp32, so results must match bit
// for bit), for 2, 4 and 8 ranks co-located on one GPU, one-shot and two-shot,
// eager and inside a CUDA graph with registered buffers. Label: gpu.
#include "kernels/custom_allreduce.h"

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace tpt::kernels {
namespace {

bool HaveGpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

int SmCount() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  return sms;
}

// Rank r's element i: an integer in [-16, 16] (sums of 8 stay exact in bf16).
float InputValue(int r, size_t i) { return float(int((i * 7 + r * 13 + (i >> 9)) % 33) - 16); }

std::vector<uint16_t> ToBf16(const std::vector<float>& v) {
  std::vector<uint16_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    out[i] = uint16_t(bits >> 16);  // exact for small integers
  }
  return out;
}
float FromBf16(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

struct Case {
  int world;
  Algo algo;
  DType dtype;
  size_t bytes;
  bool graph;
};

std::string Name(const Case& c) {
  return std::to_string(c.world) + "ranks " + (c.algo == Algo::kOneShot ? "one-shot " : "two-shot ") +
         (c.dtype == DType::kFloat32 ? "f32 " : "bf16 ") + std::to_string(c.bytes) + "B" + (c.graph ? " graph" : " eager");
}

// Runs one case; returns "" or the first mismatch.
std::string RunCase(const Case& c) {
  const size_t elem = DTypeBytes(c.dtype);
  const size_t count = c.bytes / elem;
  auto group = ColocatedGroup::Create(c.world, std::max<size_t>(c.bytes, 1 << 20), SmCount());
  if (!group.ok()) return group.status().ToString();
  ColocatedGroup& g = **group;
  std::vector<DeviceBuffer> in, out;
  std::vector<float> want(count, 0.f);
  for (int r = 0; r < c.world; ++r) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) {
      v[i] = InputValue(r, i);
      want[i] += v[i];
    }
    auto bi = DeviceBuffer::Allocate(c.bytes);
    auto bo = DeviceBuffer::Allocate(c.bytes);
    if (!bi.ok() || !bo.ok()) return "allocation failed";
    if (c.dtype == DType::kFloat32) {
      cudaMemcpy(bi->get(), v.data(), c.bytes, cudaMemcpyHostToDevice);
    } else {
      auto b = ToBf16(v);
      cudaMemcpy(bi->get(), b.data(), c.bytes, cudaMemcpyHostToDevice);
    }
    cudaMemset(bo->get(), 0xff, c.bytes);  // poison: NaN in both types
    in.push_back(std::move(*bi));
    out.push_back(std::move(*bo));
  }
  if (!c.graph) {
    for (int r = 0; r < c.world; ++r) {
      Status s = g.rank(r).AllReduce(in[r].get(), out[r].get(), count, c.dtype, c.algo, g.stream(r));
      if (!s.ok()) return s.ToString();
    }
  } else {
    // One graph: fork to every rank's stream, two all-reduces per rank (the
    // second on the first's output, so registration of both is exercised).
    std::vector<DeviceBuffer> mid;  // allocated before capture (no cudaMalloc while capturing)
    for (int r = 0; r < c.world; ++r) {
      auto m = DeviceBuffer::Allocate(c.bytes);
      if (!m.ok()) return "allocation failed";
      mid.push_back(std::move(*m));
    }
    cudaStream_t s0 = g.stream(0);
    cudaEvent_t fork, join[kMaxRanks];
    cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
    for (int r = 0; r < c.world; ++r) cudaEventCreateWithFlags(&join[r], cudaEventDisableTiming);
    if (cudaStreamBeginCapture(s0, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return "begin capture failed";
    cudaEventRecord(fork, s0);
    std::string err;
    for (int r = 1; r < c.world; ++r) cudaStreamWaitEvent(g.stream(r), fork, 0);
    for (int r = 0; r < c.world && err.empty(); ++r) {
      Status s = g.rank(r).AllReduce(in[r].get(), mid[r].get(), count, c.dtype, c.algo, g.stream(r));
      if (!s.ok()) err = s.ToString();
    }
    // Second round: sum of sums = world * want.
    for (int r = 0; r < c.world && err.empty(); ++r) {
      Status s = g.rank(r).AllReduce(mid[r].get(), out[r].get(), count, c.dtype, c.algo, g.stream(r));
      if (!s.ok()) err = s.ToString();
    }
    for (int r = 1; r < c.world; ++r) {
      cudaEventRecord(join[r], g.stream(r));
      cudaStreamWaitEvent(s0, join[r], 0);
    }
    cudaGraph_t graph;
    cudaError_t e = cudaStreamEndCapture(s0, &graph);
    if (!err.empty()) return err;
    if (e != cudaSuccess) return std::string("end capture: ") + cudaGetErrorString(e);
    Status reg = g.RegisterCapturedBuffers();
    if (!reg.ok()) return reg.ToString();
    cudaGraphExec_t exec;
    if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) return "instantiate failed";
    for (int rep = 0; rep < 3; ++rep) cudaGraphLaunch(exec, s0);  // replays reuse the flags' epochs
    Status w = WaitStream(s0, 20.0, nullptr, "graph replay");
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaEventDestroy(fork);
    for (int r = 0; r < c.world; ++r) cudaEventDestroy(join[r]);
    if (!w.ok()) return w.ToString();
    for (float& x : want) x *= c.world;
  }
  for (int r = 0; r < c.world; ++r) {
    Status w = WaitStream(g.stream(r), 20.0, nullptr, "all-reduce");
    if (!w.ok()) return w.ToString();
  }
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) return cudaGetErrorString(e);
  for (int r = 0; r < c.world; ++r) {
    std::vector<float> got(count);
    if (c.dtype == DType::kFloat32) {
      cudaMemcpy(got.data(), out[r].get(), c.bytes, cudaMemcpyDeviceToHost);
    } else {
      std::vector<uint16_t> b(count);
      cudaMemcpy(b.data(), out[r].get(), c.bytes, cudaMemcpyDeviceToHost);
      for (size_t i = 0; i < count; ++i) got[i] = FromBf16(b[i]);
    }
    for (size_t i = 0; i < count; ++i) {
      if (got[i] != want[i]) {
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + ": got " + std::to_string(got[i]) +
               " want " + std::to_string(want[i]);
      }
    }
  }
  return "";
}

class AllreduceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveGpu()) GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount failed or returned 0)";
  }
};

// Sizes: one pack, packs not divisible by the world size (two-shot's last
// rank takes the remainder), decode sizes, and beyond 36 blocks x 512 threads.
const size_t kSizes[] = {16, 48, 16 * 37, 8 << 10, (256 << 10) + 16 * 3, 1 << 20, 8 << 20};

TEST_F(AllreduceTest, EagerMatchesReferenceExactly) {
  for (int world : {2, 4, 8}) {
    for (Algo algo : {Algo::kOneShot, Algo::kTwoShot}) {
      for (DType dt : {DType::kBFloat16, DType::kFloat32}) {
        for (size_t bytes : kSizes) {
          Case c{world, algo, dt, bytes, false};
          EXPECT_EQ(RunCase(c), "") << Name(c);
        }
      }
    }
  }
}

TEST_F(AllreduceTest, GraphWithRegisteredBuffersMatchesReferenceExactly) {
  for (int world : {2, 4, 8}) {
    for (Algo algo : {Algo::kOneShot, Algo::kTwoShot}) {
      for (size_t bytes : {size_t(16), size_t(16 * 37), size_t(64 << 10), size_t(2 << 20)}) {
        Case c{world, algo, DType::kBFloat16, bytes, true};
        EXPECT_EQ(RunCase(c), "") << Name(c);
      }
    }
  }
}

TEST_F(AllreduceTest, RejectsOversizedMessagesAndOddWorlds) {
  auto g = ColocatedGroup::Create(3, 1 << 20, SmCount());
  EXPECT_FALSE(g.ok());
  auto g2 = ColocatedGroup::Create(2, 1 << 20, SmCount());
  ASSERT_TRUE(g2.ok()) << g2.status().ToString();
  auto big = DeviceBuffer::Allocate(2 << 20);
  ASSERT_TRUE(big.ok());
  Status s = (*g2)->rank(0).AllReduce(big->get(), big->get(), (2 << 20) / 2, DType::kBFloat16, Algo::kOneShot,
                                      (*g2)->stream(0));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // 17 bf16 elements are not whole 16-byte packs.
  EXPECT_EQ(LaunchAllreduce(Algo::kOneShot, DType::kBFloat16, 2, 0, nullptr, RankSignals{}, nullptr, 17, 1, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace

TEST(ServerDefaultAlgo, FollowsVllmSwitchover) {
  EXPECT_EQ(ServerDefaultAlgo(2, 64 << 20), Algo::kOneShot);
  EXPECT_EQ(ServerDefaultAlgo(4, (512 << 10) - 16), Algo::kOneShot);
  EXPECT_EQ(ServerDefaultAlgo(4, 512 << 10), Algo::kTwoShot);
  EXPECT_EQ(ServerDefaultAlgo(8, (256 << 10) - 16), Algo::kOneShot);
  EXPECT_EQ(ServerDefaultAlgo(8, 256 << 10), Algo::kTwoShot);
}

TEST(MaxBlocksPerRank, KeepsAllRanksResident) {
  EXPECT_EQ(MaxBlocksPerRank(132, 8), 16);
  EXPECT_EQ(MaxBlocksPerRank(132, 2), 36);
  EXPECT_EQ(MaxBlocksPerRank(4, 8), 1);
}

}  // namespace tpt::kernels
