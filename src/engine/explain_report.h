// How `kubex explain` (SPEC CLI-1) prints an Explanation: a table for people, or the stable document
// {"apiVersion": "cli.kubex.ai/v1alpha1", "kind": "Explanation", …} with -o json; and the one sentence that
// explains each constraint reason, actuation check and admission exit. Internal to src/engine.
#pragma once

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/explain_model.h"

namespace kubex::engine {

// The sentence for a constraint reason (OBS-3), an ACT-2/ACT-3 check, or an ADM-3 exit check name; a generic
// sentence for a name it does not know.
std::string reason_sentence(const std::string& name);
ExplainReason explain_reason(const std::string& name);

// The near miss in one sentence: "The closest policy is ClusterProactivePolicy/x: its labelSelector needs a=b; the
// Deployment has no label a (and 1 more policy that misses by as little)."
std::string near_miss_text(const ExplainNearMiss& m);

// Where a pause comes from, as one clause: `paused by rightsizing.kubex.ai/pause-until="infinite" on Namespace/ml
// (no end)`, plus why it has no effect when the strategy does not check pause-until.
std::string pause_text(const ExplainPause& p);

// The document:
// {"apiVersion", "kind": "Explanation", "target": {"kind", "namespace", "name"}, "managed",
//  "notManaged": {"reason", "message", "nearMiss": {"policy", "misses": [{"check", "message"}], "labels",
//                 "invalidReason", "more"} (only for not-managed with some policy)} (only when not managed), "ownerChain": [...], "workload", "onHold",
//  "policies": [{"policy", "valid", "invalidReason", "strategy", "wins": [...], "note"}], "strategy", "mode",
//  "kaiMode", "kaiLimit", "kaiWarning" (KAI-2a, when it applies),
//  "harmGuard": [{"container", "floor", "until", "source": "harm-guard", "message"}] (ACT-10, only with a floor),
//  "pause": {"source", "object", "annotation", "value", "meaning", "checked", "message"} (only when paused),
//  "admission": {"result", "stoppedBy": [{"reason", "message"}]},
//  "resources": [{"container", "resource" ("requests.gpu"), "current", "desired", "source", "annotation",
//                 "applied", "constraints": [{"reason", "message"}]}],
//  "podConstraints": [{"reason", "message"}], "notes": [...],
//  "reactive": {"policy", "state": {"present", "error", "baseline", "driver", "updatedAt"}, "lastEvaluationTime",
//               "prometheus": {"url", "queried", "error"}, "samples": [{"pod", "container", "allocation",
//               "computeUpsize", "computeScaleBack", "memoryUpsize", "memoryScaleBack"}],
//               "rules": [{"rule", "signal", "direction", "total", "pod", "won"}], "stored", "result",
//               "wouldWrite"},
//  "actuation": {"note", "desired", "result", "budget", "inFlight", "webhookHealthy",
//                "pods": [{"pod", "inSync", "live", "desired", "evictNow", "blockedBy": [{"reason", "message"}],
//                          "pause" (as above, only when pause-active blocks the pod),
//                          "harm" (ACT-10, only for a pod kubex's downsize harmed)}],
//                "lastEviction", "minReadyDuration",
//                "settling": [{"pod", "ready", "readySince", "restartedAt", "stableAt", "message"}] (ACT-3b),
//                "notes": [...]},
//  "rollback": {"present", "error", "phase", "strategy", "lastApplied", "original", "history": [...]}}
// Sections that do not apply are left out.
nlohmann::json explanation_json(const Explanation& e);
void print_explanation(const Explanation& e, std::ostream& out);

// ACT-3b/ACT-10: "" when the pod is not crash-looping, else what shows it ("container app: CrashLoopBackOff, 4
// restarts"): a container waiting in CrashLoopBackOff, or restarts while not Ready.
std::string crash_loop_evidence(const nlohmann::json& pod);
// min-ready-duration-not-met for a crash-looping pod: says what kubex does about it (issue 34 item 8). ACT-10: a pod
// kubex `resized_down` is replaced once the harm is found; any other crash-looping pod is not evicted.
ExplainReason crash_looping_reason(const std::string& evidence, bool resized_down);

// ACT-10: "app gets at least 1 GPU until <RFC3339>: a resize down harmed the workload, so kubex keeps the allocation
// it had before (ACT-10)".
std::string harm_floor_text(const ExplainHarmFloor& f);

}  // namespace kubex::engine
