// SimPod / SimNode builders for the GPU model's tests.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "common/clock.h"
#include "sim/cluster/model.h"

namespace kubex::sim::gpu::testing {

inline const common::TimePoint kT0{std::chrono::seconds(1'800'000'000)};

inline std::shared_ptr<const cluster::SimNode> gpu_node(const std::string& name, int gpus = 2,
                                                        std::int64_t memory_mib = 16384) {
  auto n = std::make_shared<cluster::SimNode>();
  n->name = name;
  n->gpus = gpus;
  n->gpu_memory_mib = memory_mib;
  n->gpu_product = "Tesla-T4";
  for (int i = 0; i < gpus; ++i) n->gpu_uuids.push_back(cluster::gpu_uuid(name, i));
  return n;
}

struct PodSpec {
  std::string ns = "default", name, node = "n1";
  std::map<std::string, std::string> annotations, labels;
  // container name -> whole GPUs (0 for none); in order of `names`.
  std::vector<std::pair<std::string, std::int64_t>> containers = {{"app", 0}};
  double fraction = 0;
  common::TimePoint started = kT0;
  bool running = true;
  int restarts = 0;
};

inline cluster::SimPod make_pod(const PodSpec& s) {
  cluster::SimPod p;
  p.ns = s.ns;
  p.name = s.name;
  p.uid = "uid-" + s.ns + "-" + s.name;
  p.node = s.node;
  p.phase = "Running";
  p.annotations = s.annotations;
  p.labels = s.labels;
  p.started = s.started;
  p.gpu_fraction = s.fraction;
  for (const auto& [name, gpus] : s.containers) {
    cluster::SimContainer c;
    c.name = name;
    c.gpu = gpus;
    c.running = s.running;
    c.restart_count = s.restarts;
    p.gpu_whole += gpus;
    p.containers.push_back(c);
  }
  return p;
}

// A KAI fraction pod in GPU group `group`.
inline PodSpec fraction_spec(const std::string& name, double fraction, const std::string& group,
                             std::map<std::string, std::string> annotations) {
  PodSpec s;
  s.name = name;
  s.fraction = fraction;
  s.labels[kubex::api::keys::kGpuGroupLabel] = group;
  s.annotations = std::move(annotations);
  s.annotations[kubex::api::keys::kGpuFraction] = std::to_string(fraction);
  return s;
}

// KAI's reservation pod holding physical GPU `index` for `group` on `node`.
inline cluster::SimPod reservation(const std::string& group, const std::string& index,
                                   const std::string& node = "n1") {
  PodSpec s;
  s.ns = kubex::api::keys::kDefaultReservationNamespace;
  s.name = "gpu-reservation-" + group;
  s.node = node;
  s.labels[kubex::api::keys::kGpuGroupLabel] = group;
  s.annotations[cluster::kGpuIndicesAnnotation] = index;
  s.containers = {{"reserve", 1}};
  return make_pod(s);
}

// A pod with whole GPUs on `indices` ("0,1").
inline PodSpec whole_spec(const std::string& name, std::int64_t gpus, const std::string& indices,
                          std::map<std::string, std::string> annotations) {
  PodSpec s;
  s.name = name;
  s.containers = {{"app", gpus}};
  s.annotations = std::move(annotations);
  if (!indices.empty()) s.annotations[cluster::kGpuIndicesAnnotation] = indices;
  return s;
}

inline std::shared_ptr<const cluster::SimPod> shared(cluster::SimPod p) {
  return std::make_shared<const cluster::SimPod>(std::move(p));
}

}  // namespace kubex::sim::gpu::testing
