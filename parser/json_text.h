// json_text.h: JSON written straight as text, byte for byte as nlohmann's
// dump(-1, ' ', false, error_handler_t::replace) writes the same values
// (keys in std::map order, numbers through nlohmann's own to_chars, strings
// with ensure_ascii off), without building a DOM. `tptriage events` writes
// millions of records with it (event_json.cc).
//
//   std::string out;
//   JsonObjectText obj;                  // the same Set* calls as ObjectFiller
//   obj.Begin(&out);
//   obj.Set(name, int64_t{3});
//   obj.SetString("phase", "decode");
//   obj.End();                           // out == R"({"phase":"decode",...})"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpt {

// A JSON string: valid UTF-8 copied, '"' '\\' and the C0 controls escaped;
// a string that is not valid UTF-8 gets nlohmann's replacement, exactly.
void AppendJsonString(std::string_view s, std::string* out);
void AppendJsonInt(int64_t v, std::string* out);
void AppendJsonUint(uint64_t v, std::string* out);
// Non-finite numbers are written as null (as nlohmann does).
void AppendJsonDouble(double v, std::string* out);
// Any value, as dump() writes it.
void AppendJsonValue(const nlohmann::json& v, std::string* out);

// One object's members written as text; the same setters as ObjectFiller
// (json_reuse.h), so one filling function can fill either. Members may come
// in any order and a key may come twice: End() writes them in key order, the
// last value of a key kept, as the object the ObjectFiller fills would be
// dumped. In key order, as fillers mostly call, nothing is moved.
class JsonObjectText {
 public:
  void Begin(std::string* out);
  void Set(std::string_view name, int64_t v) { AppendJsonInt(v, Key(name)); }
  void Set(std::string_view name, double v) { AppendJsonDouble(v, Key(name)); }
  void SetBool(std::string_view name, bool v) { Key(name)->append(v ? "true" : "false"); }
  void SetString(std::string_view name, std::string_view v) { AppendJsonString(v, Key(name)); }
  void SetCopy(std::string_view name, const nlohmann::json& v) { AppendJsonValue(v, Key(name)); }
  void SetValue(std::string_view name, const nlohmann::json& v) { AppendJsonValue(v, Key(name)); }
  // Members already written as a JSON value by the caller: `"name":` is
  // appended and the caller appends the value to the returned string.
  std::string* Key(std::string_view name);
  void End();

 private:
  struct Member {
    std::string_view key;  // the caller's: valid until End()
    size_t begin;          // offset of the member's "key" in *out_
  };
  std::string* out_ = nullptr;
  size_t start_ = 0;  // offset of '{'
  bool in_order_ = true;
  std::vector<Member> members_;
  std::string scratch_;
};

}  // namespace tpt
