// TGI's GPTQ kernels before v1.3.4: warm-ups that fail whatever the memory.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memory/model_config.h"

namespace tpt::memory {

// Why the plan cannot vouch for a TGI warm-up of a GPTQ checkpoint at this version, or
// nullopt. Before v1.3.4 TGI's GPTQ path had defects that fail the warm-up independently
// of the memory the plan prices, and the warm-up reports every exception as "Not enough
// memory to handle N prefill tokens" (see tgi_gptq_kernels.cc for the source lines).
std::optional<std::string> TgiGptqWarmupUnvouched(const std::string& version, const ModelConfig& m);

// The plan's side: the reason under `unknown:` and the outcome not vouched for.
void SayTgiGptqWarmupUnvouched(const std::string& version, const ModelConfig& m, std::vector<std::string>* unknowns,
                               bool* outcome_certain);

}  // namespace tpt::memory
