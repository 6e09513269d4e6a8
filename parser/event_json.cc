// event_json.cc: see event_json.h.
#include "parser/event_json.h"

#include <cstring>
#include <optional>

#include "parser/json_text.h"

namespace tpt {
namespace {

// The one list of an Event's JSON members, in key order (nlohmann's object
// keeps its keys sorted; the text writer relies on it). `E` is `const Event`
// for the writers and `Event` for the reader; `W` says what each member
// becomes: ObjectWriter (a DOM), TextWriter (JSON text), Reader.
template <class E, class W>
void VisitEvent(E& e, W& w) {
  w.Bool("consequence", e.consequence);
  w.Rank("dp_rank", e.dp_rank);
  w.Rank("ep_rank", e.ep_rank);
  w.Lines("extra_lines", e.extra_lines);
  w.String("family", e.family);
  w.Fields("fields", e);
  w.String("file", e.file);
  w.OptString("host", e.host);
  w.String("kind", e.kind);
  w.Number("line", e.line);
  w.Rank("local_rank", e.local_rank);
  w.Number("offset", e.offset);
  w.String("pattern_id", e.pattern_id);
  w.Rank("pid", e.pid);
  w.Rank("pp_rank", e.pp_rank);
  w.OptString("process", e.process);
  w.Rank("rank", e.rank);
  w.Number("source", e.source);
  w.String("text", e.text);
  w.Rank("tp_rank", e.tp_rank);
  w.Time("ts", e.ts);
  w.Bool("ts_is_time_of_day", e.ts_is_time_of_day);
  w.Wrapper("wrapper", e);
}

// Unset ranks (-1) and empty optional strings are null.
struct ObjectWriter {
  nlohmann::json j;
  void Bool(const char* k, bool v) { j[k] = v; }
  void Rank(const char* k, int v) { j[k] = v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); }
  template <class T> void Number(const char* k, T v) { j[k] = v; }
  void String(const char* k, const std::string& v) { j[k] = v; }
  void OptString(const char* k, const std::string& v) { j[k] = v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); }
  void Time(const char* k, const std::optional<double>& v) { j[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
  void Lines(const char* k, const std::vector<std::string>& v) { j[k] = v; }
  void Fields(const char* k, const Event& e) { j[k] = e.fields(); }
  void Wrapper(const char* k, const Event& e) { j[k] = e.wrapper(); }
};

// The same members as JSON text; what is still to decode (Event::Deferred) is
// written from the captures by the decoder, and the event is left as it was.
// A member's `sep "key":` is one fixed-size copy, with its value when that is
// a literal (null, true, false, []).
struct TextWriter {
  JsonOut* out;
  char sep = '{';
  template <size_t N, size_t M = 1>
  JsonOut* Key(const char (&k)[N], const char (&value)[M] = "") {
    char* p = out->Reserve(N + M + 2);  // sep "key": value
    p[0] = sep;
    p[1] = '"';
    std::memcpy(p + 2, k, N - 1);
    p[N + 1] = '"';
    p[N + 2] = ':';
    std::memcpy(p + N + 3, value, M - 1);
    out->Commit(p + N + M + 2);
    sep = ',';
    return out;
  }
  template <size_t N>
  void Bool(const char (&k)[N], bool v) {
    if (v) {
      Key(k, "true");
    } else {
      Key(k, "false");
    }
  }
  template <size_t N>
  void Rank(const char (&k)[N], int v) {
    if (v < 0) {
      Key(k, "null");
    } else {
      AppendJsonInt(v, Key(k));
    }
  }
  template <size_t N>
  void Number(const char (&k)[N], uint64_t v) { AppendJsonUint(v, Key(k)); }
  template <size_t N>
  void Number(const char (&k)[N], int v) { AppendJsonInt(v, Key(k)); }
  template <size_t N>
  void String(const char (&k)[N], const std::string& v) { AppendJsonString(v, Key(k)); }
  template <size_t N>
  void OptString(const char (&k)[N], const std::string& v) {
    if (v.empty()) {
      Key(k, "null");
    } else {
      AppendJsonString(v, Key(k));
    }
  }
  template <size_t N>
  void Time(const char (&k)[N], const std::optional<double>& v) {
    if (v) {
      AppendJsonDouble(*v, Key(k));
    } else {
      Key(k, "null");
    }
  }
  template <size_t N>
  void Lines(const char (&k)[N], const std::vector<std::string>& v) {
    if (v.empty()) {
      Key(k, "[]");
      return;
    }
    Key(k, "[");
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out->push_back(',');
      AppendJsonString(v[i], out);
    }
    out->push_back(']');
  }
  template <size_t N>
  void Fields(const char (&k)[N], const Event& e) {
    const Event::Deferred& d = e.deferred_fields_;
    if (d.pending) {
      d.decoder->AppendJson(e.text, d.spans, Key(k));
    } else {
      AppendJsonValue(e.fields_, Key(k));
    }
  }
  // A pending producer prefix is the wrapper's "prefix" key (Event::Decode).
  template <size_t N>
  void Wrapper(const char (&k)[N], const Event& e) {
    const Event::Deferred& d = e.deferred_prefix_;
    if (!d.pending) {
      AppendJsonValue(e.wrapper_, Key(k));
      return;
    }
    thread_local JsonObjectText wrapper;
    wrapper.Begin(Key(k));
    if (e.wrapper_.is_object()) {
      for (const auto& [key, value] : e.wrapper_.items())
        if (key != "prefix") wrapper.SetValue(key, value);
    }
    d.decoder->AppendJson(e.text, d.spans, wrapper.Key("prefix"));
    wrapper.End();
  }
  void Close() {
    if (sep == '{') {
      out->Lit("{}\n");
    } else {
      out->Lit("}\n");
    }
  }
};

// Members of another type or absent keep their defaults.
struct Reader {
  const nlohmann::json& j;
  void Bool(const char* k, bool& v) { v = j.value(k, false); }
  void Rank(const char* k, int& v) {
    auto it = j.find(k);
    v = it != j.end() && it->is_number_integer() ? it->get<int>() : -1;
  }
  template <class T> void Number(const char* k, T& v) { v = j.value(k, T{0}); }
  void String(const char* k, std::string& v) { v = j.value(k, ""); }
  void OptString(const char* k, std::string& v) {
    if (j.contains(k) && j[k].is_string()) v = j[k];
  }
  void Time(const char* k, std::optional<double>& v) {
    if (j.contains(k) && j[k].is_number()) v = j[k].get<double>();
  }
  void Lines(const char* k, std::vector<std::string>& v) {
    if (!j.contains(k) || !j[k].is_array()) return;
    for (const auto& l : j[k])
      if (l.is_string()) v.push_back(l);
  }
  void Fields(const char* k, Event& e) {
    if (j.contains(k)) e.fields() = j[k];
  }
  void Wrapper(const char* k, Event& e) {
    if (j.contains(k)) e.wrapper() = j[k];
  }
};

}  // namespace

void AppendEventJsonLine(const Event& e, JsonOut* out) {
  TextWriter w{out};
  VisitEvent(e, w);
  w.Close();
}

void AppendEventJsonLine(const Event& e, std::string* out) {
  thread_local JsonOut line;
  line.clear();
  AppendEventJsonLine(e, &line);
  out->append(line.view());
}

nlohmann::json EventToJson(const Event& e) {
  ObjectWriter w;
  VisitEvent(e, w);
  return std::move(w.j);
}

Event EventFromJson(const nlohmann::json& j) {
  Event e;
  Reader r{j};
  VisitEvent(e, r);
  return e;
}

}  // namespace tpt
