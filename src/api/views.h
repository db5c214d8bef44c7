// Compact projections of core Kubernetes objects (DESIGN §2.3): only the fields kubex's decisions read,
// with interned strings, so the engine can cache ~33,000 pods in a small footprint.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/intern.h"
#include "common/cached_object.h"

namespace kubex::api {

using common::IStr;
using Labels = std::vector<std::pair<IStr, IStr>>;  // sorted by key

const IStr* find(const Labels& labels, std::string_view key);
Labels labels_from(const nlohmann::json& object_or_null);
bool labels_match(const Labels& labels, const nlohmann::json& selector);  // metav1.LabelSelector

struct OwnerRef {
  IStr api_version, kind, name;
  std::string uid;
  bool controller = false;
};

// The ownerReferences of an object's metadata (entries that are not objects are skipped): the one parse of
// them, for the cached views and for pods under admission alike.
std::vector<OwnerRef> owners_of(const nlohmann::json& meta);

// A container's resources, in the units decisions use.
struct ContainerView {
  IStr name;
  IStr image;
  bool init = false;          // an init container
  bool restartable = false;   // restartPolicy: Always (sidecar) init container
  std::optional<std::int64_t> gpu_request, gpu_limit;  // whole nvidia.com/gpu
  std::optional<std::int64_t> cpu_request_milli, cpu_limit_milli, memory_request, memory_limit;
  // status.(init)containerStatuses[].lastState.terminated.finishedAt of this container (REA-11); epoch = none.
  common::TimePoint last_terminated{};
  int restarts = 0;       // restartCount
  bool last_oom = false;  // lastState.terminated is OOMKilled or says "out of memory" (a CUDA OOM exit; ACT-10)
  bool is_target() const { return !init || restartable; }  // SPEC §0 target containers
};

struct PodView : common::CachedObject {
  std::string uid;
  Labels labels;
  Labels annotations;  // only the keys kubex reads (see kPodAnnotationKeys in views.cpp)
  std::vector<OwnerRef> owners;
  IStr node_name, scheduler_name, phase;
  std::vector<ContainerView> containers;  // init containers first (in pod order), then regular containers
  common::TimePoint created{}, started{}, deletion{};
  bool deleting = false;
  bool ready = false;
  common::TimePoint ready_since{};  // lastTransitionTime of Ready=True
  int restarts = 0;
  // The pod's scheduling constraints as consolidation reads them (CON-6a), compact JSON interned so that the
  // replicas of one template share it; "" when the pod has none. Keys, each only when present: nodeSelector
  // (object), nodeAffinity (the required nodeSelectorTerms array), tolerations (array), podAffinity (true:
  // required inter-pod affinity or anti-affinity), topologySpread (true: a DoNotSchedule constraint).
  IStr scheduling;

  const OwnerRef* controller() const;
  const IStr* annotation(std::string_view key) const { return find(annotations, key); }
  const IStr* label(std::string_view key) const { return find(labels, key); }
};

struct NodeView : common::CachedObject {
  std::string uid;
  Labels labels;
  std::int64_t gpu_allocatable = 0;
  std::int64_t cpu_allocatable_milli = 0, memory_allocatable = 0;  // status.allocatable cpu, memory (bytes)
  bool unschedulable = false, ready = false;
  std::vector<std::pair<IStr, IStr>> taints;  // key=value:effect as (key, value + ":" + effect)
};

// Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs, Rollouts, Models, ...
struct WorkloadView : common::CachedObject {
  IStr kind;
  std::string uid;
  std::int64_t generation = 0;
  Labels labels;
  Labels annotations;  // only keys of the rightsizing.kubex.ai family and pause-until
  std::vector<OwnerRef> owners;
  std::optional<std::int64_t> replicas;
  std::string max_unavailable;  // rolling-update maxUnavailable as written ("25%", "1"), "" if none
  std::string selector_json;    // spec.selector, compact JSON
  std::string template_json;    // the pod template (spec.template or the CronJob's jobTemplate's), compact JSON
  IStr model_engine;            // kubeai.org Model spec.engine ("VLLM", ...), VLM-1

  const OwnerRef* controller() const;
  const IStr* annotation(std::string_view key) const { return find(annotations, key); }
};

// policy/v1 PodDisruptionBudget: what CON-4 reads (which pods it covers, whether it allows a disruption now).
struct PdbView : common::CachedObject {
  std::string selector_json;  // spec.selector, compact JSON ("" = none: the PDB selects nothing)
  std::int64_t disruptions_allowed = 0;  // status.disruptionsAllowed
};

std::shared_ptr<const PodView> project_pod(const nlohmann::json& pod);
std::shared_ptr<const NodeView> project_node(const nlohmann::json& node);
std::shared_ptr<const WorkloadView> project_workload(const nlohmann::json& obj);
std::shared_ptr<const PdbView> project_pdb(const nlohmann::json& pdb);
// The compact scheduling-constraint text of PodView::scheduling from a pod spec ("" when none).
std::string scheduling_constraints(const nlohmann::json& spec);

// Approximate heap bytes of a projection (for memory reports).
std::size_t approx_bytes(const PodView& p);

}  // namespace kubex::api
