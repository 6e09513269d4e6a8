// repro_params.h: the parameters a diagnosis hands to `tptriage repro`: the
// scenario, the server and its layout, and the figures the log printed
// (total memory, weights, free memory at init and after the weights, the
// fraction, the KV pool's bytes per token, the warm-up's ask, graph batch
// size, custom all-reduce on or off). repro/README.md names each key.
//
//   d.repro = tpt::BuildRepro(run, d);
#pragma once

#include <nlohmann/json.hpp>

#include "rules/analysis.h"
#include "rules/run_index.h"

namespace tpt {

// The repro plan's parameters for diagnosis `d` of `run`; keys absent where the
// log does not print the figure.
nlohmann::json BuildRepro(const RunIndex& run, const Diagnosis& d);

}  // namespace tpt
