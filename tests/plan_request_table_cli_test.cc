// plan_request_table_cli_test.cc: `tptriage plan` prices SGLang's per-request token table
// (ReqToTokenPool, memory/sglang_request_table.cc) in the ledger: a Llama-4-Scout-shaped model
// at its 10,485,760 positions on 8 x H100 fails naming the table, with remedies that are each
// planned again; at a 131,072 context the table sits inside the reserved slice and it fits.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"
#include "tests/temp_dir_test.h"

namespace {

using tpt::test::CmdResult;
using tpt::test::Quote;

// The published Llama-4-Scout-17B-16E shapes (text: 48 layers, hidden 5120, 40/8 heads x 128,
// 16 experts + a shared one, chunked attention of 8192, 10,485,760 positions; vision: 34
// layers of 1408), written here in Hugging Face's config.json layout.
constexpr char kScoutConfig[] = R"({
  "architectures": ["Llama4ForConditionalGeneration"],
  "model_type": "llama4",
  "torch_dtype": "bfloat16",
  "text_config": {
    "model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
    "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
    "interleave_moe_layer_step": 1, "attention_chunk_size": 8192, "max_position_embeddings": 10485760,
    "vocab_size": 202048, "torch_dtype": "bfloat16",
    "rope_scaling": {"factor": 16.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"}
  },
  "vision_config": {
    "model_type": "llama4_vision_model", "hidden_size": 1408, "intermediate_size": 5632,
    "num_hidden_layers": 34, "num_attention_heads": 16, "image_size": 336, "patch_size": 14,
    "vision_output_dim": 4096
  }
})";

class PlanRequestTableCliTest : public tpt::test::TempDirTest {
 protected:
  std::string Base() {
    Write("scout/config.json", kScoutConfig);
    return "--framework sglang --server-version 0.4.5.post3 --gpu H100 --tp 8 --model " + Quote(Path("scout"));
  }
  static nlohmann::json Json(const std::string& args, int* rc = nullptr) {
    CmdResult r = tpt::test::Tptriage("plan " + args + " --format json", false);
    if (rc) *rc = r.rc;
    return nlohmann::json::parse(r.out, nullptr, false);
  }
};

// --context-length unset: SGLang 0.4.5.post3 takes the 10,485,760 positions, and its table of
// 2,049 x 10,485,764 int32 (80.04 GiB, the allocation sgl-project/sglang#5755 logs) cannot come
// out of the ~21 GiB the fraction keeps back. Before: "fits", with a warning that the pool is
// shorter than the context.
TEST_F(PlanRequestTableCliTest, TenMillionPositionsFailNamingTheTable) {
  const std::string base = Base();
  int rc = -1;
  auto j = Json(base, &rc);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(rc, 1);
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_TRUE(j["outcome_certain"].get<bool>());
  EXPECT_EQ(j["failure"], "kv_pool_no_room");
  const std::string error = j["error"];
  EXPECT_NE(error.find("request table (ReqToTokenPool, 2,049 x 10,485,764 int32) of 80.04 GiB"), std::string::npos)
      << error;
  EXPECT_NE(error.find("'Tried to allocate 80.04 GiB'"), std::string::npos) << error;
  EXPECT_EQ(j["figures"]["request_table_bytes"].get<int64_t>(), 85941321744);
  EXPECT_LT(j["ledger"][0]["left_bytes"].get<double>(), -50.0 * (1 << 30));  // short by the table less the slice
  const std::string text = tpt::test::Tptriage("plan " + base, false).out;
  EXPECT_NE(text.find("  request table          80.04   2,049 x 10,485,764 int32, inside reserved"),
            std::string::npos) << text;
  // A shorter context, then fewer request slots; no TP or FP8 (the per-rank table and slice
  // stay). Each remedy, planned with the CLI, starts.
  ASSERT_GE(j["remedy"].size(), 2u) << j["remedy"].dump(1);
  EXPECT_EQ(j["remedy"][0]["flag"], "--context-length");
  EXPECT_EQ(j["remedy"][1]["flag"], "--max-running-requests");
  const int64_t ctx = std::stoll(j["remedy"][0]["value"].get<std::string>());
  EXPECT_GE(ctx, 131072);
  EXPECT_LT(ctx, 10485760);
  for (const auto& r : j["remedy"]) {
    const std::string flag = r["flag"], value = r["value"], why = r["why"];
    EXPECT_NE(flag, "--tp");
    EXPECT_NE(why.find("(checked with this plan)"), std::string::npos) << why;
    int fixed_rc = -1;
    auto fixed = Json(base + " " + flag + " " + value, &fixed_rc);
    ASSERT_FALSE(fixed.is_discarded());
    EXPECT_TRUE(fixed["fits"].get<bool>()) << flag << " " << value << ": " << fixed["error"];
    EXPECT_EQ(fixed_rc, 0);
  }
}

// At 131,072 tokens the table is 4,097 x 131,076 int32 (1.6M pool tokens / 131,072 x 512 =
// 6,258 slots, capped at 4,096, + 1 row) = 2.00 GiB, paid from the 21 GiB slice: it fits and
// the ledger balances as before.
TEST_F(PlanRequestTableCliTest, A128kContextFitsWithTheTableInsideReserved) {
  int rc = -1;
  auto j = Json(Base() + " --context-length 131072", &rc);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(j["fits"].get<bool>()) << j["error"];
  EXPECT_EQ(j["figures"]["request_table_rows"].get<int64_t>(), 4097);
  EXPECT_EQ(j["figures"]["request_table_columns"].get<int64_t>(), 131076);
  EXPECT_NEAR(j["ledger"][0]["left_bytes"].get<double>(), 0, 0.01 * (1 << 30));
}

// Llama-3.1-8B at its 131,072 positions on an L4 with --mem-fraction-static 0.97: the 0.65 GiB
// slice cannot hold the 1.00 GiB table (2,049 x 131,076 int32), and a shorter context or fewer
// slots would only start the server inside no headroom: the fraction that keeps SGLang's own
// headroom beside the table comes first.
TEST_F(PlanRequestTableCliTest, AFractionWithoutHeadroomIsRemediedByTheFractionFirst) {
  const std::string base =
      "--framework sglang --server-version 0.4.6 --gpu L4 --model " + tpt::test::SampleModel("llama-3.1-8b-instruct");
  auto j = Json(base + " --mem-fraction-static 0.97");
  ASSERT_FALSE(j.is_discarded());
  EXPECT_FALSE(j["fits"].get<bool>());
  EXPECT_NE(j["error"].get<std::string>().find("of 1.00 GiB a rank"), std::string::npos) << j["error"];
  ASSERT_GE(j["remedy"].size(), 2u) << j["remedy"].dump(1);
  EXPECT_EQ(j["remedy"][0]["flag"], "--mem-fraction-static");
  EXPECT_NE(j["remedy"][0]["why"].get<std::string>().find("(SGLang's own headroom)"), std::string::npos)
      << j["remedy"][0]["why"];
  EXPECT_NE(j["remedy"][1]["why"].get<std::string>().find("the server only starts"), std::string::npos)
      << j["remedy"][1]["why"];
  auto fixed = Json(base + " --mem-fraction-static " + j["remedy"][0]["value"].get<std::string>());
  ASSERT_FALSE(fixed.is_discarded());
  EXPECT_TRUE(fixed["fits"].get<bool>()) << fixed["error"];
}

}  // namespace
