// format_check.cc: FormatSet::CheckSamples, every format file checked
// against its own samples and near misses when it loads (format_set.h).
#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "parser/format_load.h"
#include "parser/format_set.h"
#include "parser/format_set_internal.h"
#include "parser/match/capture.h"

namespace tpt {
namespace {

using nlohmann::json;
using format_internal::At;
using format_internal::Idx;
using format_internal::StringList;

bool ContainsCaseless(std::string_view hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != hay.end();
}

// Expected values in samples: numbers equal within 1e-6 relative, others exact.
bool SameValue(const json& want, const json& got) {
  if (want.is_number() && got.is_number()) {
    double a = want.get<double>(), b = got.get<double>();
    return std::fabs(a - b) <= 1e-6 * std::max({1.0, std::fabs(a), std::fabs(b)});
  }
  if (want.is_array() && got.is_array()) {
    if (want.size() != got.size()) return false;
    for (size_t i = 0; i < want.size(); ++i) {
      if (!SameValue(want[i], got[i])) return false;
    }
    return true;
  }
  if (want.is_object() && got.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key()) || !SameValue(it.value(), got[it.key()])) return false;
    }
    return true;
  }
  return want == got;
}

// Compares expected fields (subset) with what was produced; empty on success.
std::string CompareFields(const json& want, const json& got) {
  if (!want.is_object()) return "\"fields\" must be an object";
  for (auto it = want.begin(); it != want.end(); ++it) {
    if (!got.contains(it.key())) return "field '" + it.key() + "' was not produced (got " + got.dump() + ")";
    if (!SameValue(it.value(), got[it.key()])) {
      return "field '" + it.key() + "' is " + got[it.key()].dump() + ", sample says " + it.value().dump();
    }
  }
  return "";
}

}  // namespace

Status FormatSet::Loader::CheckSamples(const FormatSource& file, const json& d, size_t first_pattern,
                                       size_t first_block, size_t first_wrapper, size_t first_prefix) const {
  const std::string& f = file.name;
  auto meta_json = [](const LineMeta& m) {
    json j = m.wrapper.is_object() ? json::object() : json::object();
    for (auto it = m.wrapper.begin(); it != m.wrapper.end(); ++it) {
      if (!it.value().is_object()) continue;
      for (auto g = it.value().begin(); g != it.value().end(); ++g) j[g.key()] = g.value();
    }
    if (m.rank >= 0) j["rank"] = m.rank;
    if (m.local_rank >= 0) j["local_rank"] = m.local_rank;
    if (m.pid >= 0) j["pid"] = m.pid;
    if (m.dp_rank >= 0) j["dp_rank"] = m.dp_rank;
    if (m.pp_rank >= 0) j["pp_rank"] = m.pp_rank;
    if (m.tp_rank >= 0) j["tp_rank"] = m.tp_rank;
    if (m.ep_rank >= 0) j["ep_rank"] = m.ep_rank;
    if (!m.host.empty()) j["host"] = m.host;
    if (!m.process.empty()) j["process"] = m.process;
    if (m.ts) j["ts"] = m.ts->value;
    return j;
  };

  // Wrappers and prefixes: each sample must match at its start (prefixes may
  // sit behind wrappers), strip to `rest` when given, and yield `fields`.
  auto check_prefixes = [&](const char* key) -> Status {
    if (!d.contains(key)) return OkStatus();
    for (size_t i = 0; i < d[key].size(); ++i) {
      const json& item = d[key][i];
      std::string path = Idx(std::string("$.") + key, i);
      const PrefixSpec* spec = nullptr;
      for (const auto* list : {&set_.wrappers_, &set_.suffixes_, &set_.prefixes_}) {
        for (const auto& p : *list) {
          if (p.family == d["family"] && p.id == item["id"]) spec = &p;
        }
      }
      if (!spec) continue;
      size_t fast_taken = 0;  // a fast layout must serve some sample
      for (size_t s = 0; s < item["samples"].size(); ++s) {
        std::string spath = Idx(path + ".samples", s);
        const json& sample = item["samples"][s];
        if (!sample.is_object() || !sample.contains("line") || !sample["line"].is_string()) {
          return At(f, spath, "a sample is {\"line\": ..., \"fields\": {...}, \"rest\": ...}");
        }
        std::string line = sample["line"];
        std::vector<std::string_view> groups;
        LineMeta meta;
        size_t pos = 0;
        bool ok = false;
        std::string rest;
        if (spec->suffix) {
          ok = RunRe(*spec->re, line, 0, RE2::UNANCHORED, &groups) &&
               groups[0].data() + groups[0].size() == line.data() + line.size();
          if (ok) rest = line.substr(0, groups[0].data() - line.data());
        } else {
          // A producer prefix may sit behind wrappers in its sample.
          bool direct = RunRe(*spec->re, line, 0, RE2::ANCHOR_START, &groups) && !groups[0].empty();
          if (std::string(key) == "prefixes" && !direct) {
            for (int round = 0; round < 8; ++round) {
              bool hit = false;
              for (const auto& w : set_.wrappers_) {
                if (RunRe(*w.re, line, pos, RE2::ANCHOR_START, &groups) && !groups[0].empty()) {
                  pos += groups[0].size();
                  hit = true;
                  break;
                }
              }
              if (!hit) break;
            }
          }
          ok = RunRe(*spec->re, line, pos, RE2::ANCHOR_START, &groups) && !groups[0].empty();
          if (ok && spec->then) {
            re2::StringPiece after(line.data() + pos + groups[0].size(), line.size() - pos - groups[0].size());
            ok = spec->then->Match(after, 0, after.size(), RE2::ANCHOR_START, nullptr, 0);
          }
          if (ok) rest = line.substr(pos + groups[0].size());
        }
        if (ok && spec->repeat) {
          std::string previous = sample.value("previous", "");
          std::string matched = line.substr(pos, groups[0].size());
          if (previous.compare(std::min(pos, previous.size()), matched.size(), matched) != 0) {
            return At(f, spath + ".previous",
                      "a repeat wrapper's sample needs \"previous\": the line before it, starting with the same text");
          }
        }
        if (!ok) return At(f, spath + ".line", "the regex does not match this sample at its start");
        if (!spec->suffix) {
          for (size_t k = 0; k < spec->fast.size(); ++k) {
            bool taken = false;
            std::string why = spec->fast[k]->Disagreement(std::string_view(line).substr(pos), *spec->re, &taken);
            if (!why.empty()) return At(f, Idx(path + ".fast", k), why + " on " + spath);
            fast_taken += taken;
          }
        }
        ApplyPrefix(*spec, groups, &meta, true);
        if (sample.contains("rest") && sample["rest"] != rest) {
          return At(f, spath + ".rest", "stripping leaves '" + rest + "', sample says " + sample["rest"].dump());
        }
        std::string why = CompareFields(sample.value("fields", json::object()), meta_json(meta));
        if (!why.empty()) return At(f, spath + ".fields", why);
      }
      if (!spec->fast.empty() && fast_taken == 0) {
        return At(f, path + ".fast", "no sample takes the fast layout; add a sample with the layout it is for");
      }
    }
    return OkStatus();
  };
  TPT_RETURN_IF_ERROR(check_prefixes("wrappers"));
  TPT_RETURN_IF_ERROR(check_prefixes("prefixes"));

  auto has_literal = [](const PatternSpec& p, std::string_view line) {
    for (const auto& lit : p.literals) {
      if (p.caseless ? ContainsCaseless(line, lit) : line.find(lit) != std::string_view::npos) return true;
    }
    return false;
  };
  // Matches like the engine (stripped text), falling back to the raw line.
  auto try_match = [&](const PatternSpec& p, const std::string& line, Event* e, std::string* err) {
    LineMeta meta;
    Stripped st = set_.StripLine(line, &meta);
    if (set_.MatchPattern(p, std::string_view(line).substr(st.begin, st.end - st.begin), e, err)) return true;
    return set_.MatchPattern(p, line, e, err);
  };
  if (d.contains("patterns")) {
    for (size_t i = 0; i < d["patterns"].size(); ++i) {
      const PatternSpec& p = set_.patterns_[first_pattern + i];
      const json& item = d["patterns"][i];
      std::string path = Idx("$.patterns", i);
      // A fast layout must give the regex's groups on every sample and near
      // miss (stripped as the engine does, and raw), and serve some sample.
      size_t fast_taken = 0;
      auto check_fast = [&](const std::string& line, const std::string& at) -> Status {
        LineMeta meta;
        Stripped st = set_.StripLine(line, &meta);
        for (std::string_view text : {std::string_view(line).substr(st.begin, st.end - st.begin), std::string_view(line)}) {
          for (size_t k = 0; k < p.fast.size(); ++k) {
            bool taken = false;
            std::string why = p.fast[k]->Disagreement(text, *p.re, &taken);
            if (!why.empty()) return At(f, Idx(path + ".fast", k), why + " on " + at);
            fast_taken += taken;
          }
        }
        return OkStatus();
      };
      for (size_t s = 0; s < item["samples"].size(); ++s) {
        std::string spath = Idx(path + ".samples", s);
        const json& sample = item["samples"][s];
        if (!sample.is_object() || !sample.contains("line") || !sample["line"].is_string()) {
          return At(f, spath, "a sample is {\"line\": ..., \"fields\": {...}}");
        }
        std::string line = sample["line"];
        TPT_RETURN_IF_ERROR(check_fast(line, spath));
        if (!has_literal(p, line)) {
          return At(f, spath + ".line", "holds none of the pattern's literals, so the prefilter would skip it");
        }
        Event e;
        std::string err;
        if (!try_match(p, line, &e, &err)) return At(f, spath + ".line", "the regex matches nothing in this sample");
        if (!err.empty()) return At(f, spath + ".line", err);
        std::string why = CompareFields(sample.value("fields", json::object()), e.fields());
        if (!why.empty()) return At(f, spath + ".fields", why);
      }
      for (size_t s = 0; s < item["near_misses"].size(); ++s) {
        const json& nm = item["near_misses"][s];
        std::string line = nm.is_string() ? nm.get<std::string>() : nm.value("line", "");
        TPT_RETURN_IF_ERROR(check_fast(line, Idx(path + ".near_misses", s)));
        Event e;
        std::string err;
        if (has_literal(p, line) && try_match(p, line, &e, &err)) {
          return At(f, Idx(path + ".near_misses", s), "this near miss matches the pattern; tighten the regex");
        }
      }
      if (!p.fast.empty() && fast_taken == 0) {
        return At(f, path + ".fast", "no sample takes the fast layout; add a sample with the layout it is for");
      }
    }
  }
  if (d.contains("blocks")) {
    for (size_t i = 0; i < d["blocks"].size(); ++i) {
      const BlockSpec& b = set_.blocks_[first_block + i];
      const json& item = d["blocks"][i];
      std::string path = Idx("$.blocks", i);
      for (size_t s = 0; s < item["samples"].size(); ++s) {
        std::string spath = Idx(path + ".samples", s);
        const json& sample = item["samples"][s];
        std::vector<std::string> lines = StringList(sample.value("lines", json()));
        if (lines.size() < 2) return At(f, spath + ".lines", "a block sample needs the start line and the end line");
        auto stripped = [&](const std::string& l) {
          LineMeta meta;
          Stripped st = set_.StripLine(l, &meta);
          return l.substr(st.begin, st.end - st.begin);
        };
        if (!RE2::PartialMatch(stripped(lines.front()), *b.start)) {
          return At(f, spath + ".lines[0]", "does not match the block's start");
        }
        // Without an end, every line after the start continues the record.
        for (size_t k = 1; k + (b.end ? 1 : 0) < lines.size(); ++k) {
          if (!RE2::PartialMatch(stripped(lines[k]), *b.continuation)) {
            return At(f, Idx(spath + ".lines", k), "does not match the block's continuation");
          }
        }
        json fields = b.set;
        if (b.end && !set_.MatchBlockEnd(b, stripped(lines.back()), &fields)) {
          return At(f, Idx(spath + ".lines", lines.size() - 1), "does not match the block's end");
        }
        std::string why = CompareFields(sample.value("fields", json::object()), fields);
        if (!why.empty()) return At(f, spath + ".fields", why);
      }
    }
  }
  (void)first_wrapper;
  (void)first_prefix;
  return OkStatus();
}

}  // namespace tpt
