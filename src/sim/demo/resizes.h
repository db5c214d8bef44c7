// The demo's second act as the user sees it (pure functions over API objects and the engine's /metrics text, so
// they are table-tested): why a pod is being replaced (the engine's eviction events), the resize history kubex
// keeps on each workload (its `rightsizing.kubex.ai/rollback-state` annotation, SPEC RBK-1, and the driver of the
// reactive recommendation), and the evictions the engine counted (kubex_evictions_total, OBS-5) with every PDB
// refusal explained.
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

struct ResizeEntry {
  std::string ns, owner;  // "Deployment/chat-vllm"
  std::string at, container, from, to, source;
  std::string driver;  // compute | memory for a reactive source (the owner's reactive-state), else ""
};

// Every history entry of the workloads of a LIST (Deployments, Models, …), oldest first per workload.
std::vector<ResizeEntry> resize_history(const nlohmann::json& owner_list);

struct EvictionCounts {
  // reason (resize, rollback, consolidation) -> result (success, pdb_blocked, error) -> count
  std::map<std::string, std::map<std::string, double>> by_reason;
  double total(const std::string& result) const;
};
// kubex_evictions_total from the engine's Prometheus text.
EvictionCounts eviction_counts(const std::string& metrics_text);

// The report section: the resize history and the evictions, with each PDB refusal's event message.
std::string render_resizes(const std::vector<ResizeEntry>& history, const EvictionCounts& evictions,
                           const std::vector<std::string>& pdb_refusals);

// The EvictionBlocked messages of an Event LIST, "ns/pod: message".
std::vector<std::string> pdb_refusals(const nlohmann::json& event_list);

}  // namespace kubex::sim::demo
