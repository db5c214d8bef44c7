// What `kubex plan consolidation` prints for one policy (CLI-2): the JSON document entry and the table, from
// decide::packing's plan and drain sequence. Internal to src/engine (plan_cmd.cpp).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "decide/packing/plan.h"

namespace kubex::engine {

struct PolicyPlan {
  std::string name;
  std::string source;  // "cluster" or the file it was read from
  std::int32_t threshold_percent = 75;
  std::string draining_node;   // status.drainingNode of an applied policy ("" = none)
  std::string last_drained_node, last_drain_time;  // status.lastDrainedNode / lastDrainTime ("" = none)
  std::vector<std::string> errors;  // VAL-1 errors (the policy is not planned)
  std::string invalid_reason;       // InvalidSpec | InvalidContract
  bool empty_pool = false;          // CON-1: NoMatchingNodeSelector
  decide::packing::Plan plan;
  decide::packing::DrainSequence sequence;
};

// {"name", "source", "thresholdPercent", "valid", "errors", "outcome" (WouldDrain | NoCandidate |
//  NoMatchingNodeSelector | InvalidSpec | InvalidContract), "message", "drainingNode", "pool": {"nodes",
//  "gpuCapacity", "gpuAllocated", "estimatedReclaimableGPUs", "nodeUsage": [{"name", "gpuCapacity", "allocated",
//  "utilizationPercent", "gpus": ["0.75", …], "destination", "notDestination"}]}, "candidates": [{"node",
//  "utilizationPercent", "candidate", "feasible", "reason", "placements": [{"pod", "size", "to", "gpus"}]}],
//  "drainSequence": [{"node", "utilizationPercent", "placements"}], "afterSequence": {"message"},
//  "reclaimable": {"gpuCapacity", "lowerBoundGPUs", "gpusFreed", "gpusInUseAfter", "reclaimableGPUs"}}
nlohmann::json policy_plan_json(const PolicyPlan& p);
void print_policy_plan(const PolicyPlan& p, std::ostream& out);

}  // namespace kubex::engine
