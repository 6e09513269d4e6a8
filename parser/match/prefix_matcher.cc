// prefix_matcher.cc: PrefixMatcher (prefix_matcher.h).
#include "parser/match/prefix_matcher.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>

#include "parser/match/prefix_dfa.h"

namespace tpt {

struct PrefixMatcher::Set {
  explicit Set(const RE2::Options& o) : set(o, RE2::ANCHOR_START) {}
  RE2::Set set;
};

PrefixMatcher::PrefixMatcher() = default;
PrefixMatcher::PrefixMatcher(const PrefixMatcher&) = default;
PrefixMatcher::PrefixMatcher(PrefixMatcher&&) noexcept = default;
PrefixMatcher& PrefixMatcher::operator=(const PrefixMatcher&) = default;
PrefixMatcher& PrefixMatcher::operator=(PrefixMatcher&&) noexcept = default;
PrefixMatcher::~PrefixMatcher() = default;

StatusOr<std::shared_ptr<const PrefixMatcher::Set>> PrefixMatcher::BuildSet(const std::vector<Member>& members) {
  RE2::Options opt;
  opt.set_log_errors(false);
  opt.set_max_mem(64 << 20);
  auto holder = std::make_shared<Set>(opt);
  for (const Member& m : members) {
    std::string err;
    if (holder->set.Add(m.regex, &err) < 0) return InternalError(m.name + ": cannot join the prefix set: " + err);
  }
  if (!holder->set.Compile()) return InternalError("compiling the prefix set failed (out of memory?)");
  return std::shared_ptr<const Set>(std::move(holder));
}

StatusOr<PrefixMatcher> PrefixMatcher::Build(const std::vector<Member>& members) {
  PrefixMatcher m;
  m.members_ = members;
  if (members.empty()) return m;
  std::vector<std::string> regexes;
  for (const Member& member : members) regexes.push_back(member.regex);
  if (auto dfa = PrefixDfa::Build(regexes); dfa.ok()) {
    m.dfa_ = *std::move(dfa);
    return m;
  }
  auto set = BuildSet(members);
  if (!set.ok()) return set.status();
  m.set_ = *std::move(set);
  return m;
}

void PrefixMatcher::MembersAt(std::string_view place, std::vector<int>* found) const {
  if (dfa_) {
    dfa_->Match(place, found);
    return;
  }
  found->clear();
  if (!set_) return;
  // Most places match nothing: a yes/no run stops early and skips the match
  // list's allocation; only a hit asks which ones.
  re2::StringPiece text(place.data(), place.size());
  if (set_->set.Match(text, nullptr) && set_->set.Match(text, found)) std::sort(found->begin(), found->end());
}

Status PrefixMatcher::CheckAgainstSet(const std::vector<std::string>& lines, std::string* disagreeing) {
  disagreeing->clear();
  if (!dfa_) return OkStatus();
  auto set = BuildSet(members_);
  if (!set.ok()) return set.status();
  std::vector<int> want, got;
  auto agree = [&](std::string_view line) {
    for (size_t at = 0;;) {
      std::string_view place = line.substr(at);
      want.clear();
      (*set)->set.Match(re2::StringPiece(place.data(), place.size()), &want);
      std::sort(want.begin(), want.end());
      dfa_->Match(place, &got);
      if (got != want) return false;
      size_t space = line.find(' ', at);
      if (space == std::string_view::npos) return true;
      at = space + 1;
    }
  };
  for (const std::string& line : lines) {
    if (agree(line)) continue;
    *disagreeing = line;
    dfa_.reset();
    set_ = *std::move(set);
    return OkStatus();
  }
  return OkStatus();
}

void PrefixMatcher::SetAutomatonForTest(std::shared_ptr<const PrefixDfa> dfa) { dfa_ = std::move(dfa); }

}  // namespace tpt
