// checkability.h: what `tptriage repro` does with each root cause of
// rules/taxonomy.json: replays the server's memory start-up (runner.h),
// runs a check on this box (box_check.h), or refuses, saying why a box
// cannot settle it. repro/README.md has one line per entry; a test keeps
// the table, the taxonomy and the README in step.
//
//   const auto* c = tpt::repro::CheckabilityOf("shm_too_small");
//   if (c->kind == tpt::repro::ReproKind::kNotCheckable) Refuse(c->how);
#pragma once

#include <string_view>
#include <vector>

namespace tpt::repro {

enum class ReproKind {
  kMemoryReplay,  // the server's start-up memory steps (runner.h)
  kBoxCheck,      // a check of this box's GPUs, NCCL, /dev/shm, network (box_check.h)
  kNotCheckable,  // nothing a box can show; `how` says why
};

struct Checkability {
  std::string_view id;
  ReproKind kind;
  std::string_view how;  // how it is checked, or why it cannot be
};

// Null for an id the table does not know.
const Checkability* CheckabilityOf(std::string_view root_cause);
const std::vector<Checkability>& CheckabilityTable();

}  // namespace tpt::repro
