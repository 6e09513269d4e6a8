// frame_stage.cc: rules/stages.json over a traceback's frames (rules/frame_stage.h).
#include "rules/frame_stage.h"

#include <cstdio>
#include <memory>

#include <re2/re2.h>

#include "rules/vocabulary.h"

namespace tpt {

namespace {

struct Compiled {
  std::string stage;
  bool whole_stack;
  std::unique_ptr<re2::RE2> re;
};

const std::vector<Compiled>& Patterns() {
  static const std::vector<Compiled> patterns = [] {
    std::vector<Compiled> out;
    for (const FrameStage& s : FrameStages()) {
      auto re = std::make_unique<re2::RE2>(s.match, re2::RE2::Quiet);
      if (!re->ok()) {  // the build embeds rules/stages.json; vocabulary_test compiles every pattern
        std::fprintf(stderr, "tptriage: rules/stages.json: bad pattern for %s: %s\n", s.stage.c_str(),
                     re->error().c_str());
        continue;
      }
      out.push_back({s.stage, s.whole_stack, std::move(re)});
    }
    return out;
  }();
  return patterns;
}

}  // namespace

std::string StageOfFrames(const std::vector<std::string>& frames, bool cut) {
  for (const Compiled& p : Patterns()) {
    if (cut && p.whole_stack) continue;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it)
      if (re2::RE2::PartialMatch(*it, *p.re)) return p.stage;
  }
  return "";
}

}  // namespace tpt
