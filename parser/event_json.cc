// event_json.cc: see event_json.h.
#include "parser/event_json.h"

namespace tpt {
namespace {

nlohmann::json IntOrNull(int v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); }
int IntOr(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : -1;
}

}  // namespace

nlohmann::json EventToJson(const Event& e) {
  nlohmann::json j;
  j["kind"] = e.kind;
  j["family"] = e.family;
  j["pattern_id"] = e.pattern_id;
  j["consequence"] = e.consequence;
  j["source"] = e.source;
  j["file"] = e.file;
  j["line"] = e.line;
  j["offset"] = e.offset;
  j["rank"] = IntOrNull(e.rank);
  j["local_rank"] = IntOrNull(e.local_rank);
  j["host"] = e.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.host);
  j["pid"] = IntOrNull(e.pid);
  j["dp_rank"] = IntOrNull(e.dp_rank);
  j["pp_rank"] = IntOrNull(e.pp_rank);
  j["tp_rank"] = IntOrNull(e.tp_rank);
  j["ep_rank"] = IntOrNull(e.ep_rank);
  j["process"] = e.process.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.process);
  j["ts"] = e.ts ? nlohmann::json(*e.ts) : nlohmann::json(nullptr);
  j["ts_is_time_of_day"] = e.ts_is_time_of_day;
  j["fields"] = e.fields();
  j["wrapper"] = e.wrapper();
  j["text"] = e.text;
  j["extra_lines"] = e.extra_lines;
  return j;
}

Event EventFromJson(const nlohmann::json& j) {
  Event e;
  e.kind = j.value("kind", "");
  e.family = j.value("family", "");
  e.pattern_id = j.value("pattern_id", "");
  e.consequence = j.value("consequence", false);
  e.source = j.value("source", 0);
  e.file = j.value("file", "");
  e.line = j.value("line", uint64_t{0});
  e.offset = j.value("offset", uint64_t{0});
  e.rank = IntOr(j, "rank");
  e.local_rank = IntOr(j, "local_rank");
  e.pid = IntOr(j, "pid");
  e.dp_rank = IntOr(j, "dp_rank");
  e.pp_rank = IntOr(j, "pp_rank");
  e.tp_rank = IntOr(j, "tp_rank");
  e.ep_rank = IntOr(j, "ep_rank");
  if (j.contains("host") && j["host"].is_string()) e.host = j["host"];
  if (j.contains("process") && j["process"].is_string()) e.process = j["process"];
  if (j.contains("ts") && j["ts"].is_number()) e.ts = j["ts"].get<double>();
  e.ts_is_time_of_day = j.value("ts_is_time_of_day", false);
  if (j.contains("fields")) e.fields() = j["fields"];
  if (j.contains("wrapper")) e.wrapper() = j["wrapper"];
  e.text = j.value("text", "");
  if (j.contains("extra_lines") && j["extra_lines"].is_array()) {
    for (const auto& l : j["extra_lines"]) {
      if (l.is_string()) e.extra_lines.push_back(l);
    }
  }
  return e;
}

}  // namespace tpt
