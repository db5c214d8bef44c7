#include "decide/policy/static_owner.h"

#include "decide/desired_annotations.h"

namespace kubex::decide {

namespace {

bool is_static_key(const std::string& key) {
  return is_desired_key(key) &&
         (key.starts_with(policy::annotation_namespace(api::Kind::kStaticPolicy)) ||
          key.starts_with(policy::annotation_namespace(api::Kind::kClusterStaticPolicy)));
}

}  // namespace

std::map<std::string, std::string> static_annotation_values(
    const policy::Match& match, std::span<const policy::TargetContainer> containers) {
  // kind (static / cwstatic) -> requests / limits values.
  std::map<api::Kind, DesiredValues> requests, limits;
  if (match.managed) {
    for (std::size_t i = 0; i < containers.size(); ++i) {
      const bool star_gpu = policy::star_gpu_applies(containers, i);
      for (Slot slot : kAllSlots) {
        for (std::size_t p : match.providers) {
          const api::Policy& pol = *match.policies[p].policy;
          if (!api::is_static(pol.kind)) continue;
          auto v = policy::static_value(pol.static_spec, containers[i].name, slot, star_gpu);
          if (!v) continue;
          const std::string text = is_gpu(slot) ? format_gpu(v->gpu) : v->quantity.canonical();
          auto& target = usage_of(slot) == Usage::kLimit ? limits[pol.kind] : requests[pol.kind];
          target[containers[i].name][resource_name(resource_of(slot))] = text;
          break;
        }
      }
    }
  }
  std::map<std::string, std::string> out;
  for (const auto& [kind, values] : requests) out[desired_requests_key(kind)] = format_desired(values);
  for (const auto& [kind, values] : limits) out[desired_limits_key(kind)] = format_desired(values);
  return out;
}

bool OwnerAnnotationPlan::satisfied_by(const std::map<std::string, std::string>& owner_annotations) const {
  if (hold) return true;
  for (const auto& [key, value] : desired) {
    auto it = owner_annotations.find(key);
    if (it == owner_annotations.end() || it->second != value) return false;
  }
  for (const auto& key : remove) {
    if (owner_annotations.count(key)) return false;
  }
  return true;
}

OwnerAnnotationPlan static_owner_annotations(const policy::Match& match, const policy::Workload& workload,
                                             std::span<const policy::TargetContainer> containers) {
  OwnerAnnotationPlan plan;
  if (match.on_hold) {
    plan.hold = true;
    return plan;
  }
  plan.desired = static_annotation_values(match, containers);
  for (const auto& [key, value] : workload.annotations) {
    if (is_static_key(key) && !plan.desired.count(key)) plan.remove.push_back(key);
  }
  return plan;
}

}  // namespace kubex::decide
