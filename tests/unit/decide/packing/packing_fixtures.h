// Builders for consolidation pools in decide/packing tests.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "decide/packing/model.h"
#include "decide/packing/plan.h"

namespace kubex::decide::packing::test {

inline constexpr std::int64_t kGi = 1024LL * 1024 * 1024;

inline PoolNode node(std::string name, std::int64_t gpus = 1) {
  PoolNode n;
  n.name = std::move(name);
  n.gpu_capacity = gpus;
  n.cpu_millis = 16'000;
  n.memory_bytes = 64 * kGi;
  n.ready = true;
  return n;
}

// A movable fraction pod (hundredths), namespace "ml".
inline PoolPod frac(std::string name, std::string on, Hundredths h, std::string group = "") {
  PoolPod p;
  p.ns = "ml";
  p.name = std::move(name);
  p.node = std::move(on);
  p.fraction = h;
  p.gpu_group = std::move(group);
  p.cpu_millis = 100;
  p.memory_bytes = kGi;
  return p;
}

inline PoolPod whole(std::string name, std::string on, std::int64_t k) {
  PoolPod p = frac(std::move(name), std::move(on), 0);
  p.whole_gpus = k;
  return p;
}

inline PoolPod cpu_only(std::string name, std::string on, std::int64_t cpu, std::int64_t mem = 0) {
  PoolPod p = frac(std::move(name), std::move(on), 0);
  p.cpu_millis = cpu;
  p.memory_bytes = mem;
  return p;
}

inline Options threshold(std::int32_t percent) {
  Options o;
  o.threshold_percent = percent;
  return o;
}

// A copy, so that a plan returned by value may be looked into in one expression.
inline std::optional<Candidate> find_candidate(const Plan& p, const std::string& node) {
  for (const auto& c : p.candidates)
    if (c.node == node) return c;
  return std::nullopt;
}

inline const NodeUsage* find_node(const Plan& p, const std::string& node) {
  for (const auto& n : p.nodes)
    if (n.name == node) return &n;
  return nullptr;
}

}  // namespace kubex::decide::packing::test
