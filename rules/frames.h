// frames.h: the frames of a Python traceback, from its text. The rule functions
// frames() and stage() read them (rules/functions.cc), and so does the reading of
// which entry point started a vLLM engine (rules/entrypoint.h).
//
//   for (const tpt::Frame& f : tpt::FramesOf(tpt::FullText(event)))
//     if (f.file.ends_with("vllm/entrypoints/llm.py")) ...
#pragma once

#include <string>
#include <vector>

namespace tpt {

// One frame of a Python traceback: `File "path", line N, in func` and the
// source line printed under it (empty when the excerpt ends first).
struct Frame {
  std::string file, function, code;
};

// The frames of a traceback's text, outermost first. Wrapper prefixes are
// already stripped from continuation lines by the parser; a frame cut
// mid-line keeps what was printed, and a frame line hard-wrapped inside its
// path is put back together.
std::vector<Frame> FramesOf(const std::string& text);

}  // namespace tpt
