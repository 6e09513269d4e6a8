// vllm_entrypoint.h: which of vLLM's entry points starts the engine, and V1's defaults for the
// profiling run that follow from it and from the card: max_num_batched_tokens and max_num_seqs.
//
//   TPT_RETURN_IF_ERROR(VllmEntrypointOk(entry, framework));     // flag reading
//   VllmV1BatchDefaults d = VllmV1Defaults(version, total, gpu_name, /*llm_class=*/true);
//
// `vllm serve` (and the OpenAI server module it runs) builds its engine with
// UsageContext.OPENAI_API_SERVER; the offline Python class `LLM(...)` with UsageContext.LLM_CLASS
// (vllm/entrypoints/llm.py 0.7.0:240, 0.20.0:382, `LLMEngine.from_engine_args(engine_args,
// usage_context=UsageContext.LLM_CLASS)`). V1's EngineArgs picks its defaults from a table keyed
// by that context (engine/arg_utils.py, read in each release's sdist or wheel):
//   0.6.6.post1 `_override_v1_engine_args` l.1258-1276: LLM_CLASS 8192, OPENAI_API_SERVER 2048 on
//               every card.
//   0.7.0 l.1268-1300, 0.7.3 l.1355-1387, 0.8.3 `_set_default_args_v1` l.1647-1658, 0.8.4
//               l.1669-1681: cards named H100/H200 16384 / 8192, others 8192 / 2048 (vllm#12369).
//   0.8.5 l.1596-1608: by the card's memory, >= 70 GiB 16384 / 8192, below 8192 / 2048
//               (vllm#17073); 0.9.0 on leaves cards named A100 out of the large row (vllm#17885):
//               0.9.2 l.1629-1648, 0.10.0 l.1584-1603, 0.11.0 l.1605-1624, 0.13.0 l.1797-1816,
//               0.16.0 l.1877-1896, 0.19.0 l.2053-2072, 0.20.0 `get_batch_defaults`
//               l.2208-2227, 0.21.0 l.2246-2265, 0.22.0 l.2311, 0.25.0 l.2426, 0.26.0 l.2460,
//               0.27.0 l.2544 (the same two rows).
//   0.28.0 l.2582-2601: a row above them, >= 160 GiB (B200/B300 class), 16384 for both contexts;
//               the 70 GiB row below it unchanged (absent at 0.27.0).
// max_num_seqs is the same for both contexts in every release read (1024 / 256 by the same
// rows; before 0.8.4 V1's EngineArgs.__post_init__ gives 1024 on every card, 0.8.4 1024 on
// cards named H100/H200 and 256 on others). V0 does not key its defaults by the context
// (0.6.3 `create_engine_config` l.936-962, 0.8.3 `_set_default_args_v0`): the entry point
// moves nothing there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "memory/remedy.h"

namespace tpt::memory {

// --vllm-entrypoint: "serve" (vllm serve, the default) or "llm" (the offline LLM class); vLLM's only.
Status VllmEntrypointOk(const std::string& entry, const std::string& framework);

struct VllmV1BatchDefaults {
  int64_t batched_tokens = 2048;
  int64_t max_num_seqs = 256;
  std::string why;  // the table's row and the entry point, for the plan's assumption
};

// V1's defaults at `version` on a card of `total_bytes` named `gpu_name` (lower or upper case),
// for the LLM class (`llm_class`) or vllm serve. An unparsed version takes the newest rows.
VllmV1BatchDefaults VllmV1Defaults(const std::string& version, double total_bytes, const std::string& gpu_name,
                                   bool llm_class);

// The remedies of a plan for `LLM(...)` (--vllm-entrypoint llm) as the class takes them: a serve
// flag `--foo-bar` is EngineArgs' field `foo_bar` (vllm serve's parser adds each field as
// `--` + the name with '-' for '_': engine/arg_utils.py EngineArgs.add_cli_args; the class passes
// its keywords to EngineArgs, entrypoints/llm.py), the value a Python literal (a string quoted, a
// switch True, the multimodal limits a dict), and the flags named in each remedy's reason the
// same. The text prints such a remedy as `name=value`.
void SpellRemediesForLlmClass(std::vector<Remedy>& remedies);

}  // namespace tpt::memory
