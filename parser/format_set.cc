// format_set.cc: loading and checking format files, matching patterns; see
// format_set.h. Stripping wrappers and prefixes is in format_set_strip.cc.
#include "parser/format_set.h"
#include "parser/format_set_internal.h"
#include "parser/json_reuse.h"
#include "parser/match/prefilter_blob.h"
#include "parser/match/regex_groups.h"

#include <hs/hs.h>
#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

namespace tpt {

namespace format_internal {

// Error at a JSON path of a file.
Status At(const std::string& file, const std::string& path, const std::string& why) {
  return InvalidArgumentError(file + ": " + path + ": " + why);
}

std::string Idx(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

// Runs `re` with all captures; `groups` receives n+1 views (empty data() == unmatched).
bool RunRe(const RE2& re, std::string_view text, size_t pos, RE2::Anchor anchor,
           std::vector<std::string_view>* groups, bool precheck) {
  thread_local std::vector<re2::StringPiece> sp;
  sp.assign(re.NumberOfCapturingGroups() + 1, re2::StringPiece());
  // Match on the suffix, not with startpos: RE2 never matches ^ at startpos > 0.
  text = text.substr(std::min(pos, text.size()));
  re2::StringPiece piece(text.data(), text.size());
  // Most tries fail: a DFA-only run (no submatches) says so several times
  // faster than the capturing engines.
  if (precheck && !re.Match(piece, 0, piece.size(), anchor, nullptr, 0)) {
    groups->assign(re.NumberOfCapturingGroups() + 1, std::string_view());
    return false;
  }
  bool ok = re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), anchor, sp.data(),
                     static_cast<int>(sp.size()));
  groups->resize(sp.size());
  for (size_t i = 0; i < sp.size(); ++i) (*groups)[i] = std::string_view(sp[i].data(), sp[i].size());
  return ok;
}

std::vector<std::string> StringList(const nlohmann::json& j) {
  std::vector<std::string> out;
  if (j.is_string()) out.push_back(j.get<std::string>());
  if (j.is_array()) {
    for (const auto& x : j) {
      if (x.is_string()) out.push_back(x.get<std::string>());
    }
  }
  return out;
}

}  // namespace format_internal

namespace {

using nlohmann::json;
using format_internal::At;
using format_internal::Idx;
using format_internal::RunRe;
using format_internal::StringList;

std::shared_ptr<RE2> Compile(const std::string& pattern, bool caseless, std::string* error) {
  RE2::Options opt;
  opt.set_log_errors(false);
  opt.set_case_sensitive(!caseless);
  opt.set_max_mem(64 << 20);
  auto re = std::make_shared<RE2>(pattern, opt);
  if (!re->ok()) {
    *error = re->error();
    return nullptr;
  }
  return re;
}

void ComputeFirstByteRange(PrefixSpec* p) {
  std::string min, max;
  if (!p->re->PossibleMatchRange(&min, &max, 4) || min.empty() || max.empty()) return;
  p->first_min = static_cast<unsigned char>(min[0]);
  p->first_max = static_cast<unsigned char>(max[0]);
}

PrefixSpec::Group::Role GroupRole(const std::string& name) {
  using G = PrefixSpec::Group;
  static const std::map<std::string, G::Role> k = {
      {"date", G::kDate},   {"time", G::kTime},         {"month_day", G::kMonthDay}, {"ts", G::kTs},
      {"host", G::kHost},   {"process", G::kProcess},   {"rank", G::kRank},          {"local_rank", G::kLocalRank},
      {"pid", G::kPid},     {"dp_rank", G::kDp},        {"pp_rank", G::kPp},         {"tp_rank", G::kTp},
      {"ep_rank", G::kEp}};
  auto it = k.find(name);
  return it == k.end() ? G::kOther : it->second;
}

RegexGroups GroupsOf(const RE2& re) {
  RegexGroups g;
  g.count = re.NumberOfCapturingGroups();
  for (const auto& [name, index] : re.NamedCapturingGroups()) g.named[name] = index;
  return g;
}

int GroupIndex(const RegexGroups& groups, const std::string& name) {
  auto it = groups.named.find(name);
  return it == groups.named.end() ? -1 : it->second;
}

Status ParseFields(const std::string& file, const std::string& path, const json& spec, const RegexGroups& re,
                   std::vector<FieldSpec>* out) {
  if (spec.is_null()) return OkStatus();
  if (!spec.is_object()) return At(file, path, "must be an object of field name -> {group, type, ...}");
  for (auto it = spec.begin(); it != spec.end(); ++it) {
    std::string fpath = path + "." + it.key();
    const json& f = it.value();
    if (!f.is_object()) return At(file, fpath, "must be an object {group, type, unit}");
    FieldSpec fs;
    fs.name = it.key();
    fs.group = f.value("group", it.key());
    fs.type = f.value("type", "string");
    fs.unit = f.value("unit", "");
    fs.unit_group = f.value("unit_group", "");
    fs.optional = f.value("optional", false);
    fs.percent = f.value("percent", false);
    if (!IsSchemaType(fs.type)) {
      return At(file, fpath + ".type",
                "unknown type '" + fs.type + "' (int, float, string, bool, bytes, seconds, fraction, list)");
    }
    if (!fs.unit.empty() && !IsSchemaUnit(fs.unit)) {
      return At(file, fpath + ".unit",
                "unknown unit '" + fs.unit + "' (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB, GB_as_GiB; s, ms, us, min)");
    }
    fs.number_kind = fs.type == "int" ? 'i' : fs.type == "float" ? 'f' : fs.type == "fraction" ? 'r' : 0;
    if (fs.type == "bytes" && fs.unit.empty() && fs.unit_group.empty()) {
      return At(file, fpath, "a bytes field needs \"unit\" or \"unit_group\"");
    }
    fs.group_index = GroupIndex(re, fs.group);
    if (fs.group_index < 0) {
      return At(file, fpath + ".group", "group '" + fs.group + "' is not captured by the regex (use (?P<" +
                                            fs.group + ">...))");
    }
    if (!fs.unit_group.empty()) {
      fs.unit_group_index = GroupIndex(re, fs.unit_group);
      if (fs.unit_group_index < 0) {
        return At(file, fpath + ".unit_group", "group '" + fs.unit_group + "' is not captured by the regex");
      }
    }
    out->push_back(std::move(fs));
  }
  return OkStatus();
}

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

// a < b as std::string compares them; names mostly differ in their first byte.
bool KeyLess(const std::string& a, const std::string& b) {
  unsigned char ca = a.empty() ? 0 : static_cast<unsigned char>(a[0]);
  unsigned char cb = b.empty() ? 0 : static_cast<unsigned char>(b[0]);
  return ca != cb ? ca < cb : a < b;
}

// Fills `fields` from captured groups, then the constants `set` (which win
// over a field of the same name). Missing optional groups are skipped. Specs
// and constants are both sorted by name (they come from JSON objects), so
// they are set merged, in the order of the fields object's keys: a recycled
// object is then refilled node after node (json_reuse.h).
bool ConvertFields(const std::vector<FieldSpec>& specs, const std::vector<std::string_view>& groups,
                   ObjectFiller* fields, std::string* error, const json* set = nullptr) {
  const json::object_t* constants = set && set->is_object() ? &set->get_ref<const json::object_t&>() : nullptr;
  json::object_t::const_iterator set_it, set_end;
  if (constants) {
    set_it = constants->begin();
    set_end = constants->end();
  }
  for (const FieldSpec& f : specs) {
    if (constants) {
      for (; set_it != set_end && KeyLess(set_it->first, f.name); ++set_it) {
        fields->SetCopy(set_it->first, set_it->second);
      }
    }
    std::string_view text = groups[f.group_index];
    if (text.data() == nullptr) continue;  // group did not participate
    // Plain numbers (what \d+ and [\d.]+ capture) need no trimming, no
    // separators and no '%': the value ConvertField would give, minus the
    // checks and the Status. Anything else is ConvertField's.
    if (f.number_kind == 'i') {
      int64_t v = 0;
      if (ParsePlainInt(text, &v)) {
        fields->Set(f.name, v);
        continue;
      }
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && p == text.data() + text.size() && !text.empty() && text[0] != '-') {
        fields->Set(f.name, v);
        continue;
      }
    } else if (f.number_kind != 0) {
      double v = 0;
      bool plain = ParsePlainDecimal(text, &v);
      if (!plain) {
        auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        plain = ec == std::errc() && p == text.data() + text.size() && !text.empty() && IsAsciiDigit(text[0]);
      }
      if (plain) {
        fields->Set(f.name, f.number_kind == 'r' && f.percent ? v / 100.0 : v);
        continue;
      }
    } else if (f.type.size() == 6 && f.type[0] == 's') {  // "string": ConvertField's SanitizeUtf8, in place
      if (IsValidUtf8(text)) {
        fields->SetString(f.name, text);
      } else {
        fields->SetString(f.name, SanitizeUtf8(text));
      }
      continue;
    } else if (f.type.size() == 4 && f.type[0] == 'b') {  // "bool": Python's spellings first
      if (SameText(text, "True") || SameText(text, "true")) {
        fields->SetBool(f.name, true);
        continue;
      }
      if (SameText(text, "False") || SameText(text, "false")) {
        fields->SetBool(f.name, false);
        continue;
      }
    }
    std::string_view unit = f.unit;
    if (f.unit_group_index >= 0) {
      std::string_view u = groups[f.unit_group_index];
      if (u.data() != nullptr && !u.empty()) unit = u;
    }
    auto v = ConvertField(text, f.type, unit, f.percent);
    if (!v.ok()) {
      if (error) *error = "field '" + f.name + "': " + v.status().message();
      continue;
    }
    if (v->is_string()) {
      fields->SetString(f.name, v->get_ref<const std::string&>());
    } else {
      fields->Slot(f.name) = std::move(*v);
    }
  }
  if (constants) {
    for (; set_it != set_end; ++set_it) fields->SetCopy(set_it->first, set_it->second);
  }
  return true;
}

// A pattern's fields from its kept captures.
class FieldDecoder : public DeferredDecoder {
 public:
  FieldDecoder(std::vector<FieldSpec> specs, json set) : specs_(std::move(specs)), set_(std::move(set)) {}
  void Decode(std::string_view text, const std::vector<uint32_t>& spans, json* out) const override {
    thread_local std::vector<std::string_view> groups;
    thread_local ObjectFiller filler;
    format_internal::SpansToGroups(text, spans, &groups);
    filler.Begin(out);
    ConvertFields(specs_, groups, &filler, nullptr, &set_);
    filler.End();
  }

 private:
  std::vector<FieldSpec> specs_;
  json set_;
};

}  // namespace

// ---- LazyRe ------------------------------------------------------------------

struct LazyRe::State {
  std::once_flag once;
  std::string pattern;
  bool caseless = false;
  std::shared_ptr<RE2> re;
};

LazyRe::LazyRe(std::shared_ptr<RE2> compiled) {
  if (!compiled) return;
  state_ = std::make_shared<State>();
  state_->re = std::move(compiled);
}

LazyRe::LazyRe(std::string pattern, bool caseless) : state_(std::make_shared<State>()) {
  state_->pattern = std::move(pattern);
  state_->caseless = caseless;
}

bool LazyRe::compiled() const { return state_ && state_->re; }

const RE2* LazyRe::get() const {
  std::call_once(state_->once, [s = state_.get()] {
    if (s->re) return;
    std::string err;
    s->re = Compile(s->pattern, s->caseless, &err);
    // Only the compiled-in files are deferred, and formats_test compiles each
    // of them: should one fail here anyway, it matches nothing.
    if (!s->re) s->re = std::make_shared<RE2>("[^\\x00-\\x{10FFFF}]");
  });
  return state_->re.get();
}

// ---- FormatSet ---------------------------------------------------------------

void FormatSet::HsDeleter::operator()(hs_database* db) const { hs_free_database(db); }

FormatSet::FormatSet() = default;
FormatSet::FormatSet(FormatSet&&) noexcept = default;
FormatSet& FormatSet::operator=(FormatSet&&) noexcept = default;
FormatSet::~FormatSet() = default;

std::vector<std::string> FormatSet::families() const { return families_; }

// The samples of the compiled-in files are run by formats_test in every build
// (LoadBuiltinChecked); running them again on each start cost 0.05-0.08 s.
// Its literal database was compiled by the build (prefilter_blob.h).
StatusOr<FormatSet> FormatSet::LoadBuiltin(bool strict) {
  return LoadImpl(BuiltinSources(), strict, /*check_samples=*/false, /*defer_regexes=*/true, prefilter::EmbeddedBlob());
}

StatusOr<FormatSet> FormatSet::LoadBuiltinChecked(bool strict) { return Load(BuiltinSources(), strict); }

StatusOr<FormatSet> FormatSet::LoadDir(const std::string& dir, bool strict, bool with_builtin) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return NotFoundError("--formats " + dir + ": not a directory; give the folder holding the *.json format files");
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().string());
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) return NotFoundError("--formats " + dir + ": no *.json format files in it");
  // A *.json entry that cannot be read (a directory, a symlink loop, no
  // permission) is left out with a problem, like a file that does not parse.
  std::vector<FormatSource> files;
  std::vector<std::string> unreadable;
  for (const auto& n : names) {
    std::error_code fec;
    if (std::filesystem::is_directory(n, fec)) {
      unreadable.push_back(n + ": is a directory, not a format file");
      continue;
    }
    errno = 0;
    std::ifstream in(n, std::ios::binary);
    if (!in) {
      const int e = errno;
      unreadable.push_back(n + ": cannot read the format file" + (e != 0 ? " (" + std::string(std::strerror(e)) + ")" : ""));
      continue;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
      unreadable.push_back(n + ": cannot read the format file");
      continue;
    }
    files.push_back({n, ss.str()});
  }
  if (strict && !unreadable.empty()) return InvalidArgumentError(unreadable.front());
  if (files.empty()) {
    return NotFoundError("--formats " + dir + ": no readable *.json format file in it (" + unreadable.front() + ")");
  }
  if (with_builtin) {
    std::set<std::string> mine;
    for (const auto& f : files) mine.insert(std::filesystem::path(f.name).filename().string());
    std::vector<FormatSource> all;
    for (const auto& b : BuiltinSources()) {
      if (!mine.count(std::filesystem::path(b.name).filename().string())) all.push_back(b);
    }
    all.insert(all.end(), files.begin(), files.end());
    files = std::move(all);
  }
  auto set = Load(files, strict);
  if (set.ok()) set->problems_.insert(set->problems_.begin(), unreadable.begin(), unreadable.end());
  return set;
}

StatusOr<FormatSet> FormatSet::Load(const std::vector<FormatSource>& files, bool strict, bool check_samples,
                                     std::string_view prefilter_blob) {
  return LoadImpl(files, strict, check_samples, /*defer_regexes=*/false, prefilter_blob);
}

StatusOr<FormatSet> FormatSet::LoadImpl(const std::vector<FormatSource>& files, bool strict, bool check_samples,
                                        bool defer_regexes, std::string_view prefilter_blob) {
  // Pass 1: compile each file. Pass 2: check samples against the whole set
  // (a pattern's sample may carry another family's prefix). A file failing
  // either is dropped and the set rebuilt without it.
  std::vector<bool> good(files.size(), true);
  std::vector<std::string> problems;
  for (size_t attempt = 0; attempt <= files.size(); ++attempt) {
    FormatSet set;
    set.defer_pattern_regexes_ = defer_regexes;
    std::vector<json> docs(files.size());
    std::vector<std::array<size_t, 4>> starts(files.size());
    bool dropped = false;
    for (size_t i = 0; i < files.size(); ++i) {
      if (!good[i]) continue;
      starts[i] = {set.patterns_.size(), set.blocks_.size(), set.wrappers_.size() + set.suffixes_.size(),
                   set.prefixes_.size()};
      Status s = set.AddFile(files[i], &docs[i]);
      if (!s.ok()) {
        problems.push_back(s.message());
        good[i] = false;
        dropped = true;
      }
    }
    if (dropped) continue;  // rebuild without the bad files
    // Samples are stripped as the engine strips lines: with the prefix sets.
    TPT_RETURN_IF_ERROR(set.BuildPrefixSets());
    set.BuildDecoders();
    if (check_samples) TPT_RETURN_IF_ERROR(set.CheckPrefixAutomaton(docs));
    for (size_t i = 0; i < files.size() && !dropped && check_samples; ++i) {
      if (!good[i]) continue;
      Status s = set.CheckSamples(files[i], docs[i], starts[i][0], starts[i][1], starts[i][2], starts[i][3]);
      if (!s.ok()) {
        problems.push_back(s.message());
        good[i] = false;
        dropped = true;  // its prefixes may have helped other samples: rebuild
      }
    }
    if (dropped) continue;
    if (strict && !problems.empty()) return InvalidArgumentError(problems.front());
    if (set.patterns_.empty() && set.blocks_.empty()) {
      return InvalidArgumentError(problems.empty() ? "no format files were given"
                                                   : "no usable format file; first problem: " + problems.front());
    }
    TPT_RETURN_IF_ERROR(set.BuildPrefilter(prefilter_blob));
    problems.insert(problems.end(), set.problems_.begin(), set.problems_.end());
    set.problems_ = std::move(problems);
    return set;
  }
  return InvalidArgumentError(problems.empty() ? "format files failed their checks" : problems.front());
}

Status FormatSet::AddFile(const FormatSource& file, json* doc) {
  const std::string& f = file.name;
  try {
    *doc = json::parse(file.text);
  } catch (const json::exception& e) {
    return InvalidArgumentError(f + ": not valid JSON: " + e.what());
  }
  const json& d = *doc;
  if (!d.is_object()) return At(f, "$", "must be an object with schema, family, patterns");
  if (d.value("schema", 0) != 1) return At(f, "$.schema", "must be 1 (tptriage help format-files)");
  if (!d.contains("family") || !d["family"].is_string() || d["family"].get<std::string>().empty()) {
    return At(f, "$.family", "missing family name (e.g. \"sglang\")");
  }
  std::string family = d["family"];
  for (const auto& known : families_) {
    if (known == family) return At(f, "$.family", "family '" + family + "' is defined by another file too");
  }
  std::set<std::string> ids;
  auto check_id = [&](const std::string& path, const json& item, std::string* id) -> Status {
    if (!item.is_object()) return At(f, path, "must be an object");
    if (!item.contains("id") || !item["id"].is_string() || item["id"].get<std::string>().empty()) {
      return At(f, path + ".id", "missing id");
    }
    *id = item["id"];
    if (!ids.insert(*id).second) return At(f, path + ".id", "duplicate id '" + *id + "'");
    return OkStatus();
  };
  auto compile_at = [&](const std::string& path, const json& item, const char* key, bool required, bool caseless,
                        std::shared_ptr<RE2>* re) -> Status {
    if (!item.contains(key)) {
      if (required) return At(f, path + "." + key, "missing regex");
      return OkStatus();
    }
    if (!item[key].is_string()) return At(f, path + "." + key, "must be a string");
    std::string err;
    *re = Compile(item[key], caseless, &err);
    if (!*re) return At(f, path + "." + key, err);
    return OkStatus();
  };

  // "fast": a layout string or a list of them (fast_layout.h).
  auto compile_fast = [&](const std::string& path, const json& item, const RE2& re, bool anchored,
                          std::vector<std::shared_ptr<const FastLayout>>* out) -> Status {
    if (!item.contains("fast")) return OkStatus();
    const json& fj = item["fast"];
    if (!(fj.is_string() || fj.is_array()) || StringList(fj).size() != (fj.is_string() ? 1 : fj.size())) {
      return At(f, path + ".fast", "must be a layout string or a list of them (tptriage help format-files)");
    }
    std::vector<std::string> layouts = StringList(fj);
    for (size_t k = 0; k < layouts.size(); ++k) {
      auto fl = FastLayout::Compile(layouts[k], re, anchored);
      if (!fl.ok()) return At(f, fj.is_string() ? path + ".fast" : Idx(path + ".fast", k), fl.status().message());
      out->push_back(std::make_shared<const FastLayout>(std::move(*fl)));
    }
    return OkStatus();
  };

  // Wrappers / prefixes share the PrefixSpec shape.
  auto add_prefixes = [&](const char* key, bool wrapper_file) -> Status {
    if (!d.contains(key)) return OkStatus();
    if (!d[key].is_array()) return At(f, std::string("$.") + key, "must be an array");
    for (size_t i = 0; i < d[key].size(); ++i) {
      std::string path = Idx(std::string("$.") + key, i);
      const json& item = d[key][i];
      PrefixSpec p;
      p.family = family;
      TPT_RETURN_IF_ERROR(check_id(path, item, &p.id));
      p.full_id = family + "." + p.id;
      TPT_RETURN_IF_ERROR(compile_at(path, item, "regex", true, false, &p.re));
      TPT_RETURN_IF_ERROR(compile_at(path, item, "then", false, false, &p.then));
      p.suffix = item.value("suffix", false);
      p.repeat = item.value("repeat", false);
      if (p.repeat && p.suffix) return At(f, path + ".repeat", "not for a suffix wrapper");
      if (p.suffix && item.contains("fast")) return At(f, path + ".fast", "not for a suffix wrapper");
      TPT_RETURN_IF_ERROR(compile_fast(path, item, *p.re, /*anchored=*/true, &p.fast));
      p.literals = StringList(item.value("literals", json()));
      for (const auto& [name, index] : p.re->NamedCapturingGroups()) {
        p.groups.push_back({name, index, GroupRole(name), name > std::string_view("id")});
      }
      ComputeFirstByteRange(&p);
      if (!item.contains("samples") || !item["samples"].is_array() || item["samples"].empty()) {
        return At(f, path + ".samples", "at least one sample line is required");
      }
      if (!wrapper_file) {
        prefixes_.push_back(std::move(p));
      } else if (p.suffix) {
        suffixes_.push_back(std::move(p));
      } else {
        wrappers_.push_back(std::move(p));
      }
    }
    return OkStatus();
  };
  TPT_RETURN_IF_ERROR(add_prefixes("wrappers", true));
  TPT_RETURN_IF_ERROR(add_prefixes("prefixes", false));

  if (d.contains("patterns")) {
    if (!d["patterns"].is_array()) return At(f, "$.patterns", "must be an array");
    for (size_t i = 0; i < d["patterns"].size(); ++i) {
      std::string path = Idx("$.patterns", i);
      const json& item = d["patterns"][i];
      PatternSpec p;
      p.family = family;
      TPT_RETURN_IF_ERROR(check_id(path, item, &p.id));
      if (!item.contains("kind") || !item["kind"].is_string() || item["kind"].get<std::string>().empty()) {
        return At(f, path + ".kind", "missing event kind (tptriage help kinds)");
      }
      p.kind = item["kind"];
      p.caseless = item.value("caseless", false);
      p.literals = StringList(item.value("literals", json()));
      if (p.literals.empty()) {
        return At(f, path + ".literals", "at least one literal is required (the rarest fixed text of the message)");
      }
      for (size_t k = 0; k < p.literals.size(); ++k) {
        if (p.literals[k].empty()) return At(f, Idx(path + ".literals", k), "empty literal");
      }
      std::optional<RegexGroups> groups;
      if (defer_pattern_regexes_ && !item.contains("fast") && item.contains("regex") && item["regex"].is_string()) {
        groups = ReadRegexGroups(item["regex"].get<std::string>());
      }
      if (groups) {
        p.re = LazyRe(item["regex"].get<std::string>(), p.caseless);
      } else {
        std::shared_ptr<RE2> re;
        TPT_RETURN_IF_ERROR(compile_at(path, item, "regex", true, p.caseless, &re));
        groups = GroupsOf(*re);
        p.re = std::move(re);
      }
      TPT_RETURN_IF_ERROR(ParseFields(f, path + ".fields", item.value("fields", json()), *groups, &p.fields));
      if (item.contains("kv_group")) {
        std::string g = item.value("kv_group", "");
        p.kv_group_index = GroupIndex(*groups, g);
        if (p.kv_group_index < 0) return At(f, path + ".kv_group", "group '" + g + "' is not captured by the regex");
      }
      if (item.contains("set")) {
        if (!item["set"].is_object()) return At(f, path + ".set", "must be an object of constant fields");
        p.set = item["set"];
      }
      p.consequence = item.value("consequence", false);
      // (Only a pattern with a fast layout is compiled now: the layout is checked against it.)
      if (item.contains("fast")) TPT_RETURN_IF_ERROR(compile_fast(path, item, *p.re, false, &p.fast));
      if (!item.contains("samples") || !item["samples"].is_array() || item["samples"].empty()) {
        return At(f, path + ".samples", "at least one sample {line, fields} is required");
      }
      if (!item.contains("near_misses") || !item["near_misses"].is_array() || item["near_misses"].empty()) {
        return At(f, path + ".near_misses", "at least one near miss (a line that must not match) is required");
      }
      patterns_.push_back(std::move(p));
    }
  }

  if (d.contains("blocks")) {
    if (!d["blocks"].is_array()) return At(f, "$.blocks", "must be an array");
    for (size_t i = 0; i < d["blocks"].size(); ++i) {
      std::string path = Idx("$.blocks", i);
      const json& item = d["blocks"][i];
      BlockSpec b;
      b.family = family;
      TPT_RETURN_IF_ERROR(check_id(path, item, &b.id));
      b.kind = item.value("kind", "");
      if (b.kind.empty()) return At(f, path + ".kind", "missing event kind");
      b.literals = StringList(item.value("literals", json()));
      if (b.literals.empty()) return At(f, path + ".literals", "at least one literal of the start line is required");
      TPT_RETURN_IF_ERROR(compile_at(path, item, "start", true, false, &b.start));
      TPT_RETURN_IF_ERROR(compile_at(path, item, "continuation", true, false, &b.continuation));
      TPT_RETURN_IF_ERROR(compile_at(path, item, "end", true, false, &b.end));
      TPT_RETURN_IF_ERROR(ParseFields(f, path + ".fields", item.value("fields", json()), GroupsOf(*b.end), &b.fields));
      b.max_lines = item.value("max_lines", 500);
      b.headerless = item.value("headerless", false);
      if (item.contains("set") && item["set"].is_object()) b.set = item["set"];
      if (!item.contains("samples") || !item["samples"].is_array() || item["samples"].empty()) {
        return At(f, path + ".samples", "at least one sample {lines, fields} is required");
      }
      blocks_.push_back(std::move(b));
    }
  }
  if (!d.contains("patterns") && !d.contains("prefixes") && !d.contains("wrappers") && !d.contains("blocks")) {
    return At(f, "$", "defines nothing (patterns, prefixes, wrappers or blocks)");
  }
  families_.push_back(family);
  return OkStatus();
}

bool FormatSet::MatchPattern(const PatternSpec& p, std::string_view text, Event* e, std::string* error,
                             const char* defer_base, size_t defer_limit) const {
  thread_local std::vector<std::string_view> groups;
  bool fast = false;
  for (const auto& fl : p.fast) {
    if ((fast = fl->Match(text, &groups))) break;
  }
  // The literal prefilter already said this line is likely: capture at once.
  if (!fast && !RunRe(*p.re, text, 0, RE2::UNANCHORED, &groups, /*precheck=*/false)) return false;
  // A recycled slot mostly held an event of this very pattern: compare before copying.
  if (!SameText(e->kind, p.kind)) e->kind = p.kind;
  if (!SameText(e->family, p.family)) e->family = p.family;
  if (!SameText(e->pattern_id, p.id)) e->pattern_id = p.id;
  e->consequence = p.consequence;
  Event::Deferred& later = e->deferred_fields_;
  if (defer_base && p.decoder && format_internal::RecordSpans(groups, defer_base, defer_limit, &later.spans)) {
    if (later.decoder != p.decoder) later.decoder = p.decoder;
    later.pending = true;
    return true;
  }
  later.pending = false;
  // Typed fields go into the existing object in place (a recycled Event's
  // map nodes and strings are reused where keys repeat; json_reuse.h).
  thread_local ObjectFiller fields;
  json& out = e->fields_;
  if (p.kv_group_index >= 0) out = json::object();  // server args: keys vary, start afresh
  fields.Begin(&out);
  ConvertFields(p.fields, groups, &fields, error, p.kv_group_index >= 0 ? nullptr : &p.set);
  if (p.kv_group_index >= 0 && groups[p.kv_group_index].data() != nullptr) {
    json args = ParsePythonKv(groups[p.kv_group_index]);
    CopyKnownServerArgs(args, &out);
    out["args"] = std::move(args);
    for (auto it = p.set.begin(); it != p.set.end(); ++it) out[it.key()] = it.value();
    return true;  // fresh object: nothing stale to erase
  }
  fields.End();
  return true;
}

void FormatSet::BuildDecoders() {
  for (PatternSpec& p : patterns_) {
    p.decoder = p.kv_group_index >= 0 ? nullptr : std::make_shared<FieldDecoder>(p.fields, p.set);
  }
  for (auto* list : {&wrappers_, &suffixes_, &prefixes_}) {
    for (PrefixSpec& p : *list) p.decoder = format_internal::NewPrefixDecoder(p);
  }
}

std::vector<const FastLayout*> FormatSet::FastLayouts() const {
  std::vector<const FastLayout*> out;
  for (const auto& p : patterns_) {
    for (const auto& f : p.fast) out.push_back(f.get());
  }
  for (const auto* list : {&wrappers_, &prefixes_, &suffixes_}) {
    for (const auto& p : *list) {
      for (const auto& f : p.fast) out.push_back(f.get());
    }
  }
  return out;
}

bool FormatSet::MatchBlockEnd(const BlockSpec& b, std::string_view text, json* fields) const {
  std::vector<std::string_view> groups;
  if (!RunRe(*b.end, text, 0, RE2::ANCHOR_START, &groups)) return false;
  *fields = json::object();
  ObjectFiller filler;
  filler.Begin(fields);
  ConvertFields(b.fields, groups, &filler, nullptr);
  filler.End();
  for (auto it = b.set.begin(); it != b.set.end(); ++it) (*fields)[it.key()] = it.value();
  return true;
}


namespace {

// The prefilter's literals in id order, their Hyperscan flags and what each id
// stands for; the last one finds ANSI colour codes, which can split a literal
// (such lines are rescanned cleaned).
void PrefilterLiterals(const std::vector<PatternSpec>& patterns, const std::vector<BlockSpec>& blocks,
                       const std::vector<PrefixSpec>& suffixes, std::vector<std::string>* lits, std::vector<unsigned>* flags,
                       std::vector<LiteralTarget>* targets) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    for (const auto& l : patterns[i].literals) {
      lits->push_back(l);
      flags->push_back(patterns[i].caseless ? HS_FLAG_CASELESS : 0);
      targets->push_back({LiteralTarget::kPattern, static_cast<int>(i)});
    }
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    for (const auto& l : blocks[i].literals) {
      lits->push_back(l);
      flags->push_back(0);
      targets->push_back({LiteralTarget::kBlockStart, static_cast<int>(i)});
    }
  }
  for (size_t i = 0; i < suffixes.size(); ++i) {
    for (const auto& l : suffixes[i].literals) {
      lits->push_back(l);
      flags->push_back(0);
      targets->push_back({LiteralTarget::kSuffix, static_cast<int>(i)});
    }
  }
  lits->push_back("\x1b[");
  flags->push_back(0);
  targets->push_back({LiteralTarget::kRescan, 0});
}

}  // namespace

Status FormatSet::BuildPrefilter(std::string_view blob) {
  std::vector<std::string> lits;
  std::vector<unsigned> flags;
  targets_.clear();
  PrefilterLiterals(patterns_, blocks_, suffixes_, &lits, &flags, &targets_);
  prefilter_from_blob_ = false;
  if (!blob.empty()) {
    if (hs_database* db = prefilter::Deserialize(blob, prefilter::Fingerprint(lits, flags))) {
      db_.reset(db);
      prefilter_from_blob_ = true;
      return OkStatus();
    }
  }
  auto db = prefilter::Compile(lits, flags);
  if (!db.ok()) return db.status();
  db_.reset(*db);
  return OkStatus();
}

StatusOr<std::string> FormatSet::SerializePrefilter() const {
  std::vector<std::string> lits;
  std::vector<unsigned> flags;
  std::vector<LiteralTarget> targets;
  PrefilterLiterals(patterns_, blocks_, suffixes_, &lits, &flags, &targets);
  return prefilter::Serialize(db_.get(), prefilter::Fingerprint(lits, flags));
}

}  // namespace tpt
