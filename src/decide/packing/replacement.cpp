// ACT-2a on the packing state of state.h.
#include "decide/packing/replacement.h"

#include "decide/packing/gpu_device.h"
#include "decide/packing/state.h"

namespace kubex::decide::packing {

ReplacementFit replacement_fit(const Pool& pool, const std::string& ns, const std::string& name, Hundredths fraction,
                               std::int64_t whole, const MemoryReserve& reserve) {
  ReplacementFit out;
  detail::State s = detail::build_state(pool, reserve);
  std::size_t node = s.nodes.size(), pod = s.pods.size();
  for (std::size_t n = 0; n < s.nodes.size() && pod == s.pods.size(); ++n) {
    for (std::size_t i : s.nodes[n].pods) {
      if (s.pods[i].pod->ns == ns && s.pods[i].pod->name == name) {
        node = n;
        pod = i;
        break;
      }
    }
  }
  if (pod == s.pods.size()) {
    out.reason = "pod " + ns + "/" + name + " is not on a node";
    out.blocker = "gpu";
    return out;
  }
  // Free the pod's own share, CPU and memory where it runs now.
  detail::NodeState& own = s.nodes[node];
  const PoolPod& p = *s.pods[pod].pod;
  for (int g : s.pods[pod].gpus) {
    const auto gi = static_cast<std::size_t>(g);
    own.gpus[gi] -= p.fraction > 0 ? p.fraction : kOneGpu;
    if (own.gpus[gi] <= 0) {
      own.gpus[gi] = 0;
      own.gpu_modes[gi].clear();
    }
  }
  own.cpu_used -= p.cpu_millis;
  own.memory_used -= p.memory_bytes;
  std::vector<std::size_t> dests;
  for (std::size_t n = 0; n < s.nodes.size(); ++n) {
    const detail::NodeState& d = s.nodes[n];
    if (d.node->gpu_capacity <= 0 || !d.node->ready || d.node->unschedulable || !d.node->consolidating_policy.empty())
      continue;
    if (d.over_capacity && n != node) continue;
    dests.push_back(n);
  }
  detail::Destinations ds = detail::destinations_of(s, dests);
  // CON-5a: a fraction keeps its GPU model; a whole-GPU value may go to any node the pod's constraints allow.
  PoolPod replacement = p;
  replacement.fraction = fraction > 0 ? fraction : 0;
  replacement.whole_gpus = fraction > 0 ? 0 : whole;
  detail::PlaceResult r = detail::place(s, ds, replacement, replacement.fraction, replacement.whole_gpus,
                                        fraction > 0 ? &own.product : nullptr, *find_strategy("kai-binpack"));
  if (r.placed) {
    out.fits = true;
    out.node = s.nodes[ds.nodes[r.destination]].node->name;
    out.blocker = "none";
  } else {
    out.reason = detail::does_not_fit(replacement, replacement.gpu(), r);
    out.blocker = blocker_name(r.failed);
  }
  return out;
}

}  // namespace kubex::decide::packing
