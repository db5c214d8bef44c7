// ADM-16: the pod annotation `automation-webhook.kubex.ai/pod-rightsizing-info`, written only when
// something changed: {"mode":"kai|vanilla","strategy":"<Kind>/<name>",
// "containers":{"app":{"gpu":{"from":"0.25","to":"0.7","source":"StaticPolicy/s"}}}}.
// Requests are keyed by resource ("gpu", "cpu", "memory"), limits by "limits.cpu" / "limits.memory".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "decide/change.h"

namespace kubex::decide {

// "gpu", "cpu", "memory", "limits.cpu", "limits.memory".
std::string info_key(Resource r, Usage u);

// The annotation value after `changes`. `existing` is the pod's current value ("" when absent): its
// entries are kept, and an entry changed again keeps its `from` (the late pass keeps the early pass's
// `from`). Containers and keys are sorted; each entry is written as from, to, source.
std::string rightsizing_info_json(std::string_view mode, const std::string& strategy,
                                  const std::vector<Change>& changes, std::string_view existing);

}  // namespace kubex::decide
