// OBS-4: the fields of the one `rightsizing summary` log line of an admission decision, as data, and the
// `summary` text: `Applied rightsizing requests [app:[cpu=200m gpu=0.7]] limits [app:[cpu=600m]]`, then
// `; kai [scheduler=kai-scheduler queue=q]` and `; vllm [server:0.45]` for the KAI and vLLM edits, or
// `No rightsizing changes` (followed by those parts when only KAI or vLLM edits happened). The caller adds
// ts/level/logger/msg and writes the line.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "decide/admission/change.h"

namespace kubex::decide {

enum class AdmissionResult { kMutated, kUnchanged, kSkipped };
// "MUTATED", "UNCHANGED", "SKIPPED".
const char* result_name(AdmissionResult r);

struct Summary {
  std::string phase = "admission";              // admission | actuation (ACT-1 evaluations) | …
  std::string pass;                             // early | late
  std::string ns, pod, owner;                   // owner as "Kind/name"
  std::map<std::string, std::string> policies;  // SEL-6 slot ("requests.gpu") -> "Kind/name"[,"Kind/name"…]
  std::string strategy;                         // "<Kind>/<name>" of the governing strategy
  std::string mode = "none";                    // kai | vanilla | none
  std::string_view kai_mode;  // KAI-1 sharing mode, written as `kaiMode` in KAI mode (a static constant)
  AdmissionResult result = AdmissionResult::kSkipped;
  // The recommenders' and actuation's rightsizingResult (RECOMMENDED, NO_DATA, EVICTED, …): written instead
  // of `result` when set.
  std::string result_text;
  std::vector<Change> changes;  // gpu, cpu and memory
  std::vector<Edit> edits;      // scheduler, queue (ADM-13), then vLLM (VLM-4); listed after `changes`
  std::vector<std::string> applied_filters;  // the constraint reasons recorded, sorted
  std::vector<std::string> failed_checks;    // why the decision stopped early (ADM-3 exits, pause, hold)
  bool dry_run = false;
  std::string text;
  // Proactive lines: container -> where its value came from (`history` | `configmap`), written as `source`.
  std::map<std::string, std::string> sources;
};

// Requests list every change of usage "request" (GPU included, with its clamped desired value), limits the
// "limit" ones; containers in the order of `changes`, resources sorted by name within a container; an
// empty side reads "none". No change gives "No rightsizing changes". Then, when there are edits,
// `; kai [scheduler=<s> queue=<q>]` (only the ones edited) and `; vllm [<c>:<v> …]`.
std::string summary_text(const std::vector<Change>& changes, const std::vector<Edit>& edits = {});

// A recommender's GPU changes (the reactive and proactive summary lines): for each container of `after`
// (container -> GPU-2 value) whose value differs from `before` (absent: "unspecified"), a requests.gpu Change
// from `source`.
std::vector<Change> recommendation_changes(const std::map<std::string, std::string>& before,
                                           const std::map<std::string, std::string>& after, const std::string& source);

// The OBS-4 fields of `s` written as JSON object members (no braces), keys sorted, with `ignoredSources`
// (VAL-7) among them when not empty; `changes[]` holds `changes` then `edits` (an edit's absent `from` is
// null): the per-review log line's fields (common::Logger::log_members), written
// without building a JSON value. The fields: appliedFilters[], changes[], dryRun, failedChecks[], mode,
// namespace, owner, pass, phase, pod, policies, rightsizingResult, strategy, summary, and `kaiMode` when set.
std::string summary_members(const Summary& s, const std::vector<std::string>& ignored_sources = {});
// The same fields as a JSON object (parsed from summary_members: one definition of the fields).
nlohmann::json summary_fields(const Summary& s);

// OBS-4: what two successive summaries of one workload and phase are compared on, as a string: the
// rightsizingResult, the changes and the edits, and for actuation and rollback also the pod named and the failed
// checks (evicting the next pod, or a new reason to wait, is news; which pod a recommender read is not). When
// it equals the previous summary's, the line is written at debug, so an idle cluster stays quiet.
std::string summary_identity(const Summary& s);

}  // namespace kubex::decide
