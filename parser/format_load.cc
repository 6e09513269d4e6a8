// format_load.cc: one format file's JSON into specs (format_spec.h), with the
// structural checks that name the file, the JSON path and the reason
// (FormatSet::AddFile). The samples are run by format_check.cc.
#include <re2/re2.h>

#include <map>
#include <optional>
#include <set>

#include "parser/format_load.h"
#include "parser/format_set.h"
#include "parser/format_set_internal.h"
#include "parser/json_text.h"
#include "parser/match/capture.h"
#include "parser/match/regex_groups.h"

namespace tpt {

namespace format_internal {

// Error at a JSON path of a file.
Status At(const std::string& file, const std::string& path, const std::string& why) {
  return InvalidArgumentError(file + ": " + path + ": " + why);
}

std::string Idx(const std::string& base, size_t i) { return base + "[" + std::to_string(i) + "]"; }

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
using format_internal::StringList;

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
    fs.json_key = JsonKeyText(fs.name);
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
    if (f.contains("or_groups")) {
      const json& alts = f["or_groups"];
      if (!alts.is_array() || alts.empty()) return At(file, fpath + ".or_groups", "must be a list of group names");
      for (const json& a : alts) {
        const int index = a.is_string() ? GroupIndex(re, a.get<std::string>()) : -1;
        if (index < 0) {
          return At(file, fpath + ".or_groups",
                    "'" + (a.is_string() ? a.get<std::string>() : a.dump()) + "' is not a group the regex captures");
        }
        fs.or_group_indexes.push_back(index);
      }
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

}  // namespace

Status FormatSet::Loader::AddFile(const FormatSource& file, json* doc) {
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
  for (const auto& known : set_.families_) {
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
    *re = CompileRegex(item[key], caseless, &err);
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
        p.groups.push_back({name, index, GroupRole(name), name > std::string_view("id"), JsonKeyText(name)});
      }
      ComputeFirstByteRange(&p);
      if (!item.contains("samples") || !item["samples"].is_array() || item["samples"].empty()) {
        return At(f, path + ".samples", "at least one sample line is required");
      }
      if (!wrapper_file) {
        set_.prefixes_.push_back(std::move(p));
      } else if (p.suffix) {
        set_.suffixes_.push_back(std::move(p));
      } else {
        set_.wrappers_.push_back(std::move(p));
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
      if (set_.defer_pattern_regexes_ && !item.contains("fast") && item.contains("regex") &&
          item["regex"].is_string()) {
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
      set_.patterns_.push_back(std::move(p));
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
      // Without an `end`, a record ends where its producer moves on (or the
      // log ends), complete: a stack dump logged by a server's watchdog.
      TPT_RETURN_IF_ERROR(compile_at(path, item, "end", false, false, &b.end));
      if (b.end) {
        TPT_RETURN_IF_ERROR(ParseFields(f, path + ".fields", item.value("fields", json()), GroupsOf(*b.end), &b.fields));
      } else if (item.contains("fields")) {
        return At(f, path + ".fields", "a block without an end has no fields to capture; use \"set\"");
      }
      b.max_lines = item.value("max_lines", 500);
      b.headerless = item.value("headerless", false);
      if (item.contains("set") && item["set"].is_object()) b.set = item["set"];
      if (!item.contains("samples") || !item["samples"].is_array() || item["samples"].empty()) {
        return At(f, path + ".samples", "at least one sample {lines, fields} is required");
      }
      set_.blocks_.push_back(std::move(b));
    }
  }
  if (!d.contains("patterns") && !d.contains("prefixes") && !d.contains("wrappers") && !d.contains("blocks")) {
    return At(f, "$", "defines nothing (patterns, prefixes, wrappers or blocks)");
  }
  set_.families_.push_back(family);
  return OkStatus();
}

}  // namespace tpt
