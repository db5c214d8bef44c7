// ACT-10 in the actuation reconcile (controllers/actuation.h): before decide::actuation::decide(), the pods a
// downsize harmed are found (decide/actuation/harm_guard.h), the workload's harm-guard floors raised in its memory
// (kept on the owner's actuation-state with the rest of it), and a new harm announced: ResizeHarmedWorkload on the
// owner, a warn line, kubex_resize_harm_total. The decision learns which pods are harmed and whether a floor is not
// on the cached owner yet (then it evicts nothing: the desired value it sees does not hold the floor).
#pragma once

#include "controllers/workload_evictions.h"

namespace kubex::controllers {

void guard_against_harm(const PlanRunner& run, decide::actuation::Input& in, EvictionMemory& memory,
                        const WorkloadContext& w);

}  // namespace kubex::controllers
