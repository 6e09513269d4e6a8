// frame_stage.h: the stage a Python traceback was raised in, from its frames
// (rules/stages.json: module paths and function names of vLLM V0/V1, SGLang,
// TGI, TensorRT-LLM, LMDeploy and PyTorch, read from their sources). The rule
// function stage() calls it, so an out-of-memory's stage comes from its
// frames also when the log has no phase lines.
//
//   std::string s = tpt::StageOfFrames({"vllm/v1/worker/gpu_worker.py::determine_available_memory",
//                                       "vllm/v1/worker/gpu_model_runner.py::profile_run"});   // "warmup"
#pragma once

#include <string>
#include <vector>

namespace tpt {

// `frames`: "FILE::FUNCTION", outermost first. The stage of the first entry
// of rules/stages.json that matches a frame (innermost frame tried first);
// "" when none does. `cut`: the traceback lost its outermost frames (no
// "Traceback" line: a paste or a log cut it), so the entries that hold only
// when no frame further out names a stage (whole_stack) are not tried.
std::string StageOfFrames(const std::vector<std::string>& frames, bool cut = false);

}  // namespace tpt
