// Builders for the reactive tests: the starter policy of SPEC §6's examples and small pods.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/objects.h"
#include "decide/reactive/reactive.h"

namespace kubex::decide::reactive::test {

using namespace std::chrono_literals;

inline const common::TimePoint kNow = common::TimePoint{std::chrono::seconds(1'800'000'000)};

// SPEC §6 starter policy: both signals upsize 100/2m/20/200, scale-back 75/10m/20; compute fullGPU, memory
// currentAllocation.
inline api::ReactiveSpec starter() {
  api::ReactiveSpec s;
  s.min_pod_metrics_age = 15min;
  for (api::SignalConfig* cfg : {&s.compute, &s.memory}) {
    cfg->upsize = {100, 2min, 20, 200};
    cfg->scale_back = {75, 10min, 20};
  }
  s.compute.prometheus = {"kubex_gpu_container_sm_utilization_percent", "fullGPU", "namespace", "pod",
                          "container"};
  s.memory.prometheus = {"kubex_gpu_container_memory_used_percent", "currentAllocation", "namespace", "pod",
                         "container"};
  return s;
}

// One container with the same sample for both directions of each signal (nullopt: none).
inline ContainerInput ctr(std::string name, Hundredths a, std::optional<double> compute,
                          std::optional<double> memory) {
  ContainerInput c;
  c.name = std::move(name);
  c.allocation = a;
  c.samples = {compute, compute, memory, memory, std::nullopt};
  return c;
}

inline PodInput pod(std::string name, std::vector<ContainerInput> containers) {
  return PodInput{std::move(name), std::move(containers), ""};
}

inline State state(std::map<std::string, Hundredths> baseline, std::string driver) {
  return State{std::move(baseline), std::move(driver), "2026-12-01T10:00:00Z"};
}

// One decide() call with the starter policy at kNow; tests change spec and in.
struct Cycle {
  api::ReactiveSpec spec = starter();
  Input in;
  Cycle() {
    in.spec = &spec;
    in.now = kNow;
  }
  Cycle(const Cycle&) = delete;
  Outcome go() const { return decide(in); }
};

using Strings = std::map<std::string, std::string>;

// GPU-2 strings of a container -> value map.
inline Strings strings(const std::map<std::string, Hundredths>& m) {
  Strings out;
  for (const auto& [k, v] : m) out[k] = format_gpu(v);
  return out;
}

}  // namespace kubex::decide::reactive::test
