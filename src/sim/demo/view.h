// What the demo shows (pure functions over pod and workload JSON, so they are table-tested): the live view of
// GPU pods (where each runs, its GPU fraction or whole GPUs, the device it shares, queue and scheduler) and
// the final report (GPUs requested before vs after, GPUs actually occupied, pods per GPU).
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kubex::sim::demo {

// One pod of the live view.
struct PodRow {
  std::string ns, name, owner;  // owner: "Deployment/web" style when known from the pod's labels, else ""
  std::string status;           // Pending, Running, Ready, Terminating, CrashLoopBackOff, ...
  std::string node;             // "" while unscheduled
  double gpus = 0;              // fraction (KAI gpu-fraction) or whole nvidia.com/gpu
  bool fraction = false;
  std::string device;  // "<node>/gpu<i>" the kubelet gave it, "" when none
  std::string queue, scheduler;
  std::string vllm_utilization;  // the --gpu-memory-utilization it runs with, "" when none
  std::string source;            // the policy that set its GPU (pod-rightsizing-info), "" when kubex did not
  std::string note;              // why it is being replaced (resizes.h eviction_notes), shown under its row
};

// Rows for the pods of a LIST (reservation pods of KAI and pods without any GPU are left out). Sorted by
// namespace, then name.
std::vector<PodRow> pod_rows(const nlohmann::json& pod_list, const std::string& reservation_namespace);

// Sets the note of each Terminating row from `notes` ("ns/name" -> text).
void attach_notes(std::vector<PodRow>& rows, const std::map<std::string, std::string>& notes);

// A fixed-width table of the rows; a row's note goes on the line under it ("    ^ replacing: …").
std::string render_rows(const std::vector<PodRow>& rows);

// One line: "pods 7/8 running · GPUs requested 1.85 · 3 of 6 GPUs occupied".
std::string render_summary(const std::vector<PodRow>& rows, int gpus_in_cluster);

// One line per GPU node of a Node LIST: its GPUs held by the rows' running pods, and a consolidation taint
// (rightsizing.kubex.ai/consolidating=<policy>) when it has one: "t4-node-0  1.05 of 2 GPUs  [draining for p]".
std::string render_nodes(const nlohmann::json& node_list, const std::vector<PodRow>& rows);
// The nodes that hold at least one running GPU pod.
int gpu_nodes_in_use(const std::vector<PodRow>& rows);

// A GPU workload as its manifest asks: Deployment or StatefulSet (the pod template's whole nvidia.com/gpu,
// limits else requests, or its gpu-fraction annotation; spec.replicas) or KubeAI Model (spec.replicas or
// minReplicas, `gpus_per_model_replica` each). Nothing for other kinds or workloads without GPUs.
struct WrittenWorkload {
  std::string ns, owner;  // owner as PodRow::owner: "Deployment/train", "Model/llama"
  double gpus_per_pod = 0;
  bool fraction = false;  // already a KAI gpu-fraction as written
  int replicas = 1;
  double gpus() const { return gpus_per_pod * replicas; }
};
std::optional<WrittenWorkload> written_workload(const nlohmann::json& manifest,
                                                double gpus_per_model_replica = 1);

// "0.5", "1", "2.25": shortest decimal with at most 2 places.
std::string format_gpus(double v);

}  // namespace kubex::sim::demo
