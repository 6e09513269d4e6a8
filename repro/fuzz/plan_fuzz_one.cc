// plan_fuzz_one.cc: see plan_fuzz_one.h.
#include "repro/fuzz/plan_fuzz_one.h"

#include <cstdlib>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "repro/backend.h"
#include "repro/launch.h"
#include "repro/repro_plan.h"
#include "repro/runner.h"

namespace tpt::fuzz {

void FuzzPlanOne(const uint8_t* data, size_t size) {
  using namespace tpt::repro;
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return;
  auto plan = PlanFromJson(j, "fuzz.json");
  if (!plan.ok()) return;
  if (!ValidatePlan(*plan).ok()) return;
  // What the plan says of itself reads back as a plan that passes the checks.
  nlohmann::json again = PlanToJson(*plan);
  (void)again.dump();  // throws (aborts) on invalid UTF-8
  auto back = PlanFromJson(again, "fuzz.json (written back)");
  if (!back.ok() || !ValidatePlan(*back).ok()) std::abort();
  Plan fixed = WithFix(*plan);
  (void)fixed;
  // Replays of many ranks are slow, not wrong: keep iterations short.
  if (plan->tp * plan->pp > 16) return;
  auto layout = DetectLayout([](const std::string&) { return std::optional<std::string>(); }, plan->tp * plan->pp, 1,
                             /*force_colocated=*/true);
  if (!layout.ok()) return;
  auto backend = MakeSimulatedBackend(SimulatedDevice{});
  ReproOptions opt;
  opt.step_deadline_s = 5;
  ReproReport rep = Reproduce(*plan, *backend, *layout, opt);
  if (rep.verdict.outcome.empty()) std::abort();
}

}  // namespace tpt::fuzz
