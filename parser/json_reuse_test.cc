#include "parser/json_reuse.h"

#include <gtest/gtest.h>

namespace tpt {
namespace {

using nlohmann::json;

TEST(ObjectFiller, ReplacesTheLastRoundsKeysAndErasesStaleOnes) {
  json obj = {{"a", 1}, {"stale", "x"}, {"s", "old text that is long enough to be on the heap"}};
  const std::string* s_buffer_owner = &obj["s"].get_ref<std::string&>();
  ObjectFiller f;
  f.Begin(&obj);
  f.Set("a", int64_t{2});
  f.SetString("s", "new");
  f.Set("b", 0.5);
  f.End();
  EXPECT_EQ(obj, json({{"a", 2}, {"s", "new"}, {"b", 0.5}}));
  // The string was assigned in place (same std::string object in the same node).
  EXPECT_EQ(&obj["s"].get_ref<std::string&>(), s_buffer_owner);
}

TEST(ObjectFiller, AKeySetTwiceCountsOnce) {
  // Two keys before, one key set twice: "old" is stale and must go.
  json obj = {{"k", 1}, {"old", 2}};
  ObjectFiller f;
  f.Begin(&obj);
  f.Set("k", int64_t{3});
  f.SetCopy("k", json("v"));
  f.End();
  EXPECT_EQ(obj, json({{"k", "v"}}));
}

TEST(ObjectFiller, MakesAnObjectOfANonObject) {
  json obj;  // null
  ObjectFiller f;
  f.Begin(&obj);
  f.End();
  EXPECT_TRUE(obj.is_object());
  EXPECT_TRUE(obj.empty());
  f.Begin(&obj);
  f.SetString("x", "y");
  f.End();
  EXPECT_EQ(obj, json({{"x", "y"}}));
}

TEST(AssignReusing, EqualsTheSourceWhateverWasThere) {
  json src = {{"prefix", {{"id", "sglang.tp"}, {"tp_rank", 3}}}, {"docker", {{"ts", "2025"}}}};
  std::vector<json> dsts = {json(), json::object(), json(5),
                            json({{"prefix", {{"id", "vllm.x"}, {"pid", 7}, {"tp_rank", "a"}}}, {"zz", 1}}),
                            json({{"a", 1}, {"prefix", 3}})};
  for (json& d : dsts) {
    AssignReusing(&d, src);
    EXPECT_EQ(d, src);
  }
  json empty = json::object();
  json d = src;
  AssignReusing(&d, empty);
  EXPECT_EQ(d, empty);
}

TEST(AssignReusing, KeepsNodesWhereKeysRepeat) {
  json src = {{"prefix", {{"id", "b"}}}};
  json dst = {{"prefix", {{"id", "a"}}}};
  const json* node = &dst["prefix"]["id"];
  AssignReusing(&dst, src);
  EXPECT_EQ(dst, src);
  EXPECT_EQ(&dst["prefix"]["id"], node);
}

}  // namespace
}  // namespace tpt

namespace tpt {
namespace {

TEST(ObjectFiller, InOrderThenOutOfOrderKeepsExactlyTheKeysSet) {
  // In order (a, c), then a key before the walk (b, new), then one after (e).
  json obj = {{"a", 1}, {"c", 2}, {"d", 3}, {"e", 4}, {"f", 5}};
  ObjectFiller f;
  f.Begin(&obj);
  f.Set("a", int64_t{10});
  f.Set("c", int64_t{30});
  f.Set("b", int64_t{20});
  f.Set("e", int64_t{50});
  f.End();
  EXPECT_EQ(obj, json({{"a", 10}, {"b", 20}, {"c", 30}, {"e", 50}}));
  // The same keys again, in order: nothing stale, nothing added.
  f.Begin(&obj);
  for (const char* k : {"a", "b", "c"}) f.Set(k, int64_t{1});
  f.End();
  EXPECT_EQ(obj, json({{"a", 1}, {"b", 1}, {"c", 1}}));
}

}  // namespace
}  // namespace tpt

#include <cstring>

#include "parser/format_set.h"

namespace tpt {
namespace {

TEST(SameBytes, EveryLengthAndEveryPlace) {
  for (size_t n = 0; n <= 40; ++n) {
    std::string a(n, 'x');
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<char>('a' + i % 26);
    std::string b = a;
    EXPECT_TRUE(SameBytes(a.data(), b.data(), n)) << n;
    for (size_t i = 0; i < n; ++i) {
      b[i] ^= 1;
      EXPECT_FALSE(SameBytes(a.data(), b.data(), n)) << n << " at " << i;
      b[i] ^= 1;
    }
  }
  EXPECT_FALSE(SameText("abc", "abcd"));
  EXPECT_TRUE(SameText("", ""));
}

TEST(ObjectFiller, TypedSettersOverwriteOtherTypes) {
  // A key's type may change from round to round; an unsigned (as parsed
  // JSON numbers are) must become a signed int, -0.0 must stay -0.0.
  json obj = json::parse(R"({"i": 5, "d": 0.0, "b": "text", "s": 3, "u": true})");
  ASSERT_TRUE(obj["i"].is_number_unsigned());
  ObjectFiller f;
  f.Begin(&obj);
  f.SetBool("b", false);
  f.SetCopy("d", json(-0.0));
  f.Set("i", int64_t{-7});
  f.SetString("s", "x");
  f.Set("u", 2.5);
  f.End();
  EXPECT_EQ(obj.dump(), R"({"b":false,"d":-0.0,"i":-7,"s":"x","u":2.5})");
  EXPECT_TRUE(obj["i"].is_number_integer() && !obj["i"].is_number_unsigned());
  // Same types again: in place, the same nodes.
  const json* node = &obj["s"];
  f.Begin(&obj);
  f.SetBool("b", true);
  f.SetCopy("d", json(1.5));
  f.Set("i", int64_t{8});
  f.SetString("s", "a string long enough to live on the heap");
  f.Set("u", 3.5);
  f.End();
  EXPECT_EQ(obj.dump(), R"({"b":true,"d":1.5,"i":8,"s":"a string long enough to live on the heap","u":3.5})");
  EXPECT_EQ(&obj["s"], node);
}

TEST(ObjectFiller, AscendingKeysDropTheOnesPassedOver) {
  json obj = {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"f", 6}};
  ObjectFiller f;
  f.Begin(&obj);
  f.Set("a", int64_t{10});
  f.Set("c", int64_t{30});  // b passed over
  f.Set("e", int64_t{50});  // d passed over, e new before f
  f.End();                  // f stale
  EXPECT_EQ(obj, json({{"a", 10}, {"c", 30}, {"e", 50}}));
  // Passed over, then set out of order after all: kept.
  f.Begin(&obj);
  f.Set("c", int64_t{3});
  f.Set("a", int64_t{1});
  f.End();
  EXPECT_EQ(obj, json({{"a", 1}, {"c", 3}}));
}

TEST(ObjectFiller, ErasedNodesComeBackWithTheNewValueOnly) {
  // A key erased by one round is kept aside with its value; the next round
  // inserting it (or another key, in its node) must see only what it sets.
  json obj = {{"p", {{"date", "2025-10-14"}, {"tp_rank", 3}}}, {"x", "old"}};
  ObjectFiller f, inner;
  f.Begin(&obj);
  f.End();
  EXPECT_EQ(obj, json::object());
  f.Begin(&obj);
  f.SetString("y", "new");  // may reuse x's or p's node
  inner.Begin(&f.Slot("p"));
  inner.Set("pid", int64_t{9});
  inner.End();
  f.End();
  EXPECT_EQ(obj, json({{"p", {{"pid", 9}}}, {"y", "new"}}));
  f.Begin(&obj);
  f.Set("x", int64_t{1});
  f.End();
  EXPECT_EQ(obj, json({{"x", 1}}));
}

TEST(ObjectFiller, TakeNodeGivesAKeptAsideNodeOfThatKeyFirstThenAnyThenAFreshOne) {
  json obj = {{"a", 1}, {"prefix", {{"tp_rank", 3}}}};
  ObjectFiller f;
  f.Begin(&obj);
  f.End();  // both nodes kept aside, values and all
  EXPECT_EQ(obj, json::object());
  auto node = f.TakeNode("prefix");
  ASSERT_FALSE(node.empty());
  EXPECT_EQ(node.key(), "prefix");
  EXPECT_EQ(node.mapped(), json({{"tp_rank", 3}}));  // a leftover: the caller refills it
  auto other = f.TakeNode("prefix");  // no "prefix" left: "a"'s node, re-keyed
  ASSERT_FALSE(other.empty());
  EXPECT_EQ(other.key(), "prefix");
  auto fresh = f.TakeNode("prefix");  // none kept: a new node
  ASSERT_FALSE(fresh.empty());
  EXPECT_EQ(fresh.key(), "prefix");
  EXPECT_TRUE(fresh.mapped().is_null());
  // A taken node goes into another object; the filler's next rounds work on.
  json elsewhere = json::object();
  elsewhere.get_ref<json::object_t&>().insert(std::move(node));
  EXPECT_EQ(elsewhere, json({{"prefix", {{"tp_rank", 3}}}}));
  f.Begin(&obj);
  f.Set("b", int64_t{2});
  f.End();
  EXPECT_EQ(obj, json({{"b", 2}}));
}

TEST(ObjectFiller, RefilledWrapperEqualsAFreshOneForInterleavedPrefixes) {
  // StripLine refills one recycled wrapper object line after line; prefixes
  // of two servers interleave (different keys), with a line of none between.
  auto formats = FormatSet::LoadBuiltin();
  ASSERT_TRUE(formats.ok()) << formats.status().message();
  const std::vector<std::string> lines = {
      "[2025-10-14 10:00:00 TP0] Decode batch. #running-req: 1",
      "INFO 10-14 10:00:01 [loggers.py:123] Engine 000: Avg prompt throughput: 1.0 tokens/s",
      "[2025-10-14 10:00:02 TP3] Decode batch. #running-req: 2",
      "plain text with no prefix",
      "[2025-10-15 00:00:00 TP1] Prefill batch. #new-seq: 1",
      "INFO 10-14 10:00:03 [loggers.py:123] Engine 000: Avg prompt throughput: 2.0 tokens/s",
      "INFO 10-14 10:00:03 [loggers.py:124] Engine 000: Avg prompt throughput: 2.0 tokens/s",
      "[2025-10-14 10:00:02 TP3] Decode batch. #running-req: 2",
  };
  LineMeta reused;
  for (int pass = 0; pass < 3; ++pass) {
    for (const std::string& line : lines) {
      reused.Reset();
      auto got = formats->StripLine(line, &reused);
      LineMeta fresh;
      auto want = formats->StripLine(line, &fresh);
      EXPECT_EQ(got.begin, want.begin) << line;
      EXPECT_EQ(reused.wrapper.dump(), fresh.wrapper.dump()) << line;
      EXPECT_EQ(reused.ts.has_value(), fresh.ts.has_value()) << line;
      if (reused.ts && fresh.ts) {
        EXPECT_EQ(reused.ts->value, fresh.ts->value) << line;
      }
      // Hand the wrapper to an "event" and take that event's old one, as the
      // stream parser does, so objects of both shapes circulate.
      static json spare = json::object();
      reused.wrapper.swap(spare);
    }
  }
}

}  // namespace
}  // namespace tpt
