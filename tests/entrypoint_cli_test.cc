// entrypoint_cli_test.cc: a vLLM log whose traceback runs through the offline
// LLM(...) class gets its fixes as the class's keywords (rules/entrypoint.h), in
// every output format, with the same effect the serve flag has; a log that
// shows `vllm serve`, or both, or neither, keeps serve's flags.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_run.h"

namespace {

namespace fs = std::filesystem;
using tpt::test::Quote;

const std::string kSample =
    std::string(TPT_SOURCE_DIR) + "/samples/rules/kv_pool_too_small/pos_v1_llm_class_script.log";

std::string Analyze(const std::string& path, const std::string& format) {
  return tpt::test::Tptriage("analyze " + Quote(path) + " --format " + format, false).out;
}

std::vector<std::string> SampleLines() {
  std::ifstream in(kSample);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// The sample with each line passed through `keep` (nullopt drops it), and `extra` appended.
template <class F>
std::string Variant(const std::string& name, F edit, const std::string& extra = "") {
  const fs::path p = fs::temp_directory_path() / ("tpt_entrypoint_" + std::to_string(getpid()) + "_" + name + ".log");
  std::ofstream out(p);
  for (const std::string& l : SampleLines()) {
    std::string s = l;
    if (edit(s)) out << s << "\n";
  }
  out << extra;
  return p.string();
}

std::string FixLine(const std::string& path) {
  return nlohmann::json::parse(Analyze(path, "json")).at("fix").at("line").get<std::string>();
}

TEST(VllmEntrypoint, AnLlmClassTracebackGetsKeywordFixesInEveryFormat) {
  auto j = nlohmann::json::parse(Analyze(kSample, "json"));
  ASSERT_EQ(j.at("root_cause"), "kv_pool_too_small");
  const auto& fix = j.at("fix");
  EXPECT_EQ(fix.at("line"), "max_model_len=95872");
  // The effect and the value in use are the serve flag's: the same memory model.
  EXPECT_EQ(fix.at("effect").at("kv_tokens"), 95872);
  EXPECT_EQ(fix.at("effect").at("requests"), 1);
  bool finding = false;
  for (const auto& f : j.at("findings")) finding |= f.at("id") == "vllm_entrypoint";
  EXPECT_TRUE(finding);
  for (const auto& r : j.at("diagnoses").at(0).at("remedy")) {
    EXPECT_NE(r.at("flag").get<std::string>().rfind("--", 0), 0u) << r.dump();
    EXPECT_EQ(r.at("why").get<std::string>().find("--gpu-memory-utilization"), std::string::npos) << r.dump();
  }
  const std::string text = Analyze(kSample, "text");
  EXPECT_NE(text.find("Fix: max_model_len=95872 gives KV pool 5.12 GiB a rank"), std::string::npos) << text;
  for (const char* format : {"text", "markdown", "github", "junit", "sarif", "html"}) {
    const std::string out = Analyze(kSample, format);
    EXPECT_NE(out.find("max_model_len=95872"), std::string::npos) << format;
    EXPECT_EQ(out.find("--max-model-len"), std::string::npos) << format;
  }
}

TEST(VllmEntrypoint, TheUsersScriptCallingLlmIsEnoughAndItsOwnNameIsNot) {
  // Without vLLM's llm.py frame, the script's `llm = LLM(` line says it.
  auto no_module = [](std::string& l) { return l.find("entrypoints/llm.py") == std::string::npos &&
                                                l.find("self.llm_engine = LLMEngine") == std::string::npos; };
  EXPECT_EQ(FixLine(Variant("script", no_module)), "max_model_len=95872");
  // A class of the user's own whose name ends in LLM is not vLLM's.
  auto own_class = [&](std::string& l) {
    if (l.find("llm = LLM(") != std::string::npos) l = "    llm = MyLLM(model=\"Qwen/Qwen2.5-7B-Instruct\")";
    return no_module(l);
  };
  EXPECT_EQ(FixLine(Variant("own_class", own_class)), "--max-model-len 95872");
}

TEST(VllmEntrypoint, ServeOrBothOrNeitherKeepServeFlags) {
  // Neither: the engine's own traceback only.
  auto engine_only = [](std::string& l) { return l.rfind("Traceback", 0) != 0 && l.rfind("  ", 0) != 0 &&
                                                  l.rfind("RuntimeError", 0) != 0; };
  EXPECT_EQ(FixLine(Variant("neither", engine_only)), "--max-model-len 95872");
  // Both: the API server's version line beside the class's traceback.
  auto all = [](std::string&) { return true; };
  const std::string both = Variant(
      "both", all, "INFO 05-20 14:32:01 [api_server.py:1090] vLLM API server version 0.8.5\n");
  EXPECT_EQ(FixLine(both), "--max-model-len 95872");
  auto j = nlohmann::json::parse(Analyze(both, "json"));
  for (const auto& f : j.at("findings")) EXPECT_NE(f.at("id"), "vllm_entrypoint");
}

}  // namespace
