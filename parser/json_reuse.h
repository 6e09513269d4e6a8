// json_reuse.h: filling nlohmann::json objects in place, so that an Event kept
// alive across lines reuses its map nodes and string buffers instead of
// allocating a fresh object per event and destroying the last one.
//
//   ObjectFiller f;
//   f.Begin(&e.fields);                // keeps what is there for now
//   f.Set(name, int64_t{3});           // an existing key keeps its node
//   f.SetString("phase", "decode");    // an existing string keeps its buffer
//   f.End();                           // keys not set since Begin() are erased
//
//   AssignReusing(&e.wrapper, meta.wrapper);  // e.wrapper == meta.wrapper after
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpt {

// a[0, n) == b[0, n) for sizeof(Word) <= n <= 2 * sizeof(Word): the first and
// the last word of each, overlapping when n is short.
template <typename Word>
inline bool SameEnds(const char* a, const char* b, size_t n) {
  Word a0, b0, a1, b1;
  std::memcpy(&a0, a, sizeof(Word));
  std::memcpy(&b0, b, sizeof(Word));
  std::memcpy(&a1, a + n - sizeof(Word), sizeof(Word));
  std::memcpy(&b1, b + n - sizeof(Word), sizeof(Word));
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

// True when a[0, n) == b[0, n): short keys and values (most are under 16
// bytes) compared with two overlapping loads instead of a memcmp call.
inline bool SameBytes(const char* a, const char* b, size_t n) {
  if (n > 16) return std::memcmp(a, b, n) == 0;
  if (n >= 8) return SameEnds<uint64_t>(a, b, n);
  if (n >= 4) return SameEnds<uint32_t>(a, b, n);
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

inline bool SameText(std::string_view a, std::string_view b) {
  return a.size() == b.size() && SameBytes(a.data(), b.data(), a.size());
}

// Keys are best set in ascending order (a pattern's fields, a prefix's groups:
// both come sorted): each then costs one comparison with the next node of the
// map. Keys erased by a round (End(), or passed over by an ascending walk) are
// kept aside, node and value, and a later insertion of the same key takes its
// node back: objects that alternate between two shapes (a line with a prefix,
// one without) allocate nothing once warm.
class ObjectFiller {
 public:
  // Starts a round on `obj` (made an object when it is not one).
  void Begin(nlohmann::json* obj);
  // The value at `name`; counts as set. When `name` was absent, the value
  // inserted is a leftover (null, or what a kept-aside node of that key held):
  // assign it, or refill it with another ObjectFiller's Begin().
  nlohmann::json& Slot(const std::string& name) {
    if (in_order_ && next_ != obj_->end() && SameText(next_->first, name)) {
      last_ = &next_->first;
      return (next_++)->second;
    }
    return SlotSlow(name);
  }
  // Set*: a value of the same type is overwritten in place (the common case,
  // inline); anything else is assigned out of line.
  void Set(const std::string& name, int64_t v) {
    nlohmann::json& s = Slot(name);
    if (s.type() == nlohmann::json::value_t::number_integer) {
      *s.get_ptr<nlohmann::json::number_integer_t*>() = v;
    } else {
      Assign(&s, v);
    }
  }
  void Set(const std::string& name, double v) {
    nlohmann::json& s = Slot(name);
    if (auto* p = s.get_ptr<nlohmann::json::number_float_t*>()) {
      *p = v;
    } else {
      Assign(&s, v);
    }
  }
  void SetBool(const std::string& name, bool v) {
    nlohmann::json& s = Slot(name);
    if (auto* p = s.get_ptr<nlohmann::json::boolean_t*>()) {
      *p = v;
    } else {
      Assign(&s, v);
    }
  }
  void SetString(const std::string& name, std::string_view v) {
    nlohmann::json& s = Slot(name);
    auto* p = s.get_ptr<nlohmann::json::string_t*>();
    // Values repeat from line to line (an id, a date): a compare is cheaper
    // than even an in-place copy.
    if (p == nullptr || !SameText(*p, v)) Assign(&s, v);
  }
  // Copies `v` (a string into the existing string's buffer; nothing when the
  // value is already there, as a pattern's constants mostly are).
  void SetCopy(const std::string& name, const nlohmann::json& v) {
    nlohmann::json& s = Slot(name);
    if (s.type() == v.type()) {  // not floats: 0.0 == -0.0 but they print apart
      if (const auto* a = s.get_ptr<const nlohmann::json::string_t*>()) {
        if (SameText(*a, *v.get_ptr<const nlohmann::json::string_t*>())) return;
      } else if (s.is_boolean() || s.is_number_integer() || s.is_null()) {
        if (s == v) return;
      }
    }
    CopyInto(&s, v);
  }
  // Any other value, moved in.
  void SetValue(const std::string& name, nlohmann::json v) { Slot(name) = std::move(v); }
  // Erases the keys not set since Begin().
  void End();
  // A node for `name` to insert elsewhere: a kept-aside one (of that key
  // first, else any, re-keyed: its value is a leftover to refill), or a fresh
  // one. Lets an object filled outside this filler's rounds reuse the nodes
  // its rounds erase.
  nlohmann::json::object_t::node_type TakeNode(const std::string& name);

 private:
  using Object = nlohmann::json::object_t;
  nlohmann::json& SlotSlow(const std::string& name);
  static void CopyInto(nlohmann::json* slot, const nlohmann::json& v);
  static void Assign(nlohmann::json* slot, int64_t v);
  static void Assign(nlohmann::json* slot, double v);
  static void Assign(nlohmann::json* slot, bool v);
  static void Assign(nlohmann::json* slot, std::string_view v);  // a string keeps its buffer
  // Inserts `name` before `hint`, from a kept-aside node when one has it.
  Object::iterator Insert(const std::string& name, Object::iterator hint);
  // Removes `it` from the map, keeping its node aside (up to a few).
  Object::iterator Retire(Object::iterator it);

  Object* obj_ = nullptr;
  Object::iterator next_;              // the ascending walk's next node
  const std::string* last_ = nullptr;  // the walk's last key set
  bool in_order_ = true;               // every key so far was set ascending
  std::vector<const std::string*> set_;  // out of order: keys set this round (map nodes are stable)
  std::vector<Object::node_type> spare_;  // erased nodes, for reuse
};

// Makes *dst equal to src, reusing dst's object nodes and string buffers where
// keys and types agree (one ordered walk per object level).
void AssignReusing(nlohmann::json* dst, const nlohmann::json& src);

}  // namespace tpt
