// strings_test.cc: the shared ASCII helpers.
#include "base/strings.h"

#include <gtest/gtest.h>

namespace tpt {
namespace {

TEST(Strings, LowerAndTrimAreAsciiOnly) {
  EXPECT_EQ(Lower("NCCL WARN \xC3\x84"), "nccl warn \xC3\x84");
  EXPECT_EQ(Trim("  94 GiB \t\r\n"), "94 GiB");
  EXPECT_EQ(Trim(" \t "), "");
}

TEST(Strings, SplitListFlattensRepeatedCommaListsAndDropsEmptyItems) {
  EXPECT_EQ(SplitList({"cuda_oom,nccl_warn", "hang"}), (std::vector<std::string>{"cuda_oom", "nccl_warn", "hang"}));
  EXPECT_EQ(SplitList({",a,,b,", ""}), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(SplitList({"0:1:2"}, ':'), (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_TRUE(SplitList({}).empty());
}

}  // namespace
}  // namespace tpt
