// pickle_reader_test.cc: the safe pickle reader on torch's own dumps and on
// pickles that would construct objects.
#include "parser/pickle_reader.h"

#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "parser/test_files.h"

namespace tpt {
namespace {

const char* kRank0 = "samples/rules/fr_hang_wavefront/pos_hang_2ranks_pickle/nccl_trace_rank_0";

TEST(PickleReader, ReadsTorchsFlightRecorderDump) {
  const std::string bytes = SourceFile(kRank0);
  ASSERT_GT(bytes.size(), 1000u);
  std::string warning;
  auto v = ReadPickle(bytes, "rank0", &warning);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_EQ((*v)["version"], "2.10");
  EXPECT_EQ((*v)["pg_status"]["0"]["last_enqueued_collective"], 4);
  EXPECT_EQ((*v)["pg_status"]["0"]["last_started_collective"], -1);  // BININT, negative
  const auto& entries = (*v)["entries"];
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[3]["collective_seq_id"], 4);
  EXPECT_EQ(entries[3]["profiling_name"], "gloo:all_reduce");
  EXPECT_EQ(entries[3]["process_group"], nlohmann::json::array({"0", "default_pg"}));  // TUPLE2
  EXPECT_EQ(entries[3]["input_sizes"], nlohmann::json::parse("[[4096]]"));
  EXPECT_TRUE(entries[3]["time_discovered_started_ns"].is_null());  // NONE
  EXPECT_EQ(entries[3]["retired"], false);
  EXPECT_GT(entries[3]["time_created_ns"].get<int64_t>(), int64_t{1700000000} * 1000000000);  // LONG1
  // Frame dicts are memo references (BINGET) to the dicts the first record filled.
  ASSERT_GE(entries[3]["frames"].size(), 3u);
  EXPECT_EQ(entries[3]["frames"][2]["name"], "worker");
  EXPECT_EQ(entries[3]["frames"][2]["line"], 44);
  EXPECT_EQ(entries[0]["frames"][2]["line"], 34);
}

TEST(PickleReader, RefusesGlobalAndReduceByNameAndOffset) {
  // The classic: os.system('ls') through GLOBAL + REDUCE.
  const std::string global("\x80\x02" "cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.", 31);
  auto v = ReadPickle(global, "evil", nullptr);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("evil: opcode GLOBAL (0x63)"), std::string::npos) << v.status().message();
  EXPECT_NE(v.status().message().find("at byte 2"), std::string::npos) << v.status().message();

  const std::string reduce("\x80\x02]q\x00)R.", 8);
  v = ReadPickle(reduce, "evil", nullptr);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("opcode REDUCE (0x52)"), std::string::npos) << v.status().message();
  EXPECT_NE(v.status().message().find("at byte 6"), std::string::npos) << v.status().message();

  for (auto [op, name] : {std::pair<char, const char*>{'\x93', "STACK_GLOBAL"}, {'b', "BUILD"}, {'\x81', "NEWOBJ"},
                          {'i', "INST"}, {'Q', "BINPERSID"}}) {
    std::string p = std::string("\x80\x02", 2) + op + ".";
    v = ReadPickle(p, "evil", nullptr);
    ASSERT_FALSE(v.ok()) << name;
    EXPECT_NE(v.status().message().find(std::string("opcode ") + name), std::string::npos) << v.status().message();
  }
  // An opcode no torch dump holds is refused too, by its value.
  v = ReadPickle(std::string("\x80\x02U\x01x.", 6), "odd", nullptr);  // SHORT_BINSTRING
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("opcode 0x55"), std::string::npos) << v.status().message();
}

TEST(PickleReader, ACutPickleGivesWhatWasReadAndSaysSo) {
  const std::string bytes = SourceFile(kRank0);
  std::string warning;
  auto v = ReadPickle(bytes.substr(0, bytes.size() - 120), "rank0", &warning);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_NE(warning.find("before its STOP"), std::string::npos) << warning;
  EXPECT_EQ((*v)["version"], "2.10");
  ASSERT_TRUE((*v)["entries"].is_array());
  EXPECT_GE((*v)["entries"].size(), 3u);
  EXPECT_EQ((*v)["entries"][2]["collective_seq_id"], 3);
  // Every prefix reads or fails with a message: never a crash, never a silent empty value.
  for (size_t n = 0; n <= bytes.size(); ++n) {
    std::string w;
    auto p = ReadPickle(bytes.substr(0, n), "rank0", &w);
    if (p.ok()) EXPECT_TRUE(n == bytes.size() || !w.empty()) << n;
    else EXPECT_NE(p.status().message().find("rank0"), std::string::npos) << n;
  }
}

TEST(PickleReader, ValuesOfEveryDataOpcode) {
  // [-1 (LONG1), 1.5 (BINFLOAT), True, None, (1, 2, 3), {'k': 'v'} (SHORT_BINUNICODE), 65535]
  const std::string p("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00(\x8a\x01\xffG?\xf8\x00\x00\x00\x00\x00\x00\x88N"
                      "K\x01K\x02K\x03\x87}\x94\x8c\x01k\x8c\x01vsM\xff\xffl.", 47);
  auto v = ReadPickle(p, "p", nullptr);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(*v, nlohmann::json::parse(R"([-1, 1.5, true, null, [1, 2, 3], {"k": "v"}, 65535])"));
}

TEST(PickleReader, BoundsDepthAndSelfReference) {
  std::string deep("\x80\x02", 2);
  for (int i = 0; i < 100; ++i) deep += "](";
  auto v = ReadPickle(deep, "deep", nullptr);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nested deeper than 64"), std::string::npos) << v.status().message();
  // A list that holds itself (memo reference before its end) is refused, not followed forever.
  v = ReadPickle(std::string("\x80\x02]q\x00h\x00\x61.", 9), "loop", nullptr);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("holds itself"), std::string::npos) << v.status().message();
  // A memo reference to nothing, and a wrong protocol.
  EXPECT_FALSE(ReadPickle(std::string("\x80\x02h\x07.", 5), "m", nullptr).ok());
  EXPECT_FALSE(ReadPickle(std::string("\x80\x09N.", 4), "m", nullptr).ok());
  // Values past the limit are refused (memo references counted again).
  PickleLimits small;
  small.max_nodes = 10;
  EXPECT_FALSE(ReadPickle(SourceFile(kRank0), "big", nullptr, small).ok());
}

// A document converts only what is asked of it, each part as ReadPickle's
// whole conversion gives it, all parts drawing on one budget of values.
TEST(PickleReader, ADocConvertsOnlyThePartsAskedFor) {
  const std::string bytes = SourceFile(kRank0);
  auto whole = ReadPickle(bytes, "rank0", nullptr);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  auto doc = ReadPickleDoc(bytes, "rank0", nullptr);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const PickleRef root = doc->root();
  ASSERT_TRUE(root.is_dict());
  ASSERT_TRUE(root["entries"].is_list());
  EXPECT_EQ(root["entries"].size(), 4u);
  EXPECT_FALSE(root["no such key"]);
  EXPECT_FALSE(root["entries"][4]) << "past the end";
  auto record = root["entries"][3].ToJson();
  ASSERT_TRUE(record.ok()) << record.status().message();
  EXPECT_EQ(*record, (*whole)["entries"][3]);
  EXPECT_EQ(*root["version"].ToJson(), "2.10");
  // Every conversion draws on the document's one budget: a list of 3 ints
  // (4 values) converts 3 times in a budget of 12, not a 4th.
  auto small = ReadPickleDoc(std::string("\x80\x02](K\x01K\x02K\x03" "e.", 12), "small", nullptr,
                             PickleLimits{64, 12, size_t{1} << 22});
  ASSERT_TRUE(small.ok()) << small.status().message();
  size_t asked = 0;
  while (asked < 10 && small->root().ToJson().ok()) ++asked;
  EXPECT_EQ(asked, 3u);
}

// Memo slots: MEMOIZE numbers them in order; a hand-made far index works
// without making a vector that large.
TEST(PickleReader, MemoSlotsNearAndFar) {
  auto v = ReadPickle(std::string("\x80\x04N\x94\x30K\x07\x94\x30(h\x00h\x01l.", 16), "m", nullptr);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->dump(), "[null,7]");
  // LONG_BINPUT 3,000,000, POP, LONG_BINGET 3,000,000.
  v = ReadPickle(std::string("\x80\x02K\x05r\xc0\xc6\x2d\x00\x30j\xc0\xc6\x2d\x00.", 16), "far", nullptr);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->dump(), "5");
  EXPECT_FALSE(ReadPickle(std::string("\x80\x02K\x05r\xc0\xc6\x2d\x00\x30j\xc1\xc6\x2d\x00.", 16), "far", nullptr).ok())
      << "a far slot never filled";
}

}  // namespace
}  // namespace tpt
