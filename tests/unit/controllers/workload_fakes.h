// The workloads a controller reads (observe::WorkloadViews) as a fake: a list the test fills, found by
// observe::workload_key, with the target containers of each workload's pod template set per key.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/views.h"
#include "decide/policy/desired.h"
#include "observe/workloads.h"

namespace kubex::controllers::test {

class FakeWorkloadViews final : public observe::WorkloadViews {
 public:
  std::vector<std::shared_ptr<const api::WorkloadView>> items;
  // workload_key -> the target containers of its pod template (none when absent).
  std::map<std::string, std::vector<decide::policy::TargetContainer>> containers;

  std::vector<std::shared_ptr<const api::WorkloadView>> list() const override { return items; }
  std::shared_ptr<const api::WorkloadView> find(const std::string& key) const override {
    for (const auto& w : items) {
      if (observe::workload_key(*w) == key) return w;
    }
    return nullptr;
  }
  std::vector<decide::policy::TargetContainer> target_containers(const api::WorkloadView& w) const override {
    auto it = containers.find(observe::workload_key(w));
    return it == containers.end() ? std::vector<decide::policy::TargetContainer>{} : it->second;
  }
};

}  // namespace kubex::controllers::test
