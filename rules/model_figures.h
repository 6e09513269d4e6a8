// model_figures.h: `analyze --model` fills what the log does not print from the
// model's files (memory/model_config.h), as figures on the memory diagnoses and one
// info finding.
#pragma once

#include "memory/model_config.h"
#include "rules/analysis.h"

namespace tpt::memory {

// `analyze --model`: what the model's files say about the run an analysis describes
// (its framework, version, TP/PP and configuration): weights per rank, KV bytes per
// token, the context length. Memory diagnoses get them as `model_*` figures where the
// log printed none, and one info finding ("model_figures") carries them with a
// comparison against the weights the log printed. Returns false (and changes nothing)
// when the run's parallelism does not fit the model (the finding then says why).
bool AddModelFigures(const ModelConfig& m, Analysis* a);

}  // namespace tpt::memory
