// units_test.cc: the one size grammar (base/units.h).
#include "base/units.h"

#include <string>

#include <gtest/gtest.h>

namespace tpt {
namespace {

constexpr double kMiB = 1024.0 * 1024, kGiB = kMiB * 1024;

TEST(Units, EveryUnitIsBinaryLikeTheServers) {
  EXPECT_DOUBLE_EQ(*ParseSize("96GiB"), 96 * kGiB);
  EXPECT_DOUBLE_EQ(*ParseSize("9.3G"), 9.3 * kGiB);
  EXPECT_DOUBLE_EQ(*ParseSize("21.70 GB"), 21.7 * kGiB);  // SGLang's "GB" is GiB
  EXPECT_DOUBLE_EQ(*ParseSize("512MiB"), 512 * kMiB);
  EXPECT_DOUBLE_EQ(*ParseSize("512 mb"), 512 * kMiB);
  EXPECT_DOUBLE_EQ(*ParseSize("64K"), 65536);
  EXPECT_DOUBLE_EQ(*ParseSize("3KB"), 3072);
  EXPECT_DOUBLE_EQ(*ParseSize("2T"), 2 * kGiB * 1024);
  EXPECT_DOUBLE_EQ(*ParseSize("  1 TiB \t"), kGiB * 1024);
  EXPECT_DOUBLE_EQ(*ParseSize("4096"), 4096);
  EXPECT_DOUBLE_EQ(*ParseSize("4096B"), 4096);
  EXPECT_DOUBLE_EQ(*ParseSize(".5G"), 0.5 * kGiB);
}

TEST(Units, BadSizesSayWhatToWrite) {
  for (const char* bad : {"", "lots", "-1", "-1GiB", "1e9", "12 parsecs", "5X", "1.2.3G", "GiB", "inf", "nan"}) {
    auto r = ParseSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos) << r.status().message();
  }
  EXPECT_NE(ParseSize("5X").status().message().find("unknown size unit 'x'"), std::string::npos);
  EXPECT_FALSE(ParseSize(std::string(400, '9') + "GiB").ok());  // overflows to inf: an error, not a throw
}

TEST(Units, BareNumberNeedsAUnitWhereAFlagSaysSo) {
  auto r = ParseSize("94", BareNumber::kNeedsUnit);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a size needs a unit, e.g. 94GiB"), std::string::npos) << r.status().message();
  EXPECT_DOUBLE_EQ(*ParseSize("94GiB", BareNumber::kNeedsUnit), 94 * kGiB);
  EXPECT_DOUBLE_EQ(*ParseSize("94", BareNumber::kBytes), 94);
}

TEST(Units, WholeBytes) {
  EXPECT_EQ(*ParseWholeBytes("64K"), 65536u);
  EXPECT_EQ(*ParseWholeBytes("1.5K"), 1536u);
  EXPECT_EQ(*ParseWholeBytes("72.3GiB"), static_cast<uint64_t>(72.3 * kGiB + 0.5));  // rounded to a byte
  EXPECT_EQ(*ParseWholeBytes("16383T"), 16383ull << 40);
  EXPECT_FALSE(ParseWholeBytes("1.5").ok());  // half a byte
  EXPECT_FALSE(ParseWholeBytes("99999999999999999G").ok());  // past 64 bits
  EXPECT_FALSE(ParseWholeBytes("18446744073709551615K").ok());
  EXPECT_FALSE(ParseWholeBytes("-1").ok());
}

// Formats name the unit their server prints; there KB..TB are decimal and
// GB_as_GiB says the server's "GB" is GiB.
TEST(Units, FormatUnitsFollowTheFormatsDeclaration) {
  EXPECT_DOUBLE_EQ(*FormatUnitScale("GB_as_GiB"), kGiB);
  EXPECT_DOUBLE_EQ(*FormatUnitScale("GiB"), kGiB);
  EXPECT_DOUBLE_EQ(*FormatUnitScale("GB"), 1e9);
  EXPECT_DOUBLE_EQ(*FormatUnitScale("MB"), 1e6);
  EXPECT_DOUBLE_EQ(*FormatUnitScale("bytes"), 1);
  EXPECT_DOUBLE_EQ(*FormatUnitScale(""), 1);
  EXPECT_FALSE(FormatUnitScale("parsec").has_value());
}

}  // namespace
}  // namespace tpt
