// rule.cc: loading and checking rule files.
#include "rules/rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "rules/memory_calls.h"
#include "rules/run_index.h"

namespace tpt {

namespace {

using ojson = nlohmann::ordered_json;

const std::set<std::string>& TaxonomyIds() {
  // /work/shared/taxonomy.md, kept here so a rule with a typo in root_cause is rejected.
  static const std::set<std::string> ids = {
      "kv_pool_no_room", "kv_pool_too_small", "startup_free_memory_short", "weights_oom", "warmup_oom",
      "cuda_graph_capture_oom", "cuda_graph_capture_failure", "runtime_oom", "kv_pool_exhausted",
      "custom_allreduce_failure", "p2p_topology_problem", "nccl_timeout_hang", "collective_desync",
      "nccl_network_config", "shm_too_small", "nvls_fabric_manager", "duplicate_gpu", "nccl_error",
      "unsupported_gpu_arch", "cuda_driver_mismatch", "hardware_fault", "illegal_memory_access",
      "process_crashed", "port_in_use", "config_error", "disk_full", "other"};
  return ids;
}

class Checker {
 public:
  explicit Checker(std::string file) : file_(std::move(file)) {}

  Status Error(const std::string& path, const std::string& why) const {
    return InvalidArgumentError(file_ + ": " + path + ": " + why +
                                " (the rule language: tptriage help rule-files)");
  }

  // Names an expression may use: earlier lets/model outputs, scope variables.
  Status CheckNames(const std::string& path, const ExprPtr& e) const {
    std::vector<std::string> vars, funcs;
    e->Names(&vars, &funcs);
    for (const auto& f : funcs) {
      if (!IsBuiltinFunction(f) && !RunScope::IsFunction(f)) return Error(path, "unknown function '" + f + "'");
    }
    for (const auto& v : vars) {
      if (defined_.count(v) || RunScope::IsVariable(v)) continue;
      return Error(path, "unknown name '" + v + "' (define it in \"let\" above, or use anchor.<field>, "
                         "config.<key>, env.<NAME>)");
    }
    return OkStatus();
  }

  StatusOr<ExprPtr> Expr(const std::string& path, const ojson& j) {
    if (!j.is_string()) return Error(path, "expected an expression string");
    auto e = ParseExpr(j.get<std::string>());
    if (!e.ok()) return Error(path, e.status().message());
    TPT_RETURN_IF_ERROR(CheckNames(path, *e));
    return *e;
  }

  Status CheckTemplate(const std::string& path, const std::string& text) const {
    size_t p = 0;
    while ((p = text.find('{', p)) != std::string::npos) {
      size_t q = text.find('}', p);
      if (q == std::string::npos) return Error(path, "unclosed '{' in template");
      std::string name = text.substr(p + 1, q - p - 1);
      size_t colon = name.find(':');
      if (colon != std::string::npos) {
        std::string fmt = name.substr(colon + 1);
        name = name.substr(0, colon);
        if (fmt.size() != 3 || fmt[0] != '.' || !isdigit(static_cast<unsigned char>(fmt[1])) || fmt[2] != 'f')
          return Error(path, "format '" + fmt + "' of {" + name + "} is not .Nf");
      }
      if (!defined_.count(name) && !RunScope::IsVariable(name))
        return Error(path, "template uses '{" + name + "}' which the rule does not define");
      p = q + 1;
    }
    return OkStatus();
  }

  std::set<std::string> defined_;

 private:
  std::string file_;
};

StatusOr<std::vector<std::string>> StringList(const Checker& c, const std::string& path, const ojson& j) {
  std::vector<std::string> out;
  if (j.is_string()) {
    out.push_back(j.get<std::string>());
    return out;
  }
  if (!j.is_array()) return c.Error(path, "expected a string or an array of strings");
  for (size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string()) return c.Error(path + "[" + std::to_string(i) + "]", "expected a string");
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

StatusOr<std::string> Str(const Checker& c, const ojson& obj, const std::string& path, const char* key,
                          bool required) {
  if (!obj.contains(key)) {
    if (required) return c.Error(path, std::string("missing required key \"") + key + "\"");
    return std::string();
  }
  if (!obj[key].is_string()) return c.Error(path + "." + key, "expected a string");
  return obj[key].get<std::string>();
}

}  // namespace

StatusOr<Rule> ParseRule(const std::string& file, const std::string& text) {
  Checker c(file);
  ojson j = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return c.Error("$", "not valid JSON");
  if (!j.is_object()) return c.Error("$", "expected a JSON object");
  static const std::set<std::string> kKeys = {
      "schema", "id", "title", "root_cause", "description", "sources", "confidence", "tier", "priority",
      "requires", "anchor", "let", "model", "after", "when", "evidence", "explanation", "remedy",
      "ruled_out"};
  for (const auto& [k, v] : j.items()) {
    if (!kKeys.count(k)) return c.Error("$." + k, "unknown key");
  }
  if (j.contains("schema") && j["schema"] != 1) return c.Error("$.schema", "only schema 1 is known");

  Rule r;
  r.source = file;
  auto id = Str(c, j, "$", "id", true);
  if (!id.ok()) return id.status();
  r.id = *id;
  if (r.id.empty() || r.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
    return c.Error("$.id", "ids are lower_snake_case");
  auto title = Str(c, j, "$", "title", true);
  if (!title.ok()) return title.status();
  r.title = *title;
  auto rc = Str(c, j, "$", "root_cause", true);
  if (!rc.ok()) return rc.status();
  r.root_cause = *rc;
  if (!TaxonomyIds().count(r.root_cause)) return c.Error("$.root_cause", "'" + r.root_cause + "' is not a taxonomy id (tptriage help root-causes)");

  if (j.contains("confidence")) {
    if (!j["confidence"].is_number()) return c.Error("$.confidence", "expected a number");
    r.confidence = j["confidence"].get<double>();
    if (r.confidence <= 0 || r.confidence > 1) return c.Error("$.confidence", "must be in (0, 1]");
  }
  if (j.contains("priority")) {
    if (!j["priority"].is_number_integer()) return c.Error("$.priority", "expected an integer");
    r.priority = j["priority"].get<int>();
  }
  if (j.contains("tier")) {
    std::string t = j["tier"].is_string() ? j["tier"].get<std::string>() : "";
    if (t == "cause") r.tier = Tier::kCause;
    else if (t == "symptom") r.tier = Tier::kSymptom;
    else if (t == "consequence") r.tier = Tier::kConsequence;
    else return c.Error("$.tier", "expected \"cause\", \"symptom\" or \"consequence\"");
  }
  if (j.contains("requires")) {
    auto l = StringList(c, "$.requires", j["requires"]);
    if (!l.ok()) return l.status();
    r.requires_kinds = *l;
  }
  if (!j.contains("anchor")) return c.Error("$", "missing required key \"anchor\" (the error event kinds the rule explains)");
  {
    auto l = StringList(c, "$.anchor", j["anchor"]);
    if (!l.ok()) return l.status();
    r.anchor_kinds = *l;
    if (r.anchor_kinds.empty()) return c.Error("$.anchor", "needs at least one event kind");
  }
  for (const auto& k : r.anchor_kinds) {
    if (!RunScope::IsKnownKind(k)) return c.Error("$.anchor", "unknown event kind '" + k + "' (tptriage help kinds)");
  }
  for (const auto& k : r.requires_kinds) {
    if (!RunScope::IsKnownKind(k)) return c.Error("$.requires", "unknown event kind '" + k + "' (tptriage help kinds)");
  }

  auto lets = [&](const char* key, std::vector<std::pair<std::string, ExprPtr>>* out) -> Status {
    if (!j.contains(key)) return OkStatus();
    if (!j[key].is_object()) return c.Error(std::string("$.") + key, "expected an object name -> expression");
    for (const auto& [name, ex] : j[key].items()) {
      std::string path = std::string("$.") + key + "." + name;
      if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
        return c.Error(path, "names are lower_snake_case");
      auto e = c.Expr(path, ex);
      if (!e.ok()) return e.status();
      out->emplace_back(name, *e);
      c.defined_.insert(name);
    }
    return OkStatus();
  };
  TPT_RETURN_IF_ERROR(lets("let", &r.lets));

  if (j.contains("model")) {
    ojson models = j["model"].is_array() ? j["model"] : ojson::array({j["model"]});
    for (size_t i = 0; i < models.size(); ++i) {
      std::string path = "$.model" + (j["model"].is_array() ? "[" + std::to_string(i) + "]" : std::string());
      const ojson& m = models[i];
      if (!m.is_object()) return c.Error(path, "expected {\"name\": ..., \"inputs\": {...}}");
      auto name = Str(c, m, path, "name", true);
      if (!name.ok()) return name.status();
      const ModelSpec* spec = FindModel(*name);
      if (!spec) return c.Error(path + ".name", "unknown memory model '" + *name + "' (" + KnownModelNames() + ")");
      ModelCall call;
      call.name = *name;
      if (m.contains("inputs")) {
        if (!m["inputs"].is_object()) return c.Error(path + ".inputs", "expected an object");
        for (const auto& [in, ex] : m["inputs"].items()) {
          if (std::find(spec->inputs.begin(), spec->inputs.end(), in) == spec->inputs.end())
            return c.Error(path + ".inputs." + in, "model '" + *name + "' has no input '" + in + "'");
          auto e = c.Expr(path + ".inputs." + in, ex);
          if (!e.ok()) return e.status();
          call.inputs.emplace_back(in, *e);
        }
      }
      for (const auto& o : spec->outputs) c.defined_.insert(o);
      r.models.push_back(std::move(call));
    }
  }
  TPT_RETURN_IF_ERROR(lets("after", &r.after));

  if (j.contains("when")) {
    auto e = c.Expr("$.when", j["when"]);
    if (!e.ok()) return e.status();
    r.when = *e;
  }
  if (j.contains("evidence")) {
    auto l = StringList(c, "$.evidence", j["evidence"]);
    if (!l.ok()) return l.status();
    r.evidence_kinds = *l;
    for (const auto& k : r.evidence_kinds)
      if (!RunScope::IsKnownKind(k)) return c.Error("$.evidence", "unknown event kind '" + k + "'");
  }
  if (j.contains("explanation") && j["explanation"].is_array()) {
    const ojson& list = j["explanation"];
    if (list.empty()) return c.Error("$.explanation", "an explanation list needs at least one {\"text\"}");
    for (size_t i = 0; i < list.size(); ++i) {
      std::string path = "$.explanation[" + std::to_string(i) + "]";
      if (!list[i].is_object()) return c.Error(path, "expected {\"when\": ..., \"text\": ...}");
      auto text = Str(c, list[i], path, "text", true);
      if (!text.ok()) return text.status();
      TPT_RETURN_IF_ERROR(c.CheckTemplate(path + ".text", *text));
      ExprPtr when;
      if (list[i].contains("when")) {
        auto e = c.Expr(path + ".when", list[i]["when"]);
        if (!e.ok()) return e.status();
        when = *e;
      }
      r.explanations.emplace_back(when, *text);
    }
    r.explanation = r.explanations.back().second;
  } else {
    auto expl = Str(c, j, "$", "explanation", true);
    if (!expl.ok()) return expl.status();
    r.explanation = *expl;
    TPT_RETURN_IF_ERROR(c.CheckTemplate("$.explanation", r.explanation));
  }

  if (j.contains("remedy")) {
    if (!j["remedy"].is_array()) return c.Error("$.remedy", "expected an array");
    for (size_t i = 0; i < j["remedy"].size(); ++i) {
      std::string path = "$.remedy[" + std::to_string(i) + "]";
      const ojson& m = j["remedy"][i];
      if (!m.is_object()) return c.Error(path, "expected an object");
      RemedyDef d;
      auto flag = Str(c, m, path, "flag", true);
      auto value = Str(c, m, path, "value", false);
      auto dir = Str(c, m, path, "direction", true);
      auto why = Str(c, m, path, "why", true);
      auto command = Str(c, m, path, "command", false);
      for (auto* s : {&flag, &value, &dir, &why, &command})
        if (!s->ok()) return s->status();
      d.flag = *flag, d.value = *value, d.direction = *dir, d.why = *why, d.command = *command;
      static const std::set<std::string> kDirs = {"increase", "decrease", "set", "unset"};
      if (!kDirs.count(d.direction)) return c.Error(path + ".direction", "expected increase, decrease, set or unset");
      TPT_RETURN_IF_ERROR(c.CheckTemplate(path + ".value", d.value));
      TPT_RETURN_IF_ERROR(c.CheckTemplate(path + ".why", d.why));
      TPT_RETURN_IF_ERROR(c.CheckTemplate(path + ".command", d.command));
      if (m.contains("when")) {
        auto e = c.Expr(path + ".when", m["when"]);
        if (!e.ok()) return e.status();
        d.when = *e;
      }
      r.remedy.push_back(std::move(d));
    }
  }
  if (j.contains("ruled_out")) {
    if (!j["ruled_out"].is_array()) return c.Error("$.ruled_out", "expected an array");
    for (size_t i = 0; i < j["ruled_out"].size(); ++i) {
      std::string path = "$.ruled_out[" + std::to_string(i) + "]";
      const ojson& m = j["ruled_out"][i];
      if (!m.is_object()) return c.Error(path, "expected an object");
      RuledOutDef d;
      auto oid = Str(c, m, path, "id", true);
      auto reason = Str(c, m, path, "reason", true);
      if (!oid.ok()) return oid.status();
      if (!reason.ok()) return reason.status();
      d.id = *oid, d.reason = *reason;
      TPT_RETURN_IF_ERROR(c.CheckTemplate(path + ".reason", d.reason));
      if (m.contains("when")) {
        auto e = c.Expr(path + ".when", m["when"]);
        if (!e.ok()) return e.status();
        d.when = *e;
      }
      r.ruled_out.push_back(std::move(d));
    }
  }
  return r;
}

StatusOr<RuleSet> RuleSet::LoadTexts(const std::vector<std::pair<std::string, std::string>>& files) {
  RuleSet set;
  std::map<std::string, std::string> seen;  // id -> file
  for (const auto& [name, text] : files) {
    auto r = ParseRule(name, text);
    if (!r.ok()) return r.status();
    auto [it, fresh] = seen.emplace(r->id, name);
    if (!fresh) return InvalidArgumentError(name + ": $.id: id '" + r->id + "' is also used by " + it->second);
    set.rules_.push_back(std::move(*r));
  }
  if (set.rules_.empty()) return InvalidArgumentError("no rules loaded");
  return set;
}

StatusOr<std::vector<std::pair<std::string, std::string>>> ReadJsonDir(const std::string& dir,
                                                                        const std::string& label,
                                                                        const std::string& what) {
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
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return NotFoundError(p + ": cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    files.emplace_back(p, ss.str());
  }
  return files;
}

StatusOr<RuleSet> RuleSet::LoadDir(const std::string& dir) {
  auto files = ReadJsonDir(dir, "--rules " + dir, "rule");
  if (!files.ok()) return files.status();
  return LoadTexts(*files);
}

std::string FillTemplate(const std::string& text, const Scope& scope) {
  std::string out;
  size_t p = 0;
  while (p < text.size()) {
    size_t b = text.find('{', p);
    if (b == std::string::npos) {
      out.append(text, p, std::string::npos);
      break;
    }
    size_t e = text.find('}', b);
    if (e == std::string::npos) {
      out.append(text, p, std::string::npos);
      break;
    }
    out.append(text, p, b - p);
    std::string name = text.substr(b + 1, e - b - 1);
    int decimals = -1;
    if (size_t colon = name.find(':'); colon != std::string::npos) {
      if (colon + 2 < name.size()) decimals = name[colon + 2] - '0';
      name = name.substr(0, colon);
    }
    Value v = scope.Lookup(name);
    if (v.is_null()) {
      out += "?";
    } else if (v.is_number() && decimals >= 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.*f", decimals, v.number());
      out += buf;
    } else if (v.is_number()) {
      char buf[64];
      double d = v.number();
      if (d == std::floor(d) && std::fabs(d) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", d);
      else std::snprintf(buf, sizeof buf, "%.2f", d);
      out += buf;
    } else {
      out += v.ToString();
    }
    p = e + 1;
  }
  return out;
}

}  // namespace tpt
