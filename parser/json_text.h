// json_text.h: JSON written straight as text, byte for byte as nlohmann's
// dump(-1, ' ', false, error_handler_t::replace) writes the same values
// (keys in std::map order, numbers through nlohmann's own to_chars, strings
// with ensure_ascii off), without building a DOM. `tptriage events` writes
// millions of records with it (event_json.cc), into a JsonOut: a record is
// some 70 small pieces, and std::string's out-of-line append with a memcpy
// call each cost more than the JSON itself.
//
//   JsonOut out;
//   JsonObjectText obj;                  // the same Set* calls as ObjectFiller
//   obj.Begin(&out);
//   obj.Set(name, int64_t{3});
//   obj.SetString("phase", "decode");
//   obj.End();                           // out == R"({"phase":"decode",...})"
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpt {

// A growing byte buffer whose appends are inline: room is checked, the bytes
// are copied (a literal's with a fixed-size copy), nothing else. Reserve()
// hands out room to write in place; the bytes count once Commit()ed.
class JsonOut {
 public:
  JsonOut() = default;
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;

  size_t size() const { return static_cast<size_t>(end_ - begin_); }
  bool empty() const { return end_ == begin_; }
  const char* data() const { return begin_; }
  std::string_view view() const { return {begin_, size()}; }
  void clear() { end_ = begin_; }
  // Shrinks to `n` bytes (n <= size()).
  void resize(size_t n) { end_ = begin_ + n; }

  // Room for `n` more bytes, written from the returned pointer on.
  char* Reserve(size_t n) {
    if (static_cast<size_t>(cap_ - end_) < n) Grow(n);
    return end_;
  }
  void Commit(char* new_end) { end_ = new_end; }

  void append(const char* s, size_t n) {
    char* p = Reserve(n);
    Copy(p, s, n);
    end_ = p + n;
  }
  // memcpy, with a short piece (most keys, numbers, names) moved by two
  // overlapping fixed-size copies instead of a call. Reads only [s, s + n);
  // n == 0 touches nothing (an empty view's data() may be null).
  static void Copy(char* d, const char* s, size_t n) {
    if (n >= 8 && n <= 16) {
      std::memcpy(d, s, 8);
      std::memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4 && n < 8) {
      std::memcpy(d, s, 4);
      std::memcpy(d + n - 4, s + n - 4, 4);
    } else if (n > 16) {
      std::memcpy(d, s, n);
    } else {
      for (size_t i = 0; i < n; ++i) d[i] = s[i];
    }
  }
  void append(std::string_view s) { append(s.data(), s.size()); }
  // A string literal, without its terminating NUL: a fixed-size copy.
  template <size_t N>
  void Lit(const char (&s)[N]) {
    char* p = Reserve(N - 1);
    std::memcpy(p, s, N - 1);
    end_ = p + N - 1;
  }
  void push_back(char c) {
    char* p = Reserve(1);
    *p = c;
    end_ = p + 1;
  }

 private:
  void Grow(size_t n);
  std::unique_ptr<char[]> storage_;
  char* begin_ = nullptr;
  char* end_ = nullptr;
  char* cap_ = nullptr;
};

// A JSON string: valid UTF-8 copied, '"' '\\' and the C0 controls escaped;
// a string that is not valid UTF-8 gets nlohmann's replacement, exactly.
void AppendJsonString(std::string_view s, JsonOut* out);
void AppendJsonInt(int64_t v, JsonOut* out);
void AppendJsonUint(uint64_t v, JsonOut* out);
// Non-finite numbers are written as null (as nlohmann does).
void AppendJsonDouble(double v, JsonOut* out);
// Any value, as dump() writes it.
void AppendJsonValue(const nlohmann::json& v, JsonOut* out);

// A member's name with its JSON text `,"name":` made once (a field spec's, at
// load: format_spec.h), so that a record does not check and copy the name
// piece by piece again. Converts to the name: ObjectFiller takes it as a name.
struct JsonKey {
  const std::string& name;
  std::string_view text;  // JsonKeyText(name); empty: written from the name
  operator const std::string&() const { return name; }
};
std::string JsonKeyText(std::string_view name);  // `,"name":`, the name escaped

// One object's members written as text; the same setters as ObjectFiller
// (json_reuse.h), so one filling function can fill either. Members may come
// in any order and a key may come twice: End() writes them in key order, the
// last value of a key kept, as the object the ObjectFiller fills would be
// dumped. In key order, as fillers mostly call, nothing is moved.
class JsonObjectText {
 public:
  // `keys_in_order`: the caller sets each key once, in key order (a field
  // list sorted at load): End() has nothing to sort, no member is recorded.
  void Begin(JsonOut* out, bool keys_in_order = false);
  void Set(std::string_view name, int64_t v) { AppendJsonInt(v, Key(name)); }
  void Set(std::string_view name, double v) { AppendJsonDouble(v, Key(name)); }
  void SetBool(std::string_view name, bool v) {
    if (v) {
      Key(name)->Lit("true");
    } else {
      Key(name)->Lit("false");
    }
  }
  void SetString(std::string_view name, std::string_view v) { AppendJsonString(v, Key(name)); }
  void SetCopy(std::string_view name, const nlohmann::json& v) { AppendJsonValue(v, Key(name)); }
  void SetValue(std::string_view name, const nlohmann::json& v) { AppendJsonValue(v, Key(name)); }
  // The same, the name's text made before (JsonKey).
  void Set(const JsonKey& k, int64_t v) { AppendJsonInt(v, Key(k)); }
  void Set(const JsonKey& k, double v) { AppendJsonDouble(v, Key(k)); }
  void SetBool(const JsonKey& k, bool v) {
    if (v) {
      Key(k)->Lit("true");
    } else {
      Key(k)->Lit("false");
    }
  }
  void SetString(const JsonKey& k, std::string_view v) { AppendJsonString(v, Key(k)); }
  void SetCopy(const JsonKey& k, const nlohmann::json& v) { AppendJsonValue(v, Key(k)); }
  void SetValue(const JsonKey& k, const nlohmann::json& v) { AppendJsonValue(v, Key(k)); }
  // Members already written as a JSON value by the caller: `"name":` is
  // appended and the caller appends the value to the returned buffer.
  JsonOut* Key(std::string_view name);
  JsonOut* Key(const JsonKey& k) {
    if (k.text.empty()) return Key(std::string_view(k.name));
    const bool first = Note(k.name);
    const size_t n = k.text.size() - (first ? 1 : 0);  // the first member has no comma
    char* p = out_->Reserve(n);
    JsonOut::Copy(p, k.text.data() + (first ? 1 : 0), n);
    out_->Commit(p + n);
    return out_;
  }
  void End();

 private:
  struct Member {
    std::string_view key;  // the caller's: valid until End()
    size_t begin;          // offset of the member's "key" in *out_
  };
  // Whether `name` is the object's first member; the member is remembered
  // for End() unless Begin() was told the keys come in order.
  bool Note(std::string_view name) {
    if (known_order_) {
      const bool first = !any_;
      any_ = true;
      return first;
    }
    const bool first = members_.empty();
    if (!first && in_order_) CheckOrder(name);
    members_.push_back({name, out_->size() + (first ? 0 : 1)});
    return first;
  }
  // std::map's order: std::string's compare, as string_view's; keys mostly
  // differ in their first byte (compared as unsigned, as compare does).
  void CheckOrder(std::string_view name) {
    const std::string_view prev = members_.back().key;
    const unsigned char a = prev.empty() ? 0 : static_cast<unsigned char>(prev[0]);
    const unsigned char b = name.empty() ? 0 : static_cast<unsigned char>(name[0]);
    if (a > b || (a == b && !(prev < name))) in_order_ = false;
  }
  JsonOut* out_ = nullptr;
  size_t start_ = 0;  // offset of '{'
  bool in_order_ = true;
  bool known_order_ = false;  // Begin(out, true): the caller's keys ascend, none twice
  bool any_ = false;          // (known_order_) a member was written
  std::vector<Member> members_;
  std::string scratch_;
};

}  // namespace tpt
