#include "decide/admission/resource_plan.h"

#include <optional>

#include "decide/gates.h"

namespace kubex::decide {

namespace {

ConstraintTarget target(const std::string& container, Slot slot, Direction d = Direction::kNone) {
  return {container, resource_name(resource_of(slot)), usage_name(usage_of(slot)), direction_name(d)};
}

}  // namespace

ResourcePlan plan_cpu_memory(const PodResources& pod, const policy::Desired& desired,
                             const policy::Match& match, const api::StrategySpec& governing) {
  ResourcePlan plan;
  for (std::size_t i = 0; i < pod.targets.size() && i < desired.containers.size(); ++i) {
    const ContainerResources& c = pod.targets[i];
    for (Resource r : {Resource::kCpu, Resource::kMemory}) {
      struct Pending {
        Slot slot;
        common::Quantity value;
        Direction direction;
        std::size_t policy;
      };
      std::vector<Pending> pending;
      for (Usage u : {Usage::kRequest, Usage::kLimit}) {
        const Slot slot = slot_of(r, u);
        const auto& value = desired.containers[i].at(slot);
        if (!value) continue;
        common::Quantity q = value->quantity;
        switch (clamp_quantity(q, gates_for(governing, slot), c.name)) {
          case Clamp::kFloor:
            plan.reasons.add(reason::kFloorClamped, target(c.name, slot));
            break;
          case Clamp::kCeiling:
            plan.reasons.add(reason::kCeilingClamped, target(c.name, slot));
            break;
          case Clamp::kNone:
            break;
        }
        const Direction d = direction_of(c.quantity(slot), q);
        if (d == Direction::kNone) continue;
        const api::Strategy* provider = match.policies[value->policy].strategy;
        const api::StrategySpec& gate_spec = provider != nullptr ? provider->spec : governing;
        if (!gate_allows(gates_for(gate_spec, slot), d)) {
          plan.reasons.add(reason::kStrategyDisabled, target(c.name, slot, d));
          continue;
        }
        pending.push_back({slot, q, d, value->policy});
      }
      if (pending.empty()) continue;
      std::optional<common::Quantity> request = c.quantity(slot_of(r, Usage::kRequest));
      std::optional<common::Quantity> limit = c.quantity(slot_of(r, Usage::kLimit));
      for (const auto& p : pending) (usage_of(p.slot) == Usage::kLimit ? limit : request) = p.value;
      if (request && limit && *request > *limit) {
        for (const auto& p : pending) plan.reasons.add(reason::kRequestsExceedLimits, target(c.name, p.slot));
        continue;
      }
      for (const auto& p : pending) {
        plan.updates.push_back({i, p.slot, p.value});
        const auto& current = c.quantity(p.slot);
        Change ch;
        ch.container = c.name;
        ch.resource = r;
        ch.usage = usage_of(p.slot);
        ch.from = current ? current->canonical() : kUnspecified;
        ch.to = p.value.canonical();
        ch.desired = ch.to;
        ch.source = match.policies[p.policy].ref;
        plan.changes.push_back(std::move(ch));
      }
    }
  }
  return plan;
}

}  // namespace kubex::decide
