#include "decide/packing/requests.h"

#include <algorithm>

namespace kubex::decide::packing {

Requests pod_requests(const std::vector<ContainerRequest>& containers, Requests overhead) {
  // k8s.io/component-helpers/resource PodRequests: regular containers and sidecars add up; each plain init
  // container runs alongside the sidecars started before it; the pod needs the larger of the two.
  Requests sum, sidecars, init_max;
  for (const auto& c : containers) {
    if (!c.init) {
      sum.cpu_millis += c.cpu_millis;
      sum.memory_bytes += c.memory_bytes;
      continue;
    }
    Requests during;
    if (c.restartable) {
      sum.cpu_millis += c.cpu_millis;
      sum.memory_bytes += c.memory_bytes;
      sidecars.cpu_millis += c.cpu_millis;
      sidecars.memory_bytes += c.memory_bytes;
      during = sidecars;
    } else {
      during = {c.cpu_millis + sidecars.cpu_millis, c.memory_bytes + sidecars.memory_bytes};
    }
    init_max.cpu_millis = std::max(init_max.cpu_millis, during.cpu_millis);
    init_max.memory_bytes = std::max(init_max.memory_bytes, during.memory_bytes);
  }
  return {std::max(sum.cpu_millis, init_max.cpu_millis) + overhead.cpu_millis,
          std::max(sum.memory_bytes, init_max.memory_bytes) + overhead.memory_bytes};
}

}  // namespace kubex::decide::packing
