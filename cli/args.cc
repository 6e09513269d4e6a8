// args.cc: option parsing, help layout and "did you mean" for every subcommand.
#include "cli/args.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <regex>
#include <sstream>

#include "rules/vocabulary.h"

namespace tpt::cli {

namespace po = boost::program_options;

namespace {

OptionSink* g_sink = nullptr;

// Placeholders by option name where the value's meaning is not in its type.
// Anything not here gets its name upper-cased (clap's habit), never "arg".
const std::map<std::string, std::string>& PlaceholderTable() {
  static const std::map<std::string, std::string> t = {
      {"output", "FILE"}, {"html", "FILE"}, {"junit", "FILE"}, {"sarif", "FILE"}, {"markdown", "FILE"},
      {"json", "FILE"}, {"github", "FILE"}, {"text", "FILE"}, {"env", "FILE"}, {"gpu-catalog", "FILE"},
      {"runs", "DIR"}, {"rules", "DIR"}, {"findings", "DIR"}, {"formats", "DIR"},
      {"good", "LOG"}, {"bad", "LOG"},
      {"jobs", "N"}, {"tp", "N"}, {"pp", "N"}, {"dp", "N"}, {"layers", "N"}, {"kv-heads", "N"},
      {"head-dim", "N"}, {"v-head-dim", "N"}, {"kv-lora-rank", "N"}, {"qk-rope-head-dim", "N"},
      {"cuda-graph-max-bs", "N"}, {"chunked-prefill-size", "N"}, {"page-size", "N"}, {"block-size", "N"},
      {"context-length", "N"}, {"max-model-len", "N"}, {"max-total-tokens", "N"}, {"hidden-size", "N"},
      {"bench-iters", "N"}, {"deadline", "SECONDS"}, {"cell-bytes", "SIZE"},
      {"max-line-bytes", "SIZE"}, {"buffer-bytes", "SIZE"}, {"gpu-mem", "SIZE"}, {"gpu-catalog", "FILE"}, {"free-at-init", "SIZE"},
      {"avail-after-weights", "SIZE"}, {"weights-per-rank", "SIZE"}, {"cuda-graph-mem", "SIZE"},
      {"activation-peak", "SIZE"}, {"non-torch", "SIZE"}, {"target-gpu-mem", "SIZE"}, {"weights", "SIZE"},
      {"kv-bytes-per-token", "SIZE"}, {"custom-allreduce-max", "SIZE"}, {"bench-min", "SIZE"},
      {"bench-max", "SIZE"},
      {"mem-fraction-static", "FRACTION"}, {"gpu-memory-utilization", "FRACTION"}, {"fix", "VALUE"},
      {"format", "FORMAT"}, {"fail-on", "OUTCOME"}, {"color", "WHEN"}, {"kinds", "KIND,..."},
      {"bench-ranks", "N,..."}, {"cuda-graph-bs", "BS,..."}, {"cuda-graphs", "BS,..."}, {"params", "COUNT"}, {"model", "DIR|FILE"},
  };
  return t;
}

std::string Upper(std::string s) {
  for (char& c : s) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// "a | b | c" inside a description -> {a, b, c}.
std::vector<std::string> Choices(const std::string& description) {
  static const std::regex re(R"(([A-Za-z0-9_.]+(?: \| [A-Za-z0-9_.]+)+))");
  std::smatch m;
  std::vector<std::string> out;
  if (!std::regex_search(description, m, re)) return out;
  std::string list = m[1];
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t bar = list.find(" | ", pos);
    out.push_back(list.substr(pos, bar == std::string::npos ? std::string::npos : bar - pos));
    if (bar == std::string::npos) break;
    pos = bar + 3;
  }
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment (a transposition counts as one edit).
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

bool WantsHelp(const Args& args) {
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "-h" || a == "--help") return true;
  }
  return false;
}

}  // namespace

void SetOptionSink(OptionSink* sink) { g_sink = sink; }

bool StdinIsPiped() {
  struct stat st;
  if (fstat(STDIN_FILENO, &st) != 0) return false;
  return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode);
}

std::vector<OptionDoc> DescribeOptions(const po::options_description& desc) {
  std::vector<OptionDoc> out;
  for (const auto& o : desc.options()) {
    OptionDoc d;
    d.long_name = o->long_name();
    std::string shorty = o->canonical_display_name(po::command_line_style::allow_dash_for_short);
    if (shorty.size() == 2 && shorty[0] == '-' && shorty[1] != '-') d.short_name = shorty.substr(1);
    d.description = o->description();
    auto sem = o->semantic();
    if (sem && sem->max_tokens() > 0) {
      // Boost's name() is "NAME (=DEFAULT)" with NAME "arg" when not set.
      std::string name = sem->name();
      size_t eq = name.find(" (=");
      if (eq != std::string::npos) {
        d.default_value = name.substr(eq + 3, name.size() - eq - 4);
        name.resize(eq);
      }
      if (name == "arg" || name.empty()) {
        auto it = PlaceholderTable().find(d.long_name);
        name = it != PlaceholderTable().end() ? it->second : Upper(d.long_name);
      }
      d.placeholder = name;
      d.choices = Choices(d.description);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::string FormatHelp(const CommandDoc& doc, const std::vector<OptionDoc>& options) {
  std::ostringstream s;
  s << "tptriage " << doc.name << ": " << doc.summary << "\n\n";
  std::istringstream usage(doc.usage);
  std::string line;
  bool first = true;
  while (std::getline(usage, line)) {
    s << (first ? "usage: " : "       ") << line << "\n";
    first = false;
  }
  if (*doc.description) s << "\n" << doc.description << "\n";
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const auto& o : options) {
    std::string left = o.short_name.empty() ? "    " : "-" + o.short_name + ", ";
    left += "--" + o.long_name;
    if (!o.placeholder.empty()) left += " " + o.placeholder;
    std::string right = o.description;
    if (!o.default_value.empty() && o.default_value != "\"\"") right += " (default: " + o.default_value + ")";
    width = std::max(width, left.size());
    rows.emplace_back(std::move(left), std::move(right));
  }
  width = std::min<size_t>(width, 30);
  s << "\noptions:\n";
  for (const auto& [left, right] : rows) {
    s << "  " << left;
    if (left.size() > width) {
      s << "\n  " << std::string(width, ' ');
    } else {
      s << std::string(width - left.size(), ' ');
    }
    s << "  " << right << "\n";
  }
  if (*doc.examples) {
    s << "\nexamples:\n";
    std::istringstream ex(doc.examples);
    while (std::getline(ex, line)) s << "  " << line << "\n";
  }
  if (*doc.exit_codes) {
    s << "\nexit codes:\n";
    std::istringstream ex(doc.exit_codes);
    while (std::getline(ex, line)) s << "  " << line << "\n";
  }
  return s.str();
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.empty()) return "";
  std::string prefix_hit;
  int prefix_hits = 0;
  for (const auto& c : candidates) {
    if (c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
      prefix_hit = c;
      ++prefix_hits;
    }
  }
  if (prefix_hits == 1 && word.size() >= 2) return prefix_hit;
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  size_t limit = word.size() <= 3 ? 1 : word.size() <= 6 ? 2 : 3;
  return best_d <= limit && best_d < word.size() ? best : "";
}

int UsageError(const char* cmd, const std::string& message, int code) {
  std::fprintf(stderr, "tptriage %s: %s (see 'tptriage help %s')\n", cmd, message.c_str(), cmd);
  return code;
}

std::optional<int> ParseCommandLine(const Args& args, const po::options_description& desc, const char* cmd,
                                    std::vector<std::string>* positional, po::variables_map* vm_out,
                                    int usage_code) {
  if (g_sink) {
    g_sink->options = DescribeOptions(desc);
    g_sink->seen = true;
    return 0;
  }
  if (WantsHelp(args)) {
    if (const CommandDoc* doc = FindCommandDoc(cmd)) {
      std::fputs(FormatHelp(*doc, DescribeOptions(desc)).c_str(), stdout);
    }
    return 0;
  }
  po::options_description hidden;
  std::vector<std::string> unused;
  hidden.add_options()("positional-args", po::value(positional ? positional : &unused));
  po::options_description all;
  all.add(desc);
  po::positional_options_description pos;
  if (positional) {
    all.add(hidden);
    pos.add("positional-args", -1);
  }
  po::variables_map local;
  po::variables_map& vm = vm_out ? *vm_out : local;
  try {
    po::store(po::command_line_parser(args)
                  .options(all)
                  .positional(pos)
                  .style(po::command_line_style::unix_style ^ po::command_line_style::allow_guessing)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    std::vector<std::string> names;
    for (const auto& o : desc.options()) {
      names.push_back("--" + o->long_name());
      std::string shorty = o->canonical_display_name(po::command_line_style::allow_dash_for_short);
      if (shorty.size() == 2 && shorty[1] != '-') names.push_back(shorty);
    }
    std::string msg = "unknown option '" + name + "'";
    std::string bare = name.substr(0, name.find('='));
    if (std::string guess = ClosestMatch(bare, names); !guess.empty()) msg += "; did you mean '" + guess + "'?";
    return UsageError(cmd, msg, usage_code);
  } catch (const po::too_many_positional_options_error&) {
    return UsageError(cmd, "takes no positional arguments", usage_code);
  } catch (const po::error& e) {
    return UsageError(cmd, e.what(), usage_code);
  }
  return std::nullopt;
}

std::string UnknownKinds(const std::vector<std::string>& kinds, const FormatSet& formats) {
  std::set<std::string> known;
  for (const auto& k : EventKinds()) known.insert(k.kind);
  for (const auto& p : formats.patterns()) known.insert(p.kind);
  for (const auto& b : formats.blocks()) known.insert(b.kind);
  for (const auto& k : kinds) {
    if (known.count(k)) continue;
    const std::vector<std::string> all(known.begin(), known.end());
    const std::string near = ClosestMatch(k, all);
    std::string list;
    for (const auto& a : all) list += (list.empty() ? "" : ", ") + a;
    return "--kinds " + k + ": no such event kind" + (near.empty() ? "" : "; did you mean " + near + "?") +
           " (tptriage help kinds lists them: " + list + ")";
  }
  return "";
}

}  // namespace tpt::cli
