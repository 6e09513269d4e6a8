// sim_backend_test.cc: the simulated device's collectives are computed across
// its ranks (one backend per rank, as the per-process path runs them), not
// answered with the caller's own value.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "repro/backend.h"

namespace tpt::repro {
namespace {

namespace fs = std::filesystem;

struct RankOut {
  int64_t free = 0, min = 0;
  std::vector<int64_t> all;
  std::string error;
};

// `world` ranks, each a simulated device in its own thread, where rank r sees
// r x `skew` less free memory; every rank calls AllReduceMin then AllGather.
std::vector<RankOut> RunRanks(int world, int64_t skew, const std::string& id_file) {
  std::vector<RankOut> out(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      SimulatedDevice d;
      d.real_ranks_free_skew_bytes = skew;
      auto be = MakeSimulatedBackend(d);
      RankLayout l;
      l.world = world;
      l.rank = l.local_rank = r;
      l.real_ranks = world;
      l.launcher = "spawn";
      l.nccl_id_file = id_file;
      RankOut& o = out[r];
      if (Status s = be->InitContext(l); !s.ok()) return void(o.error = s.message());
      auto m = be->GetMemInfo();
      if (!m.ok()) return void(o.error = m.status().message());
      o.free = m->free_bytes;
      auto mn = be->AllReduceMin(o.free);
      if (!mn.ok()) return void(o.error = mn.status().message());
      o.min = *mn;
      auto all = be->AllGather(o.free);
      if (!all.ok()) return void(o.error = all.status().message());
      o.all = *all;
    });
  }
  for (auto& t : threads) t.join();
  return out;
}

TEST(SimulatedCollectives, MinAndGatherAcrossTheRanks) {
  fs::path dir = fs::temp_directory_path() / ("tpt_simcoll_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const int64_t skew = int64_t(3) << 30;
  std::vector<RankOut> out = RunRanks(4, skew, (dir / "nccl.id").string());
  fs::remove_all(dir);
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(out[r].error, "") << "rank " << r;
    EXPECT_EQ(out[r].free, out[0].free - r * skew) << "rank " << r << " sees r x skew less";
    // MIN is the least free rank's (rank 3), on every rank, not the caller's own.
    EXPECT_EQ(out[r].min, out[3].free) << "rank " << r;
    ASSERT_EQ(out[r].all.size(), 4u) << "rank " << r;
    for (int k = 0; k < 4; ++k) EXPECT_EQ(out[r].all[k], out[k].free) << "rank " << r << " gathered rank " << k;
  }
}

TEST(SimulatedCollectives, OneProcessForAllRanksExchangesNothing) {
  SimulatedDevice d;
  d.real_ranks_free_skew_bytes = int64_t(1) << 30;
  auto be = MakeSimulatedBackend(d);
  RankLayout l;
  l.world = 8;
  l.colocated = true;
  ASSERT_TRUE(be->InitContext(l).ok());
  EXPECT_EQ(*be->AllReduceMin(42), 42);
  EXPECT_EQ(*be->AllGather(42), std::vector<int64_t>{42});
  // Several processes and no rendezvous file: an error, not a made-up answer.
  auto lone = MakeSimulatedBackend(d);
  RankLayout p;
  p.world = p.real_ranks = 2;
  ASSERT_TRUE(lone->InitContext(p).ok());
  auto mn = lone->AllReduceMin(42);
  ASSERT_FALSE(mn.ok());
  EXPECT_NE(mn.status().message().find("rendezvous file"), std::string::npos) << mn.status().message();
}

}  // namespace
}  // namespace tpt::repro
