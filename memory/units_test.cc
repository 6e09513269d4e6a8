// units_test.cc: versions, dtypes, parameter counts, start-up overhead (sizes: base/units_test.cc).
#include <gtest/gtest.h>

#include "memory/memory_model.h"

namespace tpt::memory {
namespace {

TEST(UnitsTest, ParseVersion) {
  EXPECT_EQ(*ParseVersion("0.4.3.post4"), (std::vector<int>{0, 4, 3}));
  EXPECT_EQ(*ParseVersion("v0.5.2rc1"), (std::vector<int>{0, 5, 2}));
  EXPECT_EQ(*ParseVersion("0.10.1.1"), (std::vector<int>{0, 10, 1, 1}));
  EXPECT_EQ(*ParseVersion("0.11.0+582e4e37.nv25.11"), (std::vector<int>{0, 11, 0}));
  EXPECT_FALSE(ParseVersion("main").ok());
  EXPECT_LT(CompareVersions({0, 4}, {0, 4, 1}), 0);
  EXPECT_EQ(CompareVersions({0, 4, 0}, {0, 4}), 0);
  EXPECT_GT(CompareVersions({0, 10}, {0, 9, 2}), 0);
}

TEST(UnitsTest, ParamCountsAndDtypes) {
  EXPECT_DOUBLE_EQ(*ParseParamCount("70B"), 70e9);
  EXPECT_DOUBLE_EQ(*ParseParamCount("7.6b"), 7.6e9);
  EXPECT_DOUBLE_EQ(*ParseParamCount("350M"), 350e6);
  EXPECT_FALSE(ParseParamCount("70X").ok());
  EXPECT_DOUBLE_EQ(*WeightDtypeBytes("bf16"), 2);
  EXPECT_DOUBLE_EQ(*WeightDtypeBytes("fp8"), 1);
  EXPECT_DOUBLE_EQ(*WeightDtypeBytes("awq"), 0.5);
  EXPECT_FALSE(WeightDtypeBytes("fp7").ok());
  EXPECT_DOUBLE_EQ(*KvDtypeBytes("auto", "bfloat16"), 2);
  EXPECT_DOUBLE_EQ(*KvDtypeBytes("fp8_e5m2"), 1);
  EXPECT_DOUBLE_EQ(*KvDtypeBytes("torch.float8_e4m3fnuz"), 1);
  EXPECT_DOUBLE_EQ(*KvDtypeBytes("fp4_e2m1"), 0.5);
  EXPECT_FALSE(KvDtypeBytes("int3").ok());
  EXPECT_NEAR(WeightsPerRankBytes(70e9, 2, 8) / kGiB, 16.30, 0.01);
}

TEST(UnitsTest, DefaultFreeAtInitSubtractsContextNcclAndCustomAllReduce) {
  EXPECT_DOUBLE_EQ(DefaultFreeAtInit(80 * kGiB, 1), 80 * kGiB - 620.8 * kMiB);
  EXPECT_DOUBLE_EQ(DefaultFreeAtInit(80 * kGiB, 8), 80 * kGiB - (620.8 + 558 + 24) * kMiB);
  EXPECT_DOUBLE_EQ(DefaultFreeAtInit(80 * kGiB, 3), 80 * kGiB - (620.8 + 558) * kMiB);  // no custom AR at tp 3
  EXPECT_EQ(FormatGiB(-25.3 * kGiB), "-25.30 GiB");
}

}  // namespace
}  // namespace tpt::memory
