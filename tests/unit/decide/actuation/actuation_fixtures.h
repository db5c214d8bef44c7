// Builders for the actuation and rollback tests: allocations, pods and workloads at a fixed `now`.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "api/keys.h"
#include "decide/actuation/actuation.h"

namespace kubex::decide::actuation::test {

using namespace std::chrono_literals;

inline const common::TimePoint kNow = common::TimePoint{std::chrono::seconds(1'800'000'000)};

inline GpuAllocation frac(std::string c, Hundredths v) {
  return {std::move(c), v, true};
}
inline GpuAllocation whole(std::string c, std::int64_t n) {
  return {std::move(c), n * kOneGpu, false};
}
inline Allocation one(GpuAllocation g) {
  return {std::move(g)};
}

// A Running, Ready, controller-owned pod "name" (uid "uid-name") created `age` ago and Ready since then,
// with live allocation `live`.
inline PodFacts pod(std::string name, Allocation live, common::Duration age = 1h) {
  PodFacts p;
  p.uid = "uid-" + name;
  p.name = std::move(name);
  p.phase = "Running";
  p.created = kNow - age;
  p.ready = true;
  p.ready_since = kNow - age;
  p.live = std::move(live);
  return p;
}

inline PodFacts not_ready(PodFacts p) {
  p.ready = false;
  return p;
}

inline PodFacts terminating(PodFacts p) {
  p.terminating = true;
  return p;
}

inline PodFacts with_annotation(PodFacts p, std::string key, std::string value) {
  p.annotations[std::move(key)] = std::move(value);
  return p;
}

// spec.replicas defaults to the number of controller-owned, unfinished pods given: ACT-3
// counts a replica with no pod as in flight.
inline WorkloadFacts deployment(std::vector<PodFacts> pods, std::string max_unavailable = "25%",
                                std::optional<std::int64_t> replicas = std::nullopt) {
  WorkloadFacts w;
  w.kind = "Deployment";
  w.name = "web";
  if (!replicas) {
    std::int64_t n = 0;
    for (const PodFacts& p : pods) n += p.controller_owned && !p.finished();
    replicas = n;
  }
  w.replicas = replicas;
  w.max_unavailable = std::move(max_unavailable);
  w.pods = std::move(pods);
  return w;
}

// The seed's starter case: a Deployment (maxUnavailable 25 %, 3 replicas) at 0.25, desired 0.5, under the
// seed's strategy (inPlaceResize.enabled: false, so no ACT-6 note).
inline Input starter(std::vector<PodFacts> pods) {
  Input in;
  in.workload = deployment(std::move(pods));
  in.desired = one(frac("app", 50));
  in.settings.in_place_resize = false;
  in.now = kNow;
  return in;
}

inline std::vector<std::string> names(const std::vector<Check>& checks) {
  std::vector<std::string> out;
  for (const Check& c : checks) out.push_back(c.name);
  return out;
}

inline const PodPlan* find(const Plan& plan, const std::string& name) {
  for (const PodPlan& p : plan.pods) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace kubex::decide::actuation::test
