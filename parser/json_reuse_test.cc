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
