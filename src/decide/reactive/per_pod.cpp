#include "decide/reactive/per_pod.h"

#include <functional>
#include <map>

namespace kubex::decide::reactive {

namespace {

// Both present and exactly equal (Prometheus returns the same float for the same series and window).
bool same(const std::optional<double>& a, const std::optional<double>& b) {
  return a && b && *a == *b;
}

// Step 2 for two pods with the same upsize samples: every container's compute spread present and equal on both,
// and the series moved (some spread > 0).
bool moved_together(const PodInput& a, const PodInput& b) {
  bool moved = false;
  for (std::size_t i = 0; i < a.containers.size(); ++i) {
    const std::optional<double>& x = a.containers[i].samples.compute_spread;
    if (!same(x, b.containers[i].samples.compute_spread)) return false;
    moved = moved || *x > 0;
  }
  return moved;
}

// Calls `pair` for every two pods of one known GPU (GPUs in name order, pods in input order).
void each_sharing_pair(const std::vector<PodRef>& pods, const std::function<void(const PodRef&, const PodRef&)>& pair) {
  std::map<std::string, std::vector<const PodRef*>> by_gpu;
  for (const PodRef& p : pods) {
    if (p.pod && !p.pod->gpu.empty()) by_gpu[p.pod->gpu].push_back(&p);
  }
  for (const auto& [gpu, sharers] : by_gpu) {
    for (std::size_t i = 0; i < sharers.size(); ++i) {
      for (std::size_t j = i + 1; j < sharers.size(); ++j) pair(*sharers[i], *sharers[j]);
    }
  }
}

}  // namespace

bool same_upsize_samples(const PodInput& a, const PodInput& b) {
  if (a.containers.empty() || a.containers.size() != b.containers.size()) return false;
  bool nonzero = false;
  for (std::size_t i = 0; i < a.containers.size(); ++i) {
    const Samples& x = a.containers[i].samples;
    const Samples& y = b.containers[i].samples;
    if (!same(x.compute_upsize, y.compute_upsize) || !same(x.memory_upsize, y.memory_upsize)) return false;
    nonzero = nonzero || *x.compute_upsize != 0 || *x.memory_upsize != 0;
  }
  return nonzero;
}

bool copied_samples(const PodInput& a, const PodInput& b) {
  return same_upsize_samples(a, b) && moved_together(a, b);
}

PodKeys suspects(const std::vector<PodRef>& pods) {
  PodKeys out;
  each_sharing_pair(pods, [&](const PodRef& a, const PodRef& b) {
    if (!same_upsize_samples(*a.pod, *b.pod)) return;
    out.insert({a.ns, a.pod->name});
    out.insert({b.ns, b.pod->name});
  });
  return out;
}

NotPerPod not_per_pod(const std::vector<PodRef>& pods) {
  NotPerPod out;
  each_sharing_pair(pods, [&](const PodRef& a, const PodRef& b) {
    if (!copied_samples(*a.pod, *b.pod)) return;
    out.pods.insert({a.ns, a.pod->name});
    out.pods.insert({b.ns, b.pod->name});
    if (out.first.empty()) {
      out.first = a.ns + "/" + a.pod->name;
      out.second = b.ns + "/" + b.pod->name;
    }
  });
  return out;
}

}  // namespace kubex::decide::reactive
