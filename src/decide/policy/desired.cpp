#include "decide/policy/desired.h"

#include <map>
#include <set>

#include "decide/desired_annotations.h"

namespace kubex::decide::policy {

namespace {

const std::optional<common::Quantity>& field(const api::StaticResources& r, Slot slot) {
  switch (slot) {
    case Slot::kRequestsGpu:
      return r.gpu_request;
    case Slot::kRequestsCpu:
      return r.cpu_request;
    case Slot::kRequestsMemory:
      return r.memory_request;
    case Slot::kLimitsCpu:
      return r.cpu_limit;
    case Slot::kLimitsMemory:
      return r.memory_limit;
    case Slot::kLimitsGpu:
      return r.gpu_limit;
  }
  return r.gpu_request;
}

std::optional<ProvidedValue> from_quantity(const common::Quantity& q, Slot slot) {
  ProvidedValue v;
  if (is_gpu(slot)) {
    if (q.sign() <= 0) return std::nullopt;  // VAL-4: requests.gpu and limits.gpu must be > 0
    v.gpu = desired_value(hundredths_of(q));
  } else {
    if (q.sign() < 0) return std::nullopt;
    v.quantity = q;
  }
  return v;
}

}  // namespace

std::optional<ProvidedValue> static_value(const api::StaticSpec& spec, const std::string& container,
                                          Slot slot, bool star_gpu) {
  auto named = spec.containers.find(container);
  if (named != spec.containers.end() && field(named->second, slot)) {
    return from_quantity(*field(named->second, slot), slot);
  }
  auto star = spec.containers.find("*");
  if (star == spec.containers.end() || !field(star->second, slot)) return std::nullopt;
  if (is_gpu(slot) && !star_gpu) return std::nullopt;
  return from_quantity(*field(star->second, slot), slot);
}

bool star_gpu_applies(std::span<const TargetContainer> containers, std::size_t i) {
  bool any = false;
  for (const auto& c : containers) any = any || c.has_gpu_allocation;
  return any ? containers[i].has_gpu_allocation : i == 0;
}

Desired collect_desired(const Match& match, const Workload& workload,
                        std::span<const TargetContainer> containers) {
  Desired d;
  d.containers.resize(containers.size());
  for (std::size_t i = 0; i < containers.size(); ++i) d.containers[i].name = containers[i].name;
  if (!match.managed) return d;

  // Recommender winners: their owner annotations, parsed once: requests.gpu from desired-resource-requests,
  // limits.gpu (the KAI-2 peak, REA-12 / PRO-7) from desired-resource-limits.
  std::map<std::pair<std::size_t, Slot>, std::map<std::string, Hundredths>> recommended;
  std::set<std::string> ignored;
  for (const auto& winner : {match.reactive_winner, match.proactive_winner}) {
    if (!winner) continue;
    const api::Kind kind = match.policies[*winner].policy->kind;
    for (Slot slot : {Slot::kRequestsGpu, Slot::kLimitsGpu}) {
      const std::string& key = slot == Slot::kRequestsGpu ? desired_requests_key(kind) : desired_limits_key(kind);
      auto it = workload.annotations.find(key);
      if (it == workload.annotations.end()) continue;
      auto parsed = parse_desired_gpu(it->second);
      if (!parsed) {
        ignored.insert(key);
        continue;
      }
      recommended[{*winner, slot}] = std::move(*parsed);
    }
  }
  d.ignored_sources.assign(ignored.begin(), ignored.end());

  for (std::size_t i = 0; i < containers.size(); ++i) {
    const bool star_gpu = star_gpu_applies(containers, i);
    for (Slot slot : kAllSlots) {
      for (std::size_t p : match.providers) {
        const api::Policy& policy = *match.policies[p].policy;
        std::optional<ProvidedValue> v;
        if (api::is_static(policy.kind)) {
          v = static_value(policy.static_spec, containers[i].name, slot, star_gpu);
        } else if (is_gpu(slot)) {
          auto rec = recommended.find({p, slot});
          if (rec != recommended.end()) {
            auto c = rec->second.find(containers[i].name);
            if (c != rec->second.end()) v = ProvidedValue{p, c->second, {}};
          }
        }
        if (v) {
          v->policy = p;
          d.containers[i].slots[index_of(slot)] = std::move(v);
          break;
        }
      }
    }
  }

  // SEL-9.
  for (std::size_t i = 0; i < containers.size() && !d.gpu_container; ++i) {
    if (containers[i].has_gpu_allocation && d.containers[i].at(Slot::kRequestsGpu)) d.gpu_container = i;
  }
  for (std::size_t i = 0; i < containers.size() && !d.gpu_container; ++i) {
    if (d.containers[i].at(Slot::kRequestsGpu)) d.gpu_container = i;
  }
  d.governing =
      d.gpu_container ? d.containers[*d.gpu_container].at(Slot::kRequestsGpu)->policy : *match.first_valid;
  return d;
}

}  // namespace kubex::decide::policy
