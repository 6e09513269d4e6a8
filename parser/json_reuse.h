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
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tpt {

class ObjectFiller {
 public:
  // Starts a round on `obj` (made an object when it is not one).
  void Begin(nlohmann::json* obj);
  // The value at `name`, inserted as null when absent; counts as set.
  nlohmann::json& Slot(const std::string& name);
  void Set(const std::string& name, int64_t v) { Slot(name) = v; }
  void Set(const std::string& name, double v) { Slot(name) = v; }
  void SetString(const std::string& name, std::string_view v);
  // Copies `v` (a string into the existing string's buffer).
  void SetCopy(const std::string& name, const nlohmann::json& v);
  // Erases the keys not set since Begin().
  void End();

 private:
  nlohmann::json::object_t* obj_ = nullptr;
  // Keys set in the map's (sorted) order, as a pattern's fields are, each find
  // the next node: one comparison instead of a tree search.
  nlohmann::json::object_t::iterator next_;
  bool in_order_ = true;  // every key so far was the next node
  std::vector<const std::string*> set_;  // keys set this round (map nodes are stable)
};

// Makes *dst equal to src, reusing dst's object nodes and string buffers where
// keys and types agree (one ordered walk per object level).
void AssignReusing(nlohmann::json* dst, const nlohmann::json& src);

}  // namespace tpt
