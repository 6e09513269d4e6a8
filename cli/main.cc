// main.cc: `tptriage <command> ...` dispatch, the top-level flags
// (--help, -V/--version, --generate), `tptriage help CMD|TOPIC`.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/generate.h"
#include "parser/format_set.h"
#include "rules/rule.h"
#include "rules/vocabulary.h"
#include "cli/safe_stderr.h"

#ifndef TPT_BUILD_CUDA
#define TPT_BUILD_CUDA 0
#endif

namespace {

using tpt::cli::Args;
using tpt::cli::OptionDoc;

struct Command {
  const char* name;
  int (*run)(const Args&);
};

constexpr Command kCommands[] = {
    {"analyze", tpt::cli::RunAnalyze}, {"events", tpt::cli::RunEvents}, {"plan", tpt::cli::RunPlan},
    {"repro", tpt::cli::RunRepro},     {"diff", tpt::cli::RunDiff},     {"log", tpt::cli::RunLog},
    {"schema", tpt::cli::RunSchema},
};

const std::vector<OptionDoc>& GlobalOptions() {
  static const std::vector<OptionDoc> g = {
      {"help", "h", "", "show this help (tptriage help CMD: one command's)", "", {}},
      {"version", "V", "", "print the version and the build's features", "", {}},
      {"generate", "", "WHAT", "print man | complete-bash | complete-zsh | complete-fish", "",
       {"man", "complete-bash", "complete-zsh", "complete-fish"}},
  };
  return g;
}

const std::vector<std::string>& HelpTopics() {
  static const std::vector<std::string> t = {"kinds", "root-causes", "formats", "format-files", "rule-files", "finding-files"};
  return t;
}

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "tptriage %s: why a multi-GPU LLM server died, with the numbers\n\n"
               "usage: tptriage COMMAND [options] [ARGS]\n"
               "       tptriage help COMMAND|kinds|root-causes|formats|format-files|rule-files|finding-files\n\n"
               "commands:\n",
               TPT_VERSION);
  for (const auto& d : tpt::cli::CommandDocs()) std::fprintf(out, "  %-8s %s\n", d.name, d.summary);
  std::fprintf(out, "  %-8s %s\n\noptions:\n", "help", "show the help of a command, or list kinds, root causes or formats");
  for (const auto& o : GlobalOptions()) {
    std::string left = (o.short_name.empty() ? "    " : "-" + o.short_name + ", ") + "--" + o.long_name +
                       (o.placeholder.empty() ? "" : " " + o.placeholder);
    std::fprintf(out, "  %-22s %s\n", left.c_str(), o.description.c_str());
  }
  std::fprintf(out,
               "\nexamples:\n"
               "  tptriage analyze server.log\n"
               "  tptriage help analyze\n"
               "  tptriage --generate complete-bash > /etc/bash_completion.d/tptriage\n\n"
               "exit codes: per command (tptriage help CMD); 2 for a usage error.\n");
}

// Output that did not reach stdout (a full disk, /dev/full, a closed file)
// is an error like a failed -o: a message and exit 2, never a silent 0.
int CheckStdout(const char* cmd, int code) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return code;
  std::fprintf(stderr, "tptriage %s: writing to stdout failed (%s); the output is incomplete\n", cmd,
               err != 0 ? std::strerror(err) : "write error");
  return 2;
}

std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const auto& c : kCommands) names.push_back(c.name);
  names.push_back("help");
  return names;
}

int UnknownWord(const char* what, const std::string& word, std::vector<std::string> candidates) {
  std::string msg = std::string("tptriage: unknown ") + what + " '" + word + "'";
  if (std::string guess = tpt::cli::ClosestMatch(word, candidates); !guess.empty()) {
    msg += "; did you mean '" + guess + "'?";
  }
  std::fprintf(stderr, "%s (see 'tptriage --help')\n", msg.c_str());
  return 2;
}

// Each command's options, read from the command itself in describe mode.
std::vector<tpt::cli::CommandOptions> AllCommandOptions() {
  std::vector<tpt::cli::CommandOptions> out;
  for (const auto& c : kCommands) {
    tpt::cli::OptionSink sink;
    tpt::cli::SetOptionSink(&sink);
    c.run({});
    tpt::cli::SetOptionSink(nullptr);
    out.push_back({tpt::cli::FindCommandDoc(c.name), std::move(sink.options)});
  }
  return out;
}

int Generate(const std::string& what) {
  auto cmds = AllCommandOptions();
  if (what == "man") {
    std::fputs(tpt::cli::GenerateMan(cmds, GlobalOptions(), TPT_VERSION).c_str(), stdout);
  } else if (what == "complete-bash") {
    std::fputs(tpt::cli::GenerateBash(cmds, GlobalOptions()).c_str(), stdout);
  } else if (what == "complete-zsh") {
    std::fputs(tpt::cli::GenerateZsh(cmds, GlobalOptions()).c_str(), stdout);
  } else if (what == "complete-fish") {
    std::fputs(tpt::cli::GenerateFish(cmds, GlobalOptions()).c_str(), stdout);
  } else {
    return UnknownWord("--generate value", what, GlobalOptions()[2].choices);
  }
  return 0;
}

int PrintVersion() {
  auto formats = tpt::FormatSet::LoadBuiltin();
  auto rules = tpt::RuleSet::LoadBuiltin();
  std::printf("tptriage %s\n", TPT_VERSION);
  std::printf("license: Apache-2.0 (LICENSE)\n");
  std::printf("features: cuda=%s nccl=%s inputs=%s\n", TPT_BUILD_CUDA ? "yes" : "no",
              TPT_BUILD_CUDA ? "dlopen" : "no", TPT_INPUT_FORMATS);
  std::printf("built-in: %zu formats (%zu patterns), %zu rules\n", tpt::FormatSet::BuiltinSources().size(),
              formats.ok() ? formats->patterns().size() : size_t{0}, rules.ok() ? rules->rules().size() : size_t{0});
  // Whether this CPU took the literal database the build compiled, or compiled it at start
  // (another CPU class or Hyperscan; correct either way, about 20 ms more a start).
  if (formats.ok())
    std::printf("prefilter: %s\n", formats->prefilter_from_blob() ? "embedded database (taken on this CPU)"
                                                                   : "compiled at start (the embedded database does not fit this CPU)");
  return 0;
}

int HelpTopic(const std::string& topic) {
  if (topic == "kinds") {
    auto formats = tpt::FormatSet::LoadBuiltin();
    if (!formats.ok()) return 2;
    std::map<std::string, std::set<std::string>> kinds;  // kind -> families
    for (const auto& p : formats->patterns()) kinds[p.kind].insert(p.family);
    for (const auto& b : formats->blocks()) kinds[b.kind].insert(b.family);
    std::printf("Event kinds of the built-in formats (tptriage events --kinds K,...), with the families that give them:\n\n");
    for (const auto& [kind, fams] : kinds) {
      std::string f;
      for (const auto& x : fams) f += (f.empty() ? "" : ", ") + x;
      std::printf("  %-36s %s\n", kind.c_str(), f.c_str());
    }
    return 0;
  }
  if (topic == "root-causes") {
    auto rules = tpt::RuleSet::LoadBuiltin();
    if (!rules.ok()) return 2;
    std::map<std::string, std::vector<std::string>> causes;  // root cause -> rule titles
    for (const auto& r : rules->rules()) causes[r.root_cause].push_back(r.title);
    std::printf("Root-cause ids (the root_cause field of analyze's JSON), what each means, and the built-in\n"
                "rules that give it:\n\n");
    for (const tpt::RootCause& rc : tpt::RootCauses()) {
      std::printf("  %s\n      %s\n", rc.id.c_str(), rc.title.c_str());
      for (const auto& t : causes[rc.id]) std::printf("      - %s\n", t.c_str());
    }
    std::printf("  none\n      no failure seen (healthy)\n  unknown\n      a failure was seen but no rule explains it\n");
    return 0;
  }
  if (topic == "formats") {
    auto formats = tpt::FormatSet::LoadBuiltin();
    if (!formats.ok()) return 2;
    std::map<std::string, size_t> per_family;
    for (const auto& p : formats->patterns()) ++per_family[p.family];
    std::printf("Built-in log formats (--formats DIR adds files of the same kind; a file named like one of\n"
                "these replaces it; the file language: tptriage help format-files):\n\n");
    for (const auto& src : tpt::FormatSet::BuiltinSources()) {
      const size_t slash = src.name.rfind('/');
      std::printf("  %s\n", slash == std::string::npos ? src.name.c_str() : src.name.c_str() + slash + 1);
    }
    std::printf("\nPatterns per family:\n\n");
    for (const auto& [fam, n] : per_family) std::printf("  %-24s %zu\n", fam.c_str(), n);
    return 0;
  }
  for (const auto& [name, text] : tpt::cli::BuiltinDocs()) {
    if (topic == name) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    }
  }
  std::vector<std::string> all = CommandNames();
  all.insert(all.end(), HelpTopics().begin(), HelpTopics().end());
  return UnknownWord("help topic", topic, all);
}

}  // namespace

int main(int argc, char** argv) {
  tpt::cli::NeutraliseStderr();  // names and log text in messages reach no terminal or CI runner raw
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  std::string name = argv[1];
  if (name == "-h" || name == "--help") {
    PrintUsage(stdout);
    return CheckStdout("help", 0);
  }
  if (name == "help") {
    if (argc < 3) {
      PrintUsage(stdout);
      return CheckStdout("help", 0);
    }
    std::string what = argv[2];
    for (const auto& c : kCommands) {
      if (what == c.name) return CheckStdout("help", c.run({"--help"}));
    }
    return CheckStdout("help", HelpTopic(what));
  }
  if (name == "--version" || name == "-V" || name == "version") return CheckStdout("--version", PrintVersion());
  if (name == "--generate" || name.rfind("--generate=", 0) == 0) {
    std::string what = name.size() > 10 ? name.substr(11) : (argc > 2 ? argv[2] : "");
    if (what.empty()) {
      std::fprintf(stderr, "tptriage: --generate needs one of man, complete-bash, complete-zsh, complete-fish\n");
      return 2;
    }
    return CheckStdout("--generate", Generate(what));
  }
  for (const auto& c : kCommands) {
    if (name == c.name) return CheckStdout(c.name, c.run(Args(argv + 2, argv + argc)));
  }
  if (!name.empty() && name[0] == '-') {
    std::vector<std::string> flags;
    for (const auto& o : GlobalOptions()) flags.push_back("--" + o.long_name);
    return UnknownWord("option", name, flags);
  }
  return UnknownWord("command", name, CommandNames());
}
