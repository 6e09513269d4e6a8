// vocabulary.cc: parser/events.json and rules/taxonomy.json, embedded and read once.
#include "rules/vocabulary.h"

#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "base/embedded.h"

namespace tpt {

namespace generated {
extern const EmbeddedFile kVocabulary[];
extern const size_t kVocabularyCount;
}  // namespace generated

namespace {

// The embedded file named `name` as JSON; the build embeds both files, so a
// missing or broken one is a build defect, reported and fatal.
nlohmann::json Embedded(std::string_view name) {
  for (size_t i = 0; i < generated::kVocabularyCount; ++i) {
    if (name != generated::kVocabulary[i].name) continue;
    nlohmann::json j = nlohmann::json::parse(generated::kVocabulary[i].text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) return j;
    break;
  }
  std::fprintf(stderr, "tptriage: the embedded %.*s is missing or not JSON (a build defect)\n",
               static_cast<int>(name.size()), name.data());
  std::abort();
}

struct Events {
  std::vector<EventKind> kinds;
  std::map<std::string, size_t, std::less<>> by_name;
  std::vector<std::string> phases;
};

const Events& TheEvents() {
  static const Events e = [] {
    Events out;
    nlohmann::json j = Embedded("parser/events.json");
    const nlohmann::json phases = j.value("phases", nlohmann::json::array());
    const nlohmann::json rows = j.value("kinds", nlohmann::json::array());
    for (const auto& p : phases) out.phases.push_back(p.get<std::string>());
    for (const auto& row : rows) {
      EventKind k;
      k.kind = row.value("kind", "");
      k.section = row.value("section", "");
      k.failure = row.value("failure", false);
      k.consequence = row.value("consequence", false);
      k.warning = row.value("warning", false);
      k.generic = row.value("generic", false);
      k.running = row.value("running", false);
      k.ends_launch = row.value("ends_launch", false);
      k.progress = row.value("progress", false);
      k.phase = row.value("phase", "");
      k.phase_completed = row.value("phase_completed", "");
      k.phase_intrinsic = row.value("phase_intrinsic", "");
      k.phase_label = row.value("phase_label", "");
      k.fields = row.value("fields", "");
      k.read_by = row.value("read_by", "");
      k.harmless = row.value("harmless", "");
      for (const auto& t : row.value("leads_to", nlohmann::json::array())) k.leads_to.push_back(t.get<std::string>());
      const nlohmann::json units = row.value("units", nlohmann::json::object());  // a named copy: items() of
      for (const auto& [f, u] : units.items()) k.units[f] = u.get<std::string>();    // a temporary dangles
      out.by_name.emplace(k.kind, out.kinds.size());
      out.kinds.push_back(std::move(k));
    }
    return out;
  }();
  return e;
}

struct Taxonomy {
  std::vector<RootCause> causes;
  std::map<std::string, size_t, std::less<>> by_id;
};

const Taxonomy& TheTaxonomy() {
  static const Taxonomy t = [] {
    Taxonomy out;
    nlohmann::json j = Embedded("rules/taxonomy.json");
    const nlohmann::json rows = j.value("root_causes", nlohmann::json::array());
    for (const auto& row : rows) {
      RootCause rc{row.value("id", ""), row.value("title", ""), row.value("repro_step", "")};
      for (const auto& o : row.value("outranks", nlohmann::json::array()))
        rc.outranks.push_back({o.value("id", ""), o.value("why", ""), o.value("unless_rule", "")});
      out.by_id.emplace(rc.id, out.causes.size());
      out.causes.push_back(std::move(rc));
    }
    return out;
  }();
  return t;
}

}  // namespace

const std::vector<FrameStage>& FrameStages() {
  static const std::vector<FrameStage> stages = [] {
    std::vector<FrameStage> out;
    nlohmann::json j = Embedded("rules/stages.json");
    for (const auto& row : j.value("stages", nlohmann::json::array()))
      out.push_back({row.value("stage", ""), row.value("framework", ""), row.value("match", ""),
                     row.value("whole_stack", false)});
    return out;
  }();
  return stages;
}

const EventKind* FindEventKind(std::string_view kind) {
  const Events& e = TheEvents();
  auto it = e.by_name.find(kind);
  return it == e.by_name.end() ? nullptr : &e.kinds[it->second];
}

const std::vector<EventKind>& EventKinds() { return TheEvents().kinds; }
const std::vector<std::string>& Phases() { return TheEvents().phases; }

int PhaseIndex(std::string_view phase) {
  const auto& p = Phases();
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] == phase) return static_cast<int>(i);
  return -1;
}

const RootCause* FindRootCause(std::string_view id) {
  const Taxonomy& t = TheTaxonomy();
  auto it = t.by_id.find(id);
  return it == t.by_id.end() ? nullptr : &t.causes[it->second];
}

const std::vector<RootCause>& RootCauses() { return TheTaxonomy().causes; }

}  // namespace tpt
