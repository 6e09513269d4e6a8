// trtllm_engine_build.h: the TensorRT engine's build on the serving GPUs, before the runtime
// the rest of the engine plan prices (sources in the .cc).
#pragma once

#include <string>

#include "memory/launch_plan.h"

namespace tpt::memory::internal {

// The build phase of a TensorRT-backend launch that builds its engine on these GPUs
// (PlanInput::trtllm_engine_build "serve", "trtllm-build" or unsaid: serve): what TensorRT-LLM's source shows on the
// device (the engine's weights; through trtllm-serve a config.json FP8 checkpoint's unquantized,
// which then stand for the runtime too) plus PlanInput::engine_build_extra_bytes (TensorRT's own,
// closed; 0 at the point, the ranges vary it). Says the assumption and the unknown; returns
// true, with p's failure set, when the build does not fit the free memory.
bool TrtllmEngineBuildFails(const PlanInput& in, Plan& p);

// The ranges' variant (launch_plan_sensitivity.cc): the build holding as much again as the
// engine's weights beyond them. False when the plan priced no build.
bool TrtllmEngineBuildVariant(const PlanInput& in, const Plan& p, PlanInput& lo, std::string& what);

// The ranges' other build path when none was said and the two differ (a config.json FP8
// checkpoint: unquantized through trtllm-serve, FP8 through trtllm-build). False otherwise.
bool TrtllmEngineBuildPathVariant(const PlanInput& in, const Plan& p, PlanInput& other, std::string& what);

}  // namespace tpt::memory::internal
