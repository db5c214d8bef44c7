// ACT-2a: does the replacement of a pod fit the cluster now at a larger GPU size? The same packing rules as
// consolidation (CON-2a cap, CON-3 occupancy, CON-5a model, CON-5b modes, CON-6 placement, CON-6a constraints),
// with the pod's own share, CPU and memory freed where it runs now. Pure: the caller gives the pool snapshot.
#pragma once

#include <cstdint>
#include <string>

#include "decide/gpu_value.h"
#include "decide/packing/gpu_device.h"
#include "decide/packing/model.h"

namespace kubex::decide::packing {

struct ReplacementFit {
  bool fits = false;
  std::string node;    // where it would land (fits)
  // Does not fit: "pod <ns>/<name> (<size>) does not fit[: <check>]" (the best node's reason, as CON-6a), or
  // "pod <ns>/<name> is not on a node" when the snapshot does not hold it.
  std::string reason;
  std::string blocker;  // the CON-12 name of the check ("none" when it fits)
};

// Destinations: every node of `pool` with GPU capacity that is Ready, schedulable, not being drained and not over
// capacity (empty nodes too: a new pod may start one). A fraction stays on nodes of the GPU product of the node
// it runs on (CON-5a). `fraction` in hundredths (1..99), else `whole` GPUs. The pod keeps its scheduling
// constraints, CPU, memory and compute mode.
ReplacementFit replacement_fit(const Pool& pool, const std::string& ns, const std::string& name, Hundredths fraction,
                               std::int64_t whole, const MemoryReserve& reserve);

}  // namespace kubex::decide::packing
