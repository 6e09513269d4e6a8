// memory_calls.h: memory-model calls a rule can make by name ("model": {"name": ...}).
//
// Each entry adapts one function of memory/memory_model.h (where every
// formula lives) to named inputs and outputs, so a rule file can say
//   "model": {"name": "sglang_kv_pool", "inputs": {"free_at_init_bytes": "...", ...}}
// and then use rest_gib, min_viable_mem_fraction_static, ... in its
// conditions and templates. No formula is written here.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rules/expr.h"

namespace tpt {

using ModelValues = std::map<std::string, Value>;

struct ModelSpec {
  std::string name;
  std::vector<std::string> inputs;   // a missing input is null
  std::vector<std::string> outputs;  // names the rule may use afterwards
  // Fills outputs it can compute; leaves the others out (null).
  std::function<void(const ModelValues& in, ModelValues* out)> run;
};

const ModelSpec* FindModel(std::string_view name);
std::string KnownModelNames();  // "sglang_kv_pool, vllm_kv, ..." for error messages

}  // namespace tpt
