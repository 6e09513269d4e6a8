// event_json.cc: see event_json.h.
#include "parser/event_json.h"

#include <charconv>
#include <cmath>

#include "base/strings.h"

namespace tpt {
namespace {

nlohmann::json IntOrNull(int v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); }
int IntOr(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : -1;
}


// A JSON string as nlohmann writes it with ensure_ascii off: valid UTF-8 is
// copied, '"' '\\' and the C0 controls are escaped. Anything else (invalid
// UTF-8, which nlohmann replaces) is left to nlohmann itself.
void AppendString(std::string_view s, std::string* out) {
  static const char* kHex = "0123456789abcdef";
  const size_t start = out->size();
  out->push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    // A run of plain ASCII is copied at once.
    size_t j = i;
    while (j < s.size()) {
      const unsigned char d = static_cast<unsigned char>(s[j]);
      if (d < 0x20 || d >= 0x80 || d == '"' || d == '\\') break;
      ++j;
    }
    if (j > i) {
      out->append(s.data() + i, j - i);
      i = j;
      if (i == s.size()) break;
    }
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {  // invalid: nlohmann's replacement rules, exactly
        out->resize(start);
        *out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
      }
      out->append(s.data() + i, len);
      i += len - 1;
      continue;
    }
    out->push_back('\\');
    switch (c) {
      case '"': out->push_back('"'); break;
      case '\\': out->push_back('\\'); break;
      case '\b': out->push_back('b'); break;
      case '\f': out->push_back('f'); break;
      case '\n': out->push_back('n'); break;
      case '\r': out->push_back('r'); break;
      case '\t': out->push_back('t'); break;
      default:
        out->append("u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
  }
  out->push_back('"');
}

template <class T>
void AppendInt(T v, std::string* out) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

void AppendIntOrNull(int v, std::string* out) {
  if (v < 0) {
    out->append("null");
  } else {
    AppendInt(v, out);
  }
}

void AppendOptString(const std::string& s, std::string* out) {
  if (s.empty()) {
    out->append("null");
  } else {
    AppendString(s, out);
  }
}

// A JSON value as nlohmann's dump(-1, ' ', false, replace) writes it.
void AppendJson(const nlohmann::json& j, std::string* out) {
  using V = nlohmann::json::value_t;
  switch (j.type()) {
    case V::null: out->append("null"); return;
    case V::boolean: out->append(j.get<bool>() ? "true" : "false"); return;
    case V::number_integer: AppendInt(j.get<int64_t>(), out); return;
    case V::number_unsigned: AppendInt(j.get<uint64_t>(), out); return;
    case V::number_float: {
      const double d = j.get<double>();
      if (!std::isfinite(d)) {
        out->append("null");
        return;
      }
      char buf[64];
      char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
      out->append(buf, end);
      return;
    }
    case V::string: AppendString(j.get_ref<const std::string&>(), out); return;
    case V::array: {
      out->push_back('[');
      bool first = true;
      for (const auto& v : j) {
        if (!first) out->push_back(',');
        first = false;
        AppendJson(v, out);
      }
      out->push_back(']');
      return;
    }
    case V::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, v] : j.items()) {
        if (!first) out->push_back(',');
        first = false;
        AppendString(k, out);
        out->push_back(':');
        AppendJson(v, out);
      }
      out->push_back('}');
      return;
    }
    default: *out += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); return;
  }
}

}  // namespace

void AppendEventJsonLine(const Event& e, std::string* out) {
  // nlohmann's object keeps its keys sorted: the same order here.
  out->append("{\"consequence\":");
  out->append(e.consequence ? "true" : "false");
  out->append(",\"dp_rank\":");
  AppendIntOrNull(e.dp_rank, out);
  out->append(",\"ep_rank\":");
  AppendIntOrNull(e.ep_rank, out);
  out->append(",\"extra_lines\":[");
  for (size_t i = 0; i < e.extra_lines.size(); ++i) {
    if (i) out->push_back(',');
    AppendString(e.extra_lines[i], out);
  }
  out->append("],\"family\":");
  AppendString(e.family, out);
  out->append(",\"fields\":");
  AppendJson(e.fields(), out);
  out->append(",\"file\":");
  AppendString(e.file, out);
  out->append(",\"host\":");
  AppendOptString(e.host, out);
  out->append(",\"kind\":");
  AppendString(e.kind, out);
  out->append(",\"line\":");
  AppendInt(e.line, out);
  out->append(",\"local_rank\":");
  AppendIntOrNull(e.local_rank, out);
  out->append(",\"offset\":");
  AppendInt(e.offset, out);
  out->append(",\"pattern_id\":");
  AppendString(e.pattern_id, out);
  out->append(",\"pid\":");
  AppendIntOrNull(e.pid, out);
  out->append(",\"pp_rank\":");
  AppendIntOrNull(e.pp_rank, out);
  out->append(",\"process\":");
  AppendOptString(e.process, out);
  out->append(",\"rank\":");
  AppendIntOrNull(e.rank, out);
  out->append(",\"source\":");
  AppendInt(e.source, out);
  out->append(",\"text\":");
  AppendString(e.text, out);
  out->append(",\"tp_rank\":");
  AppendIntOrNull(e.tp_rank, out);
  out->append(",\"ts\":");
  if (e.ts && std::isfinite(*e.ts)) {
    char buf[64];
    char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, *e.ts);
    out->append(buf, end);
  } else {
    out->append("null");
  }
  out->append(",\"ts_is_time_of_day\":");
  out->append(e.ts_is_time_of_day ? "true" : "false");
  out->append(",\"wrapper\":");
  AppendJson(e.wrapper(), out);
  out->append("}\n");
}

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
