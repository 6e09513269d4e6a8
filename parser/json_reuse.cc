// json_reuse.cc: see json_reuse.h.
#include "parser/json_reuse.h"

#include <algorithm>

namespace tpt {

using nlohmann::json;

namespace {
// Nodes kept aside per filler: enough for the keys of the few shapes one
// filler sees (a prefix object's groups, a pattern's fields), small enough to
// search in a blink.
constexpr size_t kMaxSpare = 16;
}  // namespace

void ObjectFiller::Begin(json* obj) {
  if (!obj->is_object()) *obj = json::object();
  obj_ = &obj->get_ref<json::object_t&>();
  next_ = obj_->begin();
  last_ = nullptr;
  in_order_ = true;
}

ObjectFiller::Object::iterator ObjectFiller::Retire(Object::iterator it) {
  auto next = std::next(it);
  auto node = obj_->extract(it);
  if (spare_.size() < kMaxSpare) spare_.push_back(std::move(node));
  return next;
}

ObjectFiller::Object::node_type ObjectFiller::TakeNode(const std::string& name) {
  for (size_t i = spare_.size(); i-- > 0;) {
    if (spare_[i].key() == name) {
      auto node = std::move(spare_[i]);
      if (i + 1 != spare_.size()) spare_[i] = std::move(spare_.back());
      spare_.pop_back();
      return node;
    }
  }
  if (!spare_.empty()) {
    auto node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = name;  // keeps the key's and the node's memory
    return node;
  }
  Object fresh;
  fresh.try_emplace(name);
  return fresh.extract(fresh.begin());
}

ObjectFiller::Object::iterator ObjectFiller::Insert(const std::string& name, Object::iterator hint) {
  if (spare_.empty()) return obj_->try_emplace(hint, name);
  return obj_->insert(hint, TakeNode(name));
}

json& ObjectFiller::SlotSlow(const std::string& name) {
  if (in_order_) {
    if (last_ == nullptr || *last_ < name) {
      // Still ascending: keys before `name` not set yet never will be.
      while (next_ != obj_->end() && next_->first < name) next_ = Retire(next_);
      if (next_ != obj_->end() && next_->first == name) {
        last_ = &next_->first;
        return (next_++)->second;
      }
      auto it = Insert(name, next_);
      last_ = &it->first;
      return it->second;
    }
    // Leaving the ascending walk: every key before next_ was set this round.
    in_order_ = false;
    set_.clear();
    for (auto it = obj_->begin(); it != next_; ++it) set_.push_back(&it->first);
  }
  auto it = obj_->lower_bound(name);
  if (it == obj_->end() || it->first != name) it = Insert(name, it);
  const std::string* key = &it->first;
  if (std::find(set_.begin(), set_.end(), key) == set_.end()) set_.push_back(key);
  return it->second;
}

void ObjectFiller::Assign(json* slot, int64_t v) { *slot = v; }
void ObjectFiller::Assign(json* slot, double v) { *slot = v; }
void ObjectFiller::Assign(json* slot, bool v) { *slot = v; }

void ObjectFiller::Assign(json* slot, std::string_view v) {
  if (auto* p = slot->get_ptr<json::string_t*>()) {
    p->assign(v);
  } else {
    *slot = std::string(v);
  }
}

void ObjectFiller::CopyInto(json* slot, const json& v) {
  if (slot->is_string() && v.is_string()) {
    slot->get_ref<std::string&>() = v.get_ref<const std::string&>();
  } else {
    *slot = v;
  }
}

void ObjectFiller::End() {
  if (in_order_) {
    // The keys set are exactly those before next_: the rest is stale.
    while (next_ != obj_->end()) next_ = Retire(next_);
    return;
  }
  // Every key set is in the map, once: equal sizes mean nothing stale is left.
  if (obj_->size() == set_.size()) return;
  for (auto it = obj_->begin(); it != obj_->end();) {
    if (std::find(set_.begin(), set_.end(), &it->first) == set_.end()) {
      it = Retire(it);
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
