// capture.cc: CompileRegex, LazyRe and RunRe (capture.h).
#include "parser/match/capture.h"

#include <algorithm>
#include <mutex>

namespace tpt {

std::shared_ptr<RE2> CompileRegex(const std::string& pattern, bool caseless, std::string* error) {
  RE2::Options opt;
  opt.set_log_errors(false);
  opt.set_case_sensitive(!caseless);
  opt.set_max_mem(64 << 20);
  auto re = std::make_shared<RE2>(pattern, opt);
  if (!re->ok()) {
    *error = re->error();
    return nullptr;
  }
  return re;
}

bool RunRe(const RE2& re, std::string_view text, size_t pos, RE2::Anchor anchor,
           std::vector<std::string_view>* groups, bool precheck) {
  thread_local std::vector<re2::StringPiece> sp;
  sp.assign(re.NumberOfCapturingGroups() + 1, re2::StringPiece());
  // Match on the suffix, not with startpos: RE2 never matches ^ at startpos > 0.
  text = text.substr(std::min(pos, text.size()));
  re2::StringPiece piece(text.data(), text.size());
  // Most tries fail: a DFA-only run (no submatches) says so several times
  // faster than the capturing engines.
  if (precheck && !re.Match(piece, 0, piece.size(), anchor, nullptr, 0)) {
    groups->assign(re.NumberOfCapturingGroups() + 1, std::string_view());
    return false;
  }
  bool ok = re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), anchor, sp.data(),
                     static_cast<int>(sp.size()));
  groups->resize(sp.size());
  for (size_t i = 0; i < sp.size(); ++i) (*groups)[i] = std::string_view(sp[i].data(), sp[i].size());
  return ok;
}

struct LazyRe::State {
  std::once_flag once;
  std::string pattern;
  bool caseless = false;
  std::shared_ptr<RE2> re;
};

LazyRe::LazyRe(std::shared_ptr<RE2> compiled) {
  if (!compiled) return;
  state_ = std::make_shared<State>();
  state_->re = std::move(compiled);
}

LazyRe::LazyRe(std::string pattern, bool caseless) : state_(std::make_shared<State>()) {
  state_->pattern = std::move(pattern);
  state_->caseless = caseless;
}

bool LazyRe::compiled() const { return state_ && state_->re; }

const RE2* LazyRe::get() const {
  std::call_once(state_->once, [s = state_.get()] {
    if (s->re) return;
    std::string err;
    s->re = CompileRegex(s->pattern, s->caseless, &err);
    // Only the compiled-in files are deferred, and formats_test compiles each
    // of them: should one fail here anyway, it matches nothing.
    if (!s->re) s->re = std::make_shared<RE2>("[^\\x00-\\x{10FFFF}]");
  });
  return state_->re.get();
}

}  // namespace tpt
