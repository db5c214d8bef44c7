// A pod's CPU and memory requests as the kube-scheduler counts them (CON-6a): the sum of the regular and
// restartable init (sidecar) containers, or the largest init container together with the sidecars started
// before it when that is more, plus spec.overhead (k8s.io/component-helpers resource.PodRequests).
#pragma once

#include <cstdint>
#include <vector>

namespace kubex::decide::packing {

struct ContainerRequest {
  bool init = false;         // listed in spec.initContainers
  bool restartable = false;  // an init container with restartPolicy: Always (a sidecar)
  std::int64_t cpu_millis = 0, memory_bytes = 0;
};

struct Requests {
  std::int64_t cpu_millis = 0, memory_bytes = 0;
  friend bool operator==(const Requests&, const Requests&) = default;
};

// `containers` in pod order: init containers (in spec order) and regular containers in any order.
Requests pod_requests(const std::vector<ContainerRequest>& containers, Requests overhead = {});

}  // namespace kubex::decide::packing
