// rule.cc: the diagnosis-only keys of rule files (rules/defs), and templates.
#include "rules/rule.h"

#include <cmath>
#include <cstdio>
#include <set>

#include "rules/vocabulary.h"

namespace tpt {

StatusOr<Rule> ParseRule(const std::string& file, const std::string& text) {
  RuleChecker c(file);
  auto parsed = c.ParseObject(text, DiagnosisKeys());
  if (!parsed.ok()) return parsed.status();
  const RuleChecker::ojson& j = *parsed;
  Rule r;
  TPT_RETURN_IF_ERROR(c.ParseBody(j, /*anchor_required=*/true, &r));
  auto rc = c.Str(j, "$", "root_cause", true);
  if (!rc.ok()) return rc.status();
  r.root_cause = *rc;
  if (FindRootCause(r.root_cause) == nullptr) return c.Error("$.root_cause", "'" + r.root_cause + "' is not a taxonomy id (tptriage help root-causes)");

  if (j.contains("confidence")) {
    const auto& cj = j["confidence"];
    auto value = [&](const std::string& path, const RuleChecker::ojson& v) -> StatusOr<double> {
      if (!v.is_number()) return c.Error(path, "expected a number");
      double x = v.get<double>();
      if (x <= 0 || x > 1) return c.Error(path, "must be in (0, 1]");
      return x;
    };
    if (cj.is_array()) {
      if (cj.empty()) return c.Error("$.confidence", "expected a number or a non-empty array of {\"when\", \"value\"}");
      for (size_t i = 0; i < cj.size(); ++i) {
        std::string path = "$.confidence[" + std::to_string(i) + "]";
        if (!cj[i].is_object()) return c.Error(path, "expected {\"when\": ..., \"value\": ...}");
        for (const auto& [k, v] : cj[i].items())
          if (k != "when" && k != "value") return c.Error(path + "." + k, "unknown key");
        if (!cj[i].contains("value")) return c.Error(path, "missing required key \"value\"");
        auto x = value(path + ".value", cj[i]["value"]);
        if (!x.ok()) return x.status();
        ExprPtr when;
        bool last = i + 1 == cj.size();
        if (cj[i].contains("when") == last)
          return c.Error(path, last ? "the last value is the default: it takes no \"when\"" : "missing required key \"when\"");
        if (!last) {
          auto e = c.Expr(path + ".when", cj[i]["when"]);
          if (!e.ok()) return e.status();
          when = *e;
        }
        r.confidences.emplace_back(when, *x);
      }
      r.confidence = r.confidences.back().second;
    } else {
      auto x = value("$.confidence", cj);
      if (!x.ok()) return x.status();
      r.confidence = *x;
    }
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
  if (!j.contains("explanation")) return c.Error("$", "missing required key \"explanation\"");
  auto texts = c.Texts("$.explanation", j["explanation"]);
  if (!texts.ok()) return texts.status();
  r.explanation = texts->back().text;
  if (j["explanation"].is_array())
    for (const TextDef& t : *texts) r.explanations.emplace_back(t.when, t.text);

  if (j.contains("remedy")) {
    if (!j["remedy"].is_array()) return c.Error("$.remedy", "expected an array");
    for (size_t i = 0; i < j["remedy"].size(); ++i) {
      std::string path = "$.remedy[" + std::to_string(i) + "]";
      const auto& m = j["remedy"][i];
      if (!m.is_object()) return c.Error(path, "expected an object");
      RemedyDef d;
      auto flag = c.Str(m, path, "flag", true);
      auto value = c.Str(m, path, "value", false);
      auto dir = c.Str(m, path, "direction", true);
      auto why = c.Str(m, path, "why", true);
      auto command = c.Str(m, path, "command", false);
      auto kind = c.Str(m, path, "kind", false);
      for (auto* s : {&flag, &value, &dir, &why, &command, &kind})
        if (!s->ok()) return s->status();
      d.flag = *flag, d.value = *value, d.direction = *dir, d.why = *why, d.command = *command;
      d.kind = *kind == "fix" ? "" : *kind;
      if (!d.kind.empty() && d.kind != "next_step" && d.kind != "action")
        return c.Error(path + ".kind", "expected fix, next_step or action");
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
      const auto& m = j["ruled_out"][i];
      if (!m.is_object()) return c.Error(path, "expected an object");
      RuledOutDef d;
      auto oid = c.Str(m, path, "id", true);
      auto reason = c.Str(m, path, "reason", true);
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

StatusOr<RuleSet> RuleSet::LoadTexts(const RuleFiles& files) {
  auto rules = ParseAll<Rule>(files, ParseRule);
  if (!rules.ok()) return rules.status();
  if (rules->empty()) return InvalidArgumentError("no rules loaded");
  RuleSet set;
  set.rules_ = std::move(*rules);
  return set;
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
