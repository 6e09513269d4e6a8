// rule_file.cc: reading and checking rule and finding files (the shared schema).
#include "rules/rule_file.h"
#include "base/read_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "rules/functions.h"
#include "rules/memory_calls.h"
#include "rules/run_index.h"

namespace tpt {

const std::set<std::string>& SharedKeys() {
  static const std::set<std::string> k = {"schema", "id",  "title", "description", "sources", "requires",
                                          "anchor", "let", "model", "after",       "when",    "evidence"};
  return k;
}

namespace {

// A rule file is a few KiB; the cap only stops a device or a runaway file.
constexpr size_t kMaxRuleFileBytes = 128u << 20;

std::set<std::string> With(std::initializer_list<const char*> extra) {
  std::set<std::string> k = SharedKeys();
  for (const char* e : extra) k.insert(e);
  return k;
}

}  // namespace

const std::set<std::string>& DiagnosisKeys() {
  static const std::set<std::string> k =
      With({"root_cause", "tier", "confidence", "priority", "explanation", "remedy", "ruled_out"});
  return k;
}

const std::set<std::string>& FindingKeys() {
  static const std::set<std::string> k = With({"severity", "warning_when", "advice"});
  return k;
}

bool IsSnakeName(const std::string& s) {
  return !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos &&
         !std::isdigit(static_cast<unsigned char>(s[0]));
}

Status RuleChecker::Error(const std::string& path, const std::string& why) const {
  return InvalidArgumentError(file_ + ": " + path + ": " + why + " (the rule language: tptriage help rule-files)");
}

namespace {

// The most keys one object of a rule file may hold. A file keeps its keys in
// order (`let` is evaluated in file order), and an ordered object finds a key
// by a walk: 100,000 `let` names took 27 s to load.
constexpr size_t kMaxObjectKeys = 1024;

// The JSON path of the first object of `j` with more than kMaxObjectKeys keys.
std::optional<std::pair<std::string, size_t>> OversizedObject(const nlohmann::json& j, const std::string& path) {
  if (j.is_object()) {
    if (j.size() > kMaxObjectKeys) return std::make_pair(path, j.size());
    for (const auto& [k, v] : j.items()) {
      if (auto hit = OversizedObject(v, path + "." + k)) return hit;
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      if (auto hit = OversizedObject(j[i], path + "[" + std::to_string(i) + "]")) return hit;
    }
  }
  return std::nullopt;
}

}  // namespace

StatusOr<RuleChecker::ojson> RuleChecker::ParseObject(const std::string& text,
                                                      const std::set<std::string>& keys) const {
  // Sized first with an unordered read (a key found by a tree, not a walk).
  const nlohmann::json sized = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (sized.is_discarded()) return Error("$", "not valid JSON");
  if (auto big = OversizedObject(sized, "$")) {
    return Error(big->first, "holds " + std::to_string(big->second) + " keys; at most " +
                                 std::to_string(kMaxObjectKeys) + " (split the rule into several files)");
  }
  ojson j = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error("$", "not valid JSON");
  if (!j.is_object()) return Error("$", "expected a JSON object");
  for (const auto& [k, v] : j.items())
    if (!keys.count(k)) return Error("$." + k, "unknown key");
  if (j.contains("schema") && j["schema"] != 1) return Error("$.schema", "only schema 1 is known");
  return j;
}

bool RuleChecker::Known(const std::string& v) const { return defined_.count(v) || RunScope::IsVariable(v); }

StatusOr<ExprPtr> RuleChecker::Expr(const std::string& path, const ojson& j) const {
  if (!j.is_string()) return Error(path, "expected an expression string");
  auto e = ParseExpr(j.get<std::string>());
  if (!e.ok()) return Error(path, e.status().message());
  std::vector<std::string> vars, funcs;
  std::vector<size_t> arity;
  (*e)->Names(&vars, &funcs, &arity);
  for (size_t i = 0; i < funcs.size(); ++i) {
    const FunctionDef* f = FindFunction(funcs[i]);
    if (!f) return Error(path, "unknown function '" + funcs[i] + "'");
    if (static_cast<int>(arity[i]) < f->min_args || (f->max_args >= 0 && static_cast<int>(arity[i]) > f->max_args))
      return Error(path, funcs[i] + "() takes " + ArityText(*f) + ", not " + std::to_string(arity[i]));
  }
  // A regex the functions could not compile would make the rule silently never hold.
  std::vector<tpt::Expr::LiteralArg> literals;
  (*e)->LiteralArgs(&literals);
  for (const auto& l : literals) {
    if (RegexArgument(l.func) != static_cast<int>(l.index)) continue;
    if (std::string why = PatternError(l.text); !why.empty())
      return Error(path, l.func + "(): the regex '" + l.text + "' does not compile (" + why +
                             "; RE2 syntax: no backreferences or lookaround)");
  }
  for (const auto& v : vars)
    if (!Known(v))
      return Error(path, "unknown name '" + v + "' (define it in \"let\" above, or use anchor.<field>, "
                         "config.<key>, env.<NAME>)");
  return *e;
}

Status RuleChecker::CheckTemplate(const std::string& path, const std::string& text) const {
  for (size_t p = 0; (p = text.find('{', p)) != std::string::npos;) {
    size_t q = text.find('}', p);
    if (q == std::string::npos) return Error(path, "unclosed '{' in template");
    std::string name = text.substr(p + 1, q - p - 1);
    if (size_t colon = name.find(':'); colon != std::string::npos) {
      std::string fmt = name.substr(colon + 1);
      name.resize(colon);
      if (fmt.size() != 3 || fmt[0] != '.' || !std::isdigit(static_cast<unsigned char>(fmt[1])) || fmt[2] != 'f')
        return Error(path, "format '" + fmt + "' of {" + name + "} is not .Nf");
    }
    if (!Known(name)) return Error(path, "template uses '{" + name + "}' which the file does not define");
    p = q + 1;
  }
  return OkStatus();
}

StatusOr<std::string> RuleChecker::Str(const ojson& obj, const std::string& path, const char* key,
                                       bool required) const {
  if (!obj.contains(key)) {
    if (required) return Error(path, std::string("missing required key \"") + key + "\"");
    return std::string();
  }
  if (!obj[key].is_string()) return Error(path + "." + key, "expected a string");
  return obj[key].get<std::string>();
}

StatusOr<std::vector<std::string>> RuleChecker::StringList(const std::string& path, const ojson& j) const {
  std::vector<std::string> out;
  if (j.is_string()) {
    out.push_back(j.get<std::string>());
    return out;
  }
  if (!j.is_array()) return Error(path, "expected a string or an array of strings");
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) return Error(path + "[" + std::to_string(i) + "]", "expected a string");
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

StatusOr<std::vector<TextDef>> RuleChecker::Texts(const std::string& path, const ojson& j) const {
  std::vector<TextDef> out;
  if (j.is_string()) {
    TPT_RETURN_IF_ERROR(CheckTemplate(path, j.get<std::string>()));
    out.push_back({nullptr, j.get<std::string>()});
    return out;
  }
  if (!j.is_array() || j.empty()) return Error(path, "expected a template or a non-empty array of {\"when\", \"text\"}");
  for (size_t i = 0; i < j.size(); ++i) {
    std::string p = path + "[" + std::to_string(i) + "]";
    if (!j[i].is_object()) return Error(p, "expected {\"when\": ..., \"text\": ...}");
    for (const auto& [k, v] : j[i].items())
      if (k != "text" && k != "when") return Error(p + "." + k, "unknown key");
    TextDef d;
    auto text = Str(j[i], p, "text", true);
    if (!text.ok()) return text.status();
    d.text = *text;
    TPT_RETURN_IF_ERROR(CheckTemplate(p + ".text", d.text));
    if (j[i].contains("when")) {
      auto e = Expr(p + ".when", j[i]["when"]);
      if (!e.ok()) return e.status();
      d.when = *e;
    }
    out.push_back(std::move(d));
  }
  return out;
}

Status RuleChecker::Kinds(const std::string& path, const std::vector<std::string>& kinds) const {
  for (const auto& k : kinds)
    if (!RunScope::IsKnownKind(k)) return Error(path, "unknown event kind '" + k + "' (tptriage help kinds)");
  return OkStatus();
}

Status RuleChecker::Lets(const ojson& j, const char* key, std::vector<std::pair<std::string, ExprPtr>>* out) {
  if (!j.contains(key)) return OkStatus();
  if (!j[key].is_object()) return Error(std::string("$.") + key, "expected an object name -> expression");
  for (const auto& [name, ex] : j[key].items()) {
    std::string path = std::string("$.") + key + "." + name;
    if (!IsSnakeName(name)) return Error(path, "names are lower_snake_case");
    auto e = Expr(path, ex);
    if (!e.ok()) return e.status();
    out->emplace_back(name, *e);
    Define(name);
  }
  return OkStatus();
}

Status RuleChecker::ParseBody(const ojson& j, bool anchor_required, RuleBody* r) {
  r->source = file_;
  auto id = Str(j, "$", "id", true);
  if (!id.ok()) return id.status();
  r->id = *id;
  if (!IsSnakeName(r->id)) return Error("$.id", "ids are lower_snake_case");
  auto title = Str(j, "$", "title", true);
  if (!title.ok()) return title.status();
  r->title = *title;

  if (j.contains("requires")) {
    auto l = StringList("$.requires", j["requires"]);
    if (!l.ok()) return l.status();
    r->requires_kinds = *l;
  }
  if (!j.contains("anchor") && anchor_required)
    return Error("$", "missing required key \"anchor\" (the error event kinds the rule explains)");
  if (j.contains("anchor")) {
    auto l = StringList("$.anchor", j["anchor"]);
    if (!l.ok()) return l.status();
    r->anchor_kinds = *l;
    if (r->anchor_kinds.empty()) return Error("$.anchor", "needs at least one event kind");
  }
  TPT_RETURN_IF_ERROR(Kinds("$.anchor", r->anchor_kinds));
  TPT_RETURN_IF_ERROR(Kinds("$.requires", r->requires_kinds));
  TPT_RETURN_IF_ERROR(Lets(j, "let", &r->lets));

  if (j.contains("model")) {
    ojson models = j["model"].is_array() ? j["model"] : ojson::array({j["model"]});
    for (size_t i = 0; i < models.size(); ++i) {
      std::string path = "$.model" + (j["model"].is_array() ? "[" + std::to_string(i) + "]" : std::string());
      const ojson& m = models[i];
      if (!m.is_object()) return Error(path, "expected {\"name\": ..., \"inputs\": {...}}");
      auto name = Str(m, path, "name", true);
      if (!name.ok()) return name.status();
      const ModelSpec* spec = FindModel(*name);
      if (!spec) return Error(path + ".name", "unknown memory model '" + *name + "' (" + KnownModelNames() + ")");
      ModelCall call;
      call.name = *name;
      if (m.contains("inputs")) {
        if (!m["inputs"].is_object()) return Error(path + ".inputs", "expected an object");
        for (const auto& [in, ex] : m["inputs"].items()) {
          if (std::find(spec->inputs.begin(), spec->inputs.end(), in) == spec->inputs.end())
            return Error(path + ".inputs." + in, "model '" + *name + "' has no input '" + in + "'");
          auto e = Expr(path + ".inputs." + in, ex);
          if (!e.ok()) return e.status();
          call.inputs.emplace_back(in, *e);
        }
      }
      for (const auto& o : spec->outputs) Define(o);
      r->models.push_back(std::move(call));
    }
  }
  TPT_RETURN_IF_ERROR(Lets(j, "after", &r->after));

  if (j.contains("when")) {
    auto e = Expr("$.when", j["when"]);
    if (!e.ok()) return e.status();
    r->when = *e;
  }
  if (j.contains("evidence")) {
    const ojson& ev = j["evidence"];
    ojson list = ev.is_string() ? ojson::array({ev}) : ev;
    if (!list.is_array()) return Error("$.evidence", "expected an array of \"kind\", \"kind/text\" or {kind, contains}");
    for (size_t i = 0; i < list.size(); ++i) {
      std::string path = "$.evidence[" + std::to_string(i) + "]";
      EvidenceDef d;
      if (list[i].is_string()) {
        std::string s = list[i].get<std::string>();
        size_t slash = s.find('/');
        d.kind = s.substr(0, slash);
        if (slash != std::string::npos) d.contains = s.substr(slash + 1);
      } else if (list[i].is_object()) {
        for (const auto& [k, v] : list[i].items())
          if (k != "kind" && k != "contains") return Error(path + "." + k, "unknown key");
        auto kind = Str(list[i], path, "kind", true);
        auto contains = Str(list[i], path, "contains", false);
        if (!kind.ok()) return kind.status();
        if (!contains.ok()) return contains.status();
        d.kind = *kind, d.contains = *contains;
      } else {
        return Error(path, "expected \"kind\", \"kind/text\" or {\"kind\": ..., \"contains\": ...}");
      }
      if (!RunScope::IsKnownKind(d.kind)) return Error(path, "unknown event kind '" + d.kind + "'");
      r->evidence.push_back(std::move(d));
    }
  }
  return OkStatus();
}

bool EvaluateBody(const RuleBody& body, RunScope* s) {
  for (const auto& [name, e] : body.lets) s->Set(name, e->Eval(*s));
  for (const auto& call : body.models) {
    const ModelSpec* spec = FindModel(call.name);
    if (!spec) return false;
    ModelValues in, out;
    for (const auto& [name, e] : call.inputs) in[name] = e->Eval(*s);
    spec->run(in, &out);
    for (const auto& o : spec->outputs) s->Set(o, out.count(o) ? out[o] : Value());
  }
  for (const auto& [name, e] : body.after) s->Set(name, e->Eval(*s));
  return !body.when || body.when->Eval(*s).Truthy();
}

StatusOr<RuleFiles> ReadJsonDir(const std::string& dir, const std::string& label, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return NotFoundError(label + ": not a directory (give a folder of " + what + " *.json files)");
  std::vector<std::string> paths;
  for (const auto& ent : fs::directory_iterator(dir, ec)) {
    if (ent.path().extension() == ".json") paths.push_back(ent.path().string());
  }
  if (ec) return NotFoundError(label + ": " + ec.message());
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) return NotFoundError(label + ": holds no *.json " + what + " files");
  RuleFiles files;
  for (const auto& p : paths) {
    auto text = ReadSmallFile(p, kMaxRuleFileBytes, "a " + what + " file");
    if (!text.ok()) return text.status();
    files.emplace_back(p, std::move(*text));
  }
  return files;
}

RuleFiles EmbeddedFiles(const generated::EmbeddedFile* files, size_t count) {
  RuleFiles out;
  for (size_t i = 0; i < count; ++i) out.emplace_back(files[i].name, files[i].text);
  return out;
}

RuleFiles Overlay(RuleFiles builtin, const RuleFiles& dir) {
  auto base = [](const std::string& p) { return std::filesystem::path(p).filename().string(); };
  std::set<std::string> replaced;
  for (const auto& f : dir) replaced.insert(base(f.first));
  RuleFiles out;
  for (auto& f : builtin)
    if (!replaced.count(base(f.first))) out.push_back(std::move(f));
  out.insert(out.end(), dir.begin(), dir.end());
  return out;
}

}  // namespace tpt
