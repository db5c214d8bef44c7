// StatefulSet controller of the simulated cluster (kube-controller-manager's statefulset controller): pods
// `<set>-<ordinal>` with stable names, OrderedReady (one at a time, in order, each Running and Ready before
// the next; scale down from the highest ordinal) or Parallel management, and RollingUpdate from the highest
// ordinal down to the partition (or OnDelete).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/cluster/workload_common.h"

namespace kubex::sim::cluster {

inline constexpr const char* kStatefulSetPodNameLabel = "statefulset.kubernetes.io/pod-name";
inline constexpr const char* kPodIndexLabel = "apps.kubernetes.io/pod-index";

// The ordinal of a pod named `<set>-<N>`, or -1 when the name does not belong to `set`.
std::int64_t statefulset_ordinal(const std::string& set, const std::string& pod_name);

// What the ordering decision needs to know about one pod.
struct StsPod {
  std::string name;
  std::int64_t ordinal = -1;
  bool terminating = false;    // deletionTimestamp set
  bool finished = false;       // phase Failed or Succeeded
  bool running_ready = false;  // Running with Ready True
  bool available = false;      // running_ready for at least minReadySeconds
  std::string revision;        // controller-revision-hash label
};

struct StsInput {
  std::int64_t replicas = 0;
  std::int64_t start_ordinal = 0;  // spec.ordinals.start
  bool ordered_ready = true;       // podManagementPolicy OrderedReady (monotonic) vs Parallel
  bool on_delete = false;          // updateStrategy OnDelete
  std::int64_t partition = 0;      // RollingUpdate partition
  std::string current_revision, update_revision;
  std::vector<StsPod> pods;  // the set's pods (any order)
};

struct StsAction {
  enum class Kind { kCreate, kDelete };
  Kind kind = Kind::kCreate;
  std::int64_t ordinal = 0;
  std::string name;
  std::string revision;  // for kCreate: the revision the pod should have
  std::string reason;    // for kDelete: "finished", "scale-down" or "update"
};

// One reconcile's actions, in order (StatefulSetControl's updateStatefulSet): recreate finished pods and
// create missing ones (OrderedReady: stop at the first that is missing, terminating or not yet available),
// then delete condemned pods from the highest ordinal (OrderedReady: one at a time, only while the others are
// healthy), then roll one out-of-date pod from the highest ordinal down to the partition, waiting for each to
// be available.
std::vector<StsAction> plan_statefulset(const StsInput& in);

std::unique_ptr<Subsystem> make_statefulset_controller(WorkloadEnv& env);

}  // namespace kubex::sim::cluster
