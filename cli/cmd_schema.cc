// cmd_schema.cc: `tptriage schema NAME`: the JSON Schema of a JSON output, as
// compiled into the binary (the same files as schemas/ in the repository), and
// the file-language references `tptriage help format-files|...` prints.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "base/embedded.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/schemas.h"

namespace tpt::generated {
extern const EmbeddedFile kSchemaFiles[];  // schemas/*.schema.json (tpt_embed in cli/CMakeLists.txt)
extern const size_t kSchemaFilesCount;
extern const EmbeddedFile kDocFiles[];  // the file-language references
extern const size_t kDocFilesCount;
}  // namespace tpt::generated

namespace tpt::cli {

const std::vector<std::pair<std::string, std::string>>& BuiltinSchemas() {
  static const std::vector<std::pair<std::string, std::string>> schemas = [] {
    std::vector<std::pair<std::string, std::string>> out;
    const std::string prefix = "schemas/", suffix = ".schema.json";
    for (size_t i = 0; i < generated::kSchemaFilesCount; ++i) {
      std::string name = generated::kSchemaFiles[i].name;
      if (name.size() <= prefix.size() + suffix.size()) continue;
      out.emplace_back(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()),
                       generated::kSchemaFiles[i].text);
    }
    std::sort(out.begin(), out.end());  // by name: analyze before analyze-runs
    return out;
  }();
  return schemas;
}

const std::vector<std::pair<std::string, std::string>>& BuiltinDocs() {
  static const std::vector<std::pair<std::string, std::string>> docs = [] {
    const std::pair<const char*, const char*> topics[] = {{"format-files", "parser/formats/README.md"},
                                                          {"rule-files", "rules/README.md"},
                                                          {"finding-files", "rules/findings/README.md"}};
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [topic, file] : topics)
      for (size_t i = 0; i < generated::kDocFilesCount; ++i)
        if (std::string(generated::kDocFiles[i].name) == file) out.emplace_back(topic, generated::kDocFiles[i].text);
    return out;
  }();
  return docs;
}

int RunSchema(const Args& args) {
  namespace po = boost::program_options;
  bool list = false;
  std::vector<std::string> names;
  po::options_description desc("options");
  desc.add_options()
      ("help,h", "show this help")
      ("list", po::bool_switch(&list), "list the schema names");
  if (auto code = ParseCommandLine(args, desc, "schema", &names)) return *code;
  std::vector<std::string> known;
  for (const auto& [name, text] : BuiltinSchemas()) known.push_back(name);
  if (list) {
    for (const auto& n : known) std::printf("%s\n", n.c_str());
    return 0;
  }
  if (names.size() != 1) return UsageError("schema", "give one NAME: analyze, analyze-runs, plan, diff, events or repro");
  for (const auto& [name, text] : BuiltinSchemas()) {
    if (name == names[0]) {
      std::fputs(text.c_str(), stdout);
      return 0;
    }
  }
  std::string msg = "unknown schema '" + names[0] + "'";
  if (std::string guess = ClosestMatch(names[0], known); !guess.empty()) msg += "; did you mean '" + guess + "'?";
  return UsageError("schema", msg);
}

}  // namespace tpt::cli
