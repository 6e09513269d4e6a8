// json_reuse.cc: see json_reuse.h.
#include "parser/json_reuse.h"

#include <algorithm>

namespace tpt {

using nlohmann::json;

void ObjectFiller::Begin(json* obj) {
  if (!obj->is_object()) *obj = json::object();
  obj_ = &obj->get_ref<json::object_t&>();
  next_ = obj_->begin();
  in_order_ = true;
  set_.clear();
}

json& ObjectFiller::Slot(const std::string& name) {
  if (in_order_ && next_ != obj_->end() && next_->first == name) {
    json& v = next_->second;
    ++next_;
    return v;
  }
  if (in_order_) {
    // Leaving the in-order walk: record the keys it passed over as set.
    for (auto it = obj_->begin(); it != next_; ++it) set_.push_back(&it->first);
    in_order_ = false;
  }
  auto it = obj_->try_emplace(name).first;
  const std::string* key = &it->first;
  if (std::find(set_.begin(), set_.end(), key) == set_.end()) set_.push_back(key);
  return it->second;
}

void ObjectFiller::SetString(const std::string& name, std::string_view v) {
  json& slot = Slot(name);
  if (slot.is_string()) {
    slot.get_ref<std::string&>().assign(v);
  } else {
    slot = std::string(v);
  }
}

void ObjectFiller::SetCopy(const std::string& name, const json& v) {
  json& slot = Slot(name);
  if (slot.is_string() && v.is_string()) {
    slot.get_ref<std::string&>() = v.get_ref<const std::string&>();
  } else {
    slot = v;
  }
}

void ObjectFiller::End() {
  if (in_order_) {
    // The keys set are exactly those before next_: the rest is stale.
    obj_->erase(next_, obj_->end());
    return;
  }
  // Every key set is in the map, once: equal sizes mean nothing stale is left.
  if (obj_->size() == set_.size()) return;
  for (auto it = obj_->begin(); it != obj_->end();) {
    if (std::find(set_.begin(), set_.end(), &it->first) == set_.end()) {
      it = obj_->erase(it);
    } else {
      ++it;
    }
  }
}

void AssignReusing(json* dst, const json& src) {
  if (src.is_object() && dst->is_object()) {
    auto& d = dst->get_ref<json::object_t&>();
    const auto& s = src.get_ref<const json::object_t&>();
    auto di = d.begin();
    for (auto si = s.begin(); si != s.end(); ++si) {
      while (di != d.end() && di->first < si->first) di = d.erase(di);
      if (di != d.end() && di->first == si->first) {
        AssignReusing(&di->second, si->second);
        ++di;
      } else {
        d.emplace_hint(di, si->first, si->second);
      }
    }
    d.erase(di, d.end());
    return;
  }
  if (src.is_string() && dst->is_string()) {
    dst->get_ref<std::string&>() = src.get_ref<const std::string&>();
    return;
  }
  *dst = src;
}

}  // namespace tpt
