// evidence_read.cc: which of an evidence line's values a diagnosis read.
#include "rules/evidence_read.h"

#include "parser/python_repr.h"

namespace tpt {

std::string EvidenceText(const std::string& text) {
  if (text.size() <= kMaxEvidenceBytes) return text;
  size_t cut = kMaxEvidenceBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return text.substr(0, cut) + "...";
}

Evidence ToEvidence(const Event& e) { return Evidence{e.file, e.line, e.rank, EvidenceText(e.text), {}}; }

std::set<std::string> NamesRead(const Rule& rule, const nlohmann::json& figures) {
  std::vector<std::string> vars, funcs;
  auto add = [&](const ExprPtr& e) {
    if (e) e->Names(&vars, &funcs);
  };
  for (const auto& [name, e] : rule.lets) add(e);
  for (const auto& [name, e] : rule.after) add(e);
  add(rule.when);
  std::set<std::string> out;
  for (const ModelCall& m : rule.models) {
    for (const auto& [input, e] : m.inputs) {
      out.insert(input);
      add(e);
    }
  }
  for (const auto& [when, text] : rule.explanations) add(when);
  for (const RemedyDef& r : rule.remedy) add(r.when);
  for (const RuledOutDef& r : rule.ruled_out) add(r.when);
  for (const std::string& v : vars) {
    for (std::string_view p : {"config.", "anchor."}) {
      if (v.compare(0, p.size(), p) == 0) out.insert(v.substr(p.size()));
    }
    if (v == "tp" || v == "pp" || v == "dp" || v == "ep") out.insert(v + "_size");
  }
  if (figures.is_object()) {
    for (auto it = figures.begin(); it != figures.end(); ++it) out.insert(it.key());
  }
  return out;
}

std::vector<std::string> FieldsRead(const Event& e, const std::set<std::string>& names) {
  std::vector<std::string> out;
  nlohmann::json fields = e.FieldsJson();
  auto args = fields.find("args");
  if (args != fields.end() && args->is_object() && !args->empty()) {
    for (auto it = args->begin(); it != args->end(); ++it) {
      bool read = names.count(it.key()) > 0;
      if (!read) {  // printed under another name: tensor_parallel_size is tp_size
        nlohmann::json canonical = nlohmann::json::object();
        CopyKnownServerArgs(nlohmann::json{{it.key(), it.value()}}, &canonical);
        for (auto c = canonical.begin(); c != canonical.end() && !read; ++c) read = names.count(c.key()) > 0;
      }
      if (read) out.push_back(it.key());
    }
    return out;
  }
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (it.key() != "framework" && names.count(it.key())) out.push_back(it.key());
  }
  return out;
}

void NoteFieldsRead(const Rule& rule, const std::vector<Event>& events, Diagnosis* d, size_t min_bytes) {
  std::set<std::string> names;
  bool have_names = false;
  for (Evidence& ev : d->evidence) {
    if (ev.text.size() <= min_bytes) continue;
    if (!have_names) names = NamesRead(rule, d->figures);
    have_names = true;
    std::set<std::string> read;
    for (const Event& e : events) {  // every event of that line (a line may give more than one)
      if (e.line != ev.line || e.file != ev.file) continue;
      for (std::string& k : FieldsRead(e, names)) read.insert(std::move(k));
    }
    ev.read.assign(read.begin(), read.end());
  }
}

}  // namespace tpt
