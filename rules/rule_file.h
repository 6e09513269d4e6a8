// rule_file.h: what diagnosis rules (rules/defs) and findings (rules/findings)
// share: one reader for their files (built in, a folder, texts), one checker
// for one file, and the keys both kinds of file have. The schema, shared and
// per kind, is documented in rules/README.md.
//
//   RuleChecker c("rules/defs/x.json");
//   auto j = c.ParseObject(text, DiagnosisKeys());     // unknown keys, schema
//   RuleBody body;
//   TPT_RETURN_IF_ERROR(c.ParseBody(*j, &body));       // id, anchor, let, model, after, when, evidence
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/embedded.h"
#include "base/status.h"
#include "rules/expr.h"

namespace tpt {

// (file name, JSON text) pairs, in load order.
using RuleFiles = std::vector<std::pair<std::string, std::string>>;

struct ModelCall {
  std::string name;                                     // e.g. "sglang_kv_pool"
  std::vector<std::pair<std::string, ExprPtr>> inputs;  // input name -> expression
};

// An evidence line to quote: an event of `kind`, optionally only one whose
// text holds `contains` (caseless). Written "kind", "kind/text" or
// {"kind": ..., "contains": ...}.
struct EvidenceDef {
  std::string kind, contains;
};

// A template chosen or joined by condition: {"when": expr, "text": template}.
struct TextDef {
  ExprPtr when;  // null: always
  std::string text;
};

// The keys of the shared schema, as parsed.
struct RuleBody {
  std::string id, title, source;            // source: the file it came from
  std::vector<std::string> requires_kinds;  // all must occur somewhere in the run
  std::vector<std::string> anchor_kinds;    // the events the rule is tried at
  std::vector<std::pair<std::string, ExprPtr>> lets;   // in file order; may use earlier names
  std::vector<ModelCall> models;                       // memory-model calls; outputs become names
  std::vector<std::pair<std::string, ExprPtr>> after;  // lets evaluated after the models
  ExprPtr when;                                        // null: always (given the anchor)
  std::vector<EvidenceDef> evidence;
};

class RunScope;

// Evaluates the body at the scope's anchor: `let` in file order, each `model`
// (its outputs become names), `after`, each name Set in `s` as it is
// computed; then `when`. True when the rule holds there.
bool EvaluateBody(const RuleBody& body, RunScope* s);

// Keys every rule and finding file may hold, and those of each kind.
const std::set<std::string>& SharedKeys();
const std::set<std::string>& DiagnosisKeys();  // SharedKeys() + root_cause, tier, ...
const std::set<std::string>& FindingKeys();    // SharedKeys() + severity, warning_when, advice

bool IsSnakeName(const std::string& s);  // lower_snake_case, not starting with a digit

// Checks one file: every error names the file, the JSON path and the reason.
class RuleChecker {
 public:
  using ojson = nlohmann::ordered_json;
  explicit RuleChecker(std::string file) : file_(std::move(file)) {}

  Status Error(const std::string& path, const std::string& why) const;
  // The JSON object of `text`, with only `keys` and schema 1.
  StatusOr<ojson> ParseObject(const std::string& text, const std::set<std::string>& keys) const;
  // The shared keys: id, title (required), requires, anchor (required when
  // `anchor_required`), let, model, after, when, evidence.
  Status ParseBody(const ojson& j, bool anchor_required, RuleBody* body);

  // An expression whose names and functions exist (and whose calls give each
  // function an accepted number of arguments).
  StatusOr<ExprPtr> Expr(const std::string& path, const ojson& j) const;
  // {name} / {name:.Nf} placeholders naming defined names.
  Status CheckTemplate(const std::string& path, const std::string& text) const;
  StatusOr<std::string> Str(const ojson& obj, const std::string& path, const char* key, bool required) const;
  StatusOr<std::vector<std::string>> StringList(const std::string& path, const ojson& j) const;
  // A template, or a list of {"when", "text"} (at least one).
  StatusOr<std::vector<TextDef>> Texts(const std::string& path, const ojson& j) const;

  void Define(const std::string& name) { defined_.insert(name); }
  bool Known(const std::string& name) const;

 private:
  Status Kinds(const std::string& path, const std::vector<std::string>& kinds) const;
  Status Lets(const ojson& j, const char* key, std::vector<std::pair<std::string, ExprPtr>>* out);

  std::string file_;
  std::set<std::string> defined_;
};

// Reads every *.json file of `dir`, sorted by name. `label` names the source
// in errors ("--rules DIR"), `what` the kind of file ("rule", "finding").
StatusOr<RuleFiles> ReadJsonDir(const std::string& dir, const std::string& label, const std::string& what);

// The files of an embedded table, in order.
RuleFiles EmbeddedFiles(const generated::EmbeddedFile* files, size_t count);

// Built-in files and DIR's: a file of DIR replaces the built-in one with the
// same base name; the rest of DIR's are added after.
RuleFiles Overlay(RuleFiles builtin, const RuleFiles& dir);

// Parses every file with `parse`, rejecting a second use of an id.
template <class T, class Parse>
StatusOr<std::vector<T>> ParseAll(const RuleFiles& files, Parse parse) {
  std::vector<T> out;
  std::map<std::string, std::string> seen;  // id -> file
  for (const auto& [name, text] : files) {
    StatusOr<T> r = parse(name, text);
    if (!r.ok()) return r.status();
    auto [it, fresh] = seen.emplace(r->id, name);
    if (!fresh) return InvalidArgumentError(name + ": $.id: id '" + r->id + "' is also used by " + it->second);
    out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace tpt
