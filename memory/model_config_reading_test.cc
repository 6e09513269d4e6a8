// model_config_reading_test.cc: no silent fallback in config reading (issue #31). A field
// the planner needs is read, or the architecture's documented default (said in notes), or
// an error naming the field and the file; Hugging Face cache folders and the safetensors
// index/header are followed; every common quantization config is read or refused by name.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "memory/model_config.h"

namespace tpt::memory {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A fresh folder under the system temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tpt_model_XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

bool Has(const std::vector<std::string>& notes, const std::string& s) {
  for (const auto& n : notes) {
    if (n.find(s) != std::string::npos) return true;
  }
  return false;
}

json Llama() {
  return {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"},  {"num_hidden_layers", 4},
          {"hidden_size", 256},                    {"intermediate_size", 512}, {"num_attention_heads", 8},
          {"num_key_value_heads", 2},              {"vocab_size", 1000},       {"max_position_embeddings", 4096},
          {"torch_dtype", "bfloat16"}};
}

TEST(ConfigReadingTest, WrongTypesAndCountsAreErrorsNamingTheFieldNotMissing) {
  json c = Llama();
  c["num_hidden_layers"] = "32";
  auto s = ParseModelConfig(c, "/m/config.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("num_hidden_layers is \"32\" (string)"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("/m/config.json"), std::string::npos);
  EXPECT_EQ(s.status().message().find("missing"), std::string::npos) << s.status().message();
  c = Llama();
  c["num_attention_heads"] = -8;
  s = ParseModelConfig(c, "x.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("num_attention_heads is -8"), std::string::npos) << s.status().message();
  c = Llama();
  c["num_key_value_heads"] = 0;
  s = ParseModelConfig(c, "x.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("num_key_value_heads is 0"), std::string::npos) << s.status().message();
  c = Llama();
  c["intermediate_size"] = 512.5;
  s = ParseModelConfig(c, "x.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("intermediate_size is 512.5"), std::string::npos) << s.status().message();
  // Inside text_config the path says so.
  json v = {{"model_type", "llava"}, {"text_config", Llama()}};
  v["text_config"]["head_dim"] = "128";
  s = ParseModelConfig(v, "x.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("text_config.head_dim"), std::string::npos) << s.status().message();
}

// More KV heads than attention heads, or a count that does not divide them, is no model
// a server loads (transformers' num_key_value_groups, vLLM's attention backends assert
// num_heads % num_kv_heads == 0): an error naming the field and the file, not a plan
// priced on 64 KV heads.
// A vision tower's sizes are read as strictly as the text model's: a zero patch (which
// divided by zero), a string token count or a deepstack list that is not a list is an error
// naming the field, never a tower dropped without a word; the same for a Qwen3-VL processor
// file's largest size.
TEST(ConfigReadingTest, VisionTowerSizesAreErrorsNamingTheField) {
  json q = Llama();
  q["architectures"] = {"Qwen3VLForConditionalGeneration"};
  q["vision_config"] = {{"depth", 27},      {"hidden_size", 1152},       {"intermediate_size", 4304},
                        {"num_heads", 16},  {"out_hidden_size", 256},    {"patch_size", 16},
                        {"spatial_merge_size", 2}, {"temporal_patch_size", 2}, {"deepstack_visual_indexes", {8, 16}}};
  ASSERT_TRUE(ParseModelConfig(q, "q/config.json").ok());
  json bad = q;
  bad["vision_config"]["patch_size"] = 0;
  auto s = ParseModelConfig(bad, "q/config.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("vision_config.patch_size is 0"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("q/config.json"), std::string::npos);
  bad = q;
  bad["vision_config"]["deepstack_visual_indexes"] = "8,16";
  s = ParseModelConfig(bad, "q/config.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("deepstack_visual_indexes"), std::string::npos) << s.status().message();
  json g = Llama();
  g["architectures"] = {"Gemma3ForConditionalGeneration"};
  g["mm_tokens_per_image"] = "256";
  g["vision_config"] = {{"hidden_size", 1152}, {"intermediate_size", 4304}, {"num_hidden_layers", 27},
                        {"num_attention_heads", 16}, {"image_size", 896}, {"patch_size", 14}};
  s = ParseModelConfig(g, "g/config.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("mm_tokens_per_image is \"256\""), std::string::npos) << s.status().message();

  TempDir d;
  Write(d.path() / "config.json", q.dump());
  Write(d.path() / "video_preprocessor_config.json", R"({"size": {"longest_edge": -5}})");
  auto m = LoadModel(d.path().string());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("video_preprocessor_config.json: size.longest_edge is -5"), std::string::npos)
      << m.status().message();
  Write(d.path() / "video_preprocessor_config.json", R"({"size": {"longest_edge": 8589934592}})");
  m = LoadModel(d.path().string());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("not a size a processor resizes to"), std::string::npos) << m.status().message();
}

// Sizes beyond any model are refused by name before a plan is made (a fuzzed config of
// 131,072 layers took 20-40 s a plan).
TEST(ConfigReadingTest, SizesBeyondAnyModelAreErrorsNamingTheField) {
  json c = Llama();
  c["num_hidden_layers"] = 131072;
  auto s = ParseModelConfig(c, "big/config.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("num_hidden_layers is 131072, beyond any model"), std::string::npos)
      << s.status().message();
  c = Llama();
  c["vocab_size"] = int64_t{1} << 30;
  s = ParseModelConfig(c, "big/config.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("vocab_size"), std::string::npos) << s.status().message();
  c = Llama();
  c["num_hidden_layers"] = 160;  // DeepSeek-size depth and beyond stays a model
  EXPECT_TRUE(ParseModelConfig(c, "ok/config.json").ok());
}

TEST(ConfigReadingTest, KvHeadsMustDivideTheAttentionHeads) {
  json c = Llama();
  c["num_key_value_heads"] = 16;  // 8 heads
  auto s = ParseModelConfig(c, "/m/config.json");
  ASSERT_FALSE(s.ok()) << "16 KV heads for 8 attention heads was accepted";
  EXPECT_NE(s.status().message().find("num_key_value_heads is 16"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("num_attention_heads (8)"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("/m/config.json"), std::string::npos);
  c["num_key_value_heads"] = 3;
  s = ParseModelConfig(c, "x.json");
  ASSERT_FALSE(s.ok()) << "3 KV heads for 8 attention heads was accepted";
  json v = {{"model_type", "llava"}, {"text_config", Llama()}};
  v["text_config"]["num_key_value_heads"] = 5;
  s = ParseModelConfig(v, "x.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("text_config.num_key_value_heads"), std::string::npos) << s.status().message();
  for (int kv : {1, 2, 4, 8}) {
    c["num_key_value_heads"] = kv;
    EXPECT_TRUE(ParseModelConfig(c, "x.json").ok()) << kv;
  }
}

TEST(ConfigReadingTest, NoIntermediateSizeIsNotAnMlpOfZero) {
  json c = Llama();
  c["model_type"] = "qwen3";  // Qwen3Config's default is not in our table: no width to say
  c.erase("intermediate_size");
  auto s = ParseModelConfig(c, "x.json");
  ASSERT_FALSE(s.ok()) << "an MLP of 0 was accepted";
  EXPECT_NE(s.status().message().find("intermediate_size is missing"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("'qwen3'"), std::string::npos);
  // LlamaConfig documents 11008: taken, and said.
  c["model_type"] = "llama";
  s = ParseModelConfig(c, "x.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->intermediate, 11008);
  EXPECT_TRUE(Has(s->notes, "intermediate_size not in config.json: 11008, the default of LlamaConfig"));
  // GPT-2 (transformers GPT2Config): n_inner null means 4 x n_embd.
  json gpt2 = {{"architectures", {"GPT2LMHeadModel"}}, {"model_type", "gpt2"}, {"n_layer", 12}, {"n_embd", 768},
               {"n_head", 12}, {"n_inner", nullptr}, {"vocab_size", 50257}, {"n_positions", 1024}};
  s = ParseModelConfig(gpt2, "gpt2.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->intermediate, 3072);
  EXPECT_TRUE(Has(s->notes, "4 x n_embd")) << s->notes.size();
  // OPT spells it ffn_dim.
  json opt = {{"model_type", "opt"}, {"num_hidden_layers", 24}, {"hidden_size", 2048}, {"ffn_dim", 8192},
              {"num_attention_heads", 32}, {"vocab_size", 50272}, {"max_position_embeddings", 2048}};
  s = ParseModelConfig(opt, "opt.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->intermediate, 8192);
  // Every layer routed to experts: the experts' width stands for the MLP.
  json moe = Llama();
  moe["model_type"] = "qwen3_moe";
  moe.erase("intermediate_size");
  moe["num_experts"] = 8;
  moe["moe_intermediate_size"] = 128;
  s = ParseModelConfig(moe, "moe.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->moe_intermediate, 128);
  // Experts of no known width are an error too.
  moe.erase("moe_intermediate_size");
  EXPECT_FALSE(ParseModelConfig(moe, "moe.json").ok());
}

// google/gemma-3-4b-it's config.json (Hugging Face hub): the text_config gives only the
// hidden size, MLP width, layers and window; heads, KV heads, head_dim and the
// vocabulary are Gemma3TextConfig's defaults (transformers configuration_gemma3.py).
TEST(ConfigReadingTest, Gemma3TerseConfigTakesGemma3TextConfigDefaults) {
  json c = {{"architectures", {"Gemma3ForConditionalGeneration"}},
            {"model_type", "gemma3"},
            {"mm_tokens_per_image", 256},
            {"text_config",
             {{"hidden_size", 2560},
              {"intermediate_size", 10240},
              {"model_type", "gemma3_text"},
              {"num_hidden_layers", 34},
              {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
              {"sliding_window", 1024}}},
            {"torch_dtype", "bfloat16"},
            {"vision_config",
             {{"hidden_size", 1152}, {"image_size", 896}, {"intermediate_size", 4304},
              {"model_type", "siglip_vision_model"}, {"num_attention_heads", 16}, {"num_hidden_layers", 27},
              {"patch_size", 14}, {"vision_use_head", false}}}};
  auto m = ParseModelConfig(c, "gemma-3-4b-it/config.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->heads, 8);
  EXPECT_EQ(m->kv_heads, 4);
  EXPECT_EQ(m->head_dim, 256);  // not 2560 / 8 = 320
  EXPECT_EQ(m->vocab, 262208);
  EXPECT_EQ(m->max_position, 131072);
  EXPECT_EQ(m->sliding_window, 1024);
  EXPECT_EQ(m->FullAttentionLayers(), 5);  // every 6th of 34 (sliding_window_pattern 6)
  EXPECT_EQ(m->SlidingLayers(), 29);
  EXPECT_TRUE(Has(m->notes, "text_config.num_key_value_heads not in config.json: 4, the default of Gemma3TextConfig"));
  KvDims d = KvDimsOf(*m, 1);
  EXPECT_EQ(d.kv_heads, 4);
  EXPECT_EQ(d.head_dim, 256);
}

TEST(ConfigReadingTest, HuggingFaceCacheFoldersAreFollowed) {
  TempDir t;
  const fs::path root = t.path() / "models--org--tiny";
  Write(root / "blobs" / "abc", Llama().dump());
  fs::create_directories(root / "snapshots" / "1234abcd");
  fs::create_symlink("../../blobs/abc", root / "snapshots" / "1234abcd" / "config.json");
  Write(root / "refs" / "main", "1234abcd\n");
  auto m = LoadModel(root.string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers, 4);
  EXPECT_TRUE(Has(m->notes, "snapshot 1234abcd (refs/main)"));
  auto s = LoadModel((root / "snapshots").string());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // Two snapshots, no ref: which one is not guessed.
  fs::remove(root / "refs" / "main");
  fs::create_directories(root / "snapshots" / "5678");
  Write(root / "snapshots" / "5678" / "config.json", Llama().dump());
  auto two = LoadModel(root.string());
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("2 snapshots"), std::string::npos) << two.status().message();
}

TEST(ConfigReadingTest, IndexTotalAndSingleSafetensorsFile) {
  TempDir t;
  Write(t.path() / "config.json", Llama().dump());
  Write(t.path() / "model.safetensors.index.json",
        json{{"metadata", {{"total_size", "16060522496"}}}, {"weight_map", json::object()}}.dump());
  auto bad = LoadModel(t.path().string());
  ASSERT_FALSE(bad.ok()) << "a string total_size was ignored";
  EXPECT_NE(bad.status().message().find("metadata.total_size"), std::string::npos) << bad.status().message();
  fs::remove(t.path() / "model.safetensors.index.json");
  // One file: 8-byte header length, the JSON header, then 4,096 bytes of tensors.
  const std::string header = R"({"w":{"dtype":"BF16","shape":[2048],"data_offsets":[0,4096]}})";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  file += header + std::string(4096, '\1');
  Write(t.path() / "model.safetensors", file);
  auto m = LoadModel(t.path().string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_TRUE(m->index_total_bytes);
  EXPECT_DOUBLE_EQ(*m->index_total_bytes, 4096);
}

// What a user points --model at besides the folder: the index or a weights file (their
// folder's config.json is read, and said); a cache snapshot whose blob is gone (a dangling
// link, named as such, not "no config.json" or weights silently from the config); a bad
// index names the index, not config.json.
TEST(ConfigReadingTest, IndexFileNamedAndBrokenCacheLinks) {
  TempDir t;
  Write(t.path() / "config.json", Llama().dump());
  Write(t.path() / "model.safetensors.index.json",
        json{{"metadata", {{"total_size", 16060522496LL}}}, {"weight_map", json::object()}}.dump());
  auto m = LoadModel((t.path() / "model.safetensors.index.json").string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->layers, 4);
  ASSERT_TRUE(m->index_total_bytes);
  EXPECT_TRUE(Has(m->notes, "--model names model.safetensors.index.json: its folder's config.json is read"));
  EXPECT_EQ(fs::path(m->source).filename(), "config.json");
  Write(t.path() / "model.safetensors.index.json",
        json{{"metadata", {{"total_size", "big"}}}, {"weight_map", json::object()}}.dump());
  auto bad = LoadModel(t.path().string());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fix model.safetensors.index.json"), std::string::npos) << bad.status().message();

  TempDir c;
  const fs::path snap = c.path() / "models--org--tiny" / "snapshots" / "1234abcd";
  Write(c.path() / "models--org--tiny" / "blobs" / "cfg", Llama().dump());
  fs::create_directories(snap);
  fs::create_symlink("../../blobs/cfg", snap / "config.json");
  fs::create_symlink("../../blobs/idx", snap / "model.safetensors.index.json");  // never downloaded
  auto gone = LoadModel(snap.string());
  ASSERT_FALSE(gone.ok()) << "a dangling index link was read as no index";
  EXPECT_NE(gone.status().message().find("model.safetensors.index.json is a link to ../../blobs/idx, which does not exist"),
            std::string::npos)
      << gone.status().message();
  fs::remove(snap / "model.safetensors.index.json");
  fs::remove(c.path() / "models--org--tiny" / "blobs" / "cfg");
  auto no_cfg = LoadModel(snap.string());
  ASSERT_FALSE(no_cfg.ok());
  EXPECT_NE(no_cfg.status().message().find("config.json is a link to ../../blobs/cfg, which does not exist"),
            std::string::npos)
      << no_cfg.status().message();
}

// Every common kind of quantization config: read, or refused by name.
TEST(ConfigReadingTest, QuantizationConfigsAreReadOrRefusedByName) {
  auto with = [](json qc) {
    json c = Llama();
    c["quantization_config"] = qc;
    return ParseModelConfig(c, "q.json");
  };
  // ModelOpt inside config.json, in hf_quant_config.json's nested shape (vLLM modelopt.py reads it).
  auto mo = with({{"quant_method", "modelopt"},
                  {"quantization", {{"quant_algo", "NVFP4"}, {"group_size", 16}, {"kv_cache_quant_algo", "FP8"},
                                    {"exclude_modules", {"lm_head"}}}}});
  ASSERT_TRUE(mo.ok());
  EXPECT_EQ(mo->quant.scheme, "modelopt nvfp4 g16");
  EXPECT_NEAR(mo->quant.linear_bytes, 0.5 + 1.0 / 16, 1e-12);
  EXPECT_EQ(mo->quant.kv_bytes, 1);
  ASSERT_EQ(mo->quant.skip.size(), 1u);
  // ModelOpt flat, and its block FP8.
  EXPECT_EQ(with({{"quant_method", "modelopt"}, {"quant_algo", "FP8"}})->quant.linear_bytes, 1.0);
  EXPECT_NEAR(with({{"quant_method", "modelopt"}, {"quant_algo", "FP8_PB_WO"}})->quant.linear_bytes,
              1 + 4.0 / 16384, 1e-12);
  // A per-layer MIXED_PRECISION export is refused by name.
  auto mixed = with({{"quant_method", "modelopt"}, {"quant_algo", "MIXED_PRECISION"}});
  ASSERT_TRUE(mixed.ok());
  EXPECT_NE(mixed->quant.unsupported.find("mixed_precision"), std::string::npos) << mixed->quant.unsupported;
  // bitsandbytes as transformers' BitsAndBytesConfig.to_dict() may write it (private keys).
  auto bnb4 = with({{"quant_method", "bitsandbytes"}, {"_load_in_4bit", true}, {"_load_in_8bit", false}});
  EXPECT_NEAR(bnb4->quant.linear_bytes, 0.5 + 4.0 / 64, 1e-12) << bnb4->quant.scheme;
  auto bnb8 = with({{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}});
  EXPECT_EQ(bnb8->quant.scheme, "bnb 8-bit");
  // GPTQ, AWQ, FP8 blocks, MXFP4.
  EXPECT_NEAR(with({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 128}})->quant.linear_bytes,
              0.5 + 2.5 / 128, 1e-12);
  EXPECT_NEAR(with({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}})->quant.linear_bytes,
              0.5 + 2.5 / 128, 1e-12);
  EXPECT_NEAR(with({{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}})->quant.linear_bytes,
              1 + 4.0 / 16384, 1e-12);
  EXPECT_TRUE(with({{"quant_method", "mxfp4"}})->quant.experts_only);
  // compressed-tensors with no weights scheme is not "8-bit assumed".
  auto ct = with({{"quant_method", "compressed-tensors"}, {"format", "marlin-24"}});
  EXPECT_FALSE(ct->quant.unsupported.empty());

  TempDir t;
  // An unknown method is refused by name without an index total...
  json hqq = Llama();
  hqq["quantization_config"] = {{"quant_method", "hqq"}, {"nbits", 4}};
  Write(t.path() / "config.json", hqq.dump());
  auto r = LoadModel(t.path().string());
  ASSERT_FALSE(r.ok()) << "an hqq checkpoint was taken as bf16";
  EXPECT_NE(r.status().message().find("quant_method 'hqq'"), std::string::npos) << r.status().message();
  // ...and read from the index total with one.
  Write(t.path() / "model.safetensors.index.json", json{{"metadata", {{"total_size", 123456789}}}}.dump());
  r = LoadModel(t.path().string());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Has(r->notes, "weights from the index total"));

  // AutoGPTQ's quantize_config.json next to a plain config.json.
  TempDir g;
  Write(g.path() / "config.json", Llama().dump());
  Write(g.path() / "quantize_config.json", json{{"bits", 4}, {"group_size", 128}, {"desc_act", false}}.dump());
  auto gq = LoadModel(g.path().string());
  ASSERT_TRUE(gq.ok()) << gq.status().ToString();
  EXPECT_EQ(gq->quant.method, "gptq");
  // A ModelOpt checkpoint whose scales are in the index but whose scheme is nowhere.
  TempDir mo2;
  Write(mo2.path() / "config.json", Llama().dump());
  Write(mo2.path() / "model.safetensors.index.json",
        json{{"metadata", {{"total_size", 1000000}}},
             {"weight_map", {{"model.layers.0.mlp.down_proj.weight", "a"},
                             {"model.layers.0.mlp.down_proj.weight_scale", "a"}}}}
            .dump());
  auto silent = LoadModel(mo2.path().string());
  ASSERT_FALSE(silent.ok()) << "a quantized checkpoint without its scheme was taken as bf16";
  EXPECT_NE(silent.status().message().find("weight_scale"), std::string::npos);
  // hf_quant_config.json without its "quantization" object is named.
  Write(mo2.path() / "hf_quant_config.json", json{{"producer", {{"name", "modelopt"}}}}.dump());
  auto noq = LoadModel(mo2.path().string());
  ASSERT_FALSE(noq.ok());
  EXPECT_NE(noq.status().message().find("hf_quant_config.json"), std::string::npos) << noq.status().message();
}

}  // namespace
}  // namespace tpt::memory
