// The demo's second act as the user sees it (pure functions over API objects and the engine's /metrics text, so
// they are table-tested): why a pod is being replaced (the engine's eviction events) and the evictions the engine
// counted (kubex_evictions_total, OBS-5) with every PDB refusal explained.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kubex::sim::demo {

// pod name ("ns/name") -> why it is being replaced, from an Event LIST: the newest PolicyEvaluationEvictResize,
// PolicyEvaluationEvictRollback, EvictionBlocked or ReplacementNotMutated event of each pod, as
// "resize: <message>" / "rollback: …" / "blocked by a PDB: …".
std::map<std::string, std::string> eviction_notes(const nlohmann::json& event_list);

struct EvictionCounts {
  // reason (resize, rollback, consolidation) -> result (success, pdb_blocked, error) -> count
  std::map<std::string, std::map<std::string, double>> by_reason;
  double total(const std::string& result) const;
};
// kubex_evictions_total from the engine's Prometheus text.
EvictionCounts eviction_counts(const std::string& metrics_text);

// The evictions the engine counted, by reason, with each PDB refusal's event message. (What was resized, and from
// what, is `kubex report`'s "Resizes applied by eviction", which the demo prints before this.)
std::string render_evictions(const EvictionCounts& evictions, const std::vector<std::string>& pdb_refusals);

// The EvictionBlocked messages of an Event LIST, "ns/pod: message".
std::vector<std::string> pdb_refusals(const nlohmann::json& event_list);

}  // namespace kubex::sim::demo
