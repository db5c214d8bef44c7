// What `kubex plan sizing` prints (issue 36 item 3): per reactive policy, per workload it wins, the replay's
// tally (decide/sizing/replay.h) for kubex and the three reference sizers, as a table or one JSON document
// {"apiVersion": "cli.kubex.ai/v1alpha1", "kind": "SizingPlan", "since": …, "policies": [...]} whose per-workload
// and total fields are bench-sizing's (gpu_hours_as_written, gpu_hours_held, saved_percent,
// over_allocation_percent, over_allocation_episodes, resizes_per_container_day).
#pragma once

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "decide/gpu_value.h"
#include "decide/sizing/replay.h"

namespace kubex::engine {

struct SizingRow {
  std::string ns, kind, name, container;
  decide::Hundredths as_written = 0;  // GPUs per pod as the user wrote them
  bool has_history = false;           // false: no sample came back ("no history")
  decide::sizing::Tally kubex, oracle_hourly, static_peak, p95_history;
};

struct SizingSection {
  std::string ref;     // "ClusterGpuReactivePolicy/name" (namespaced: "GpuReactivePolicy/ns/name")
  std::string name;    // metadata.name
  std::string source;  // "cluster" or the file name
  std::string strategy;  // "ClusterAutomationStrategy/kai", or "" (the guide's starter strategy)
  std::vector<std::string> errors;  // invalid policy: no rows
  std::vector<SizingRow> rows;
};

// The sum of the rows with history.
decide::sizing::Tally total(const std::vector<SizingRow>& rows, decide::sizing::Tally SizingRow::*which);

nlohmann::json sizing_plan_json(const std::vector<SizingSection>& sections, const std::string& since);
void print_sizing_plan(const SizingSection& section, const std::string& since, std::ostream& out);

}  // namespace kubex::engine
