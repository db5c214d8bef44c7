// kubex-sim's emulation of KAI-Scheduler (v0.18 by default, v0.17 with --kai-version; SIM-4) for pods with
// `schedulerName: kai-scheduler`:
//  - a pod runs in the queue KAI's podgrouper gives it: the `kai.scheduler/queue` label of the pod's top owner
//    (controller ownerReferences followed up: Pod -> ReplicaSet -> Deployment, Pod -> Job, ...), else the pod's own
//    (ADM-13), else its `project` label's queue, else `default-queue` (SIM-9). The queue must be an existing leaf
//    scheduling.run.ai/v2 Queue (a leaf is a queue no other queue names as spec.parentQueue); otherwise the pod
//    stays Pending (Warning Event Unschedulable, PodScheduled=False; a missing queue in KAI's words
//    `QueueDoesNotExist: Queue '<q>' does not exist.`) and is retried when queues change;
//  - `gpu-fraction` pods are placed per physical GPU (binpack, see sched_placement.h). For a new GPU group the
//    scheduler creates a reservation pod like KAI's binder: namespace kai-resource-reservation, name
//    gpu-reservation-<node>-<5 random>, already bound, label runai-gpu-group=<uuid>, requesting
//    nvidia.com/gpu: 1; then it labels the fraction pod with the group and binds it (labels first, binding
//    second). Reservation pods of groups that lost their last member are deleted (gracePeriodSeconds 0);
//  - whole-GPU pods take whole free GPUs (fewest free GPUs first); other pods are placed like default-scheduler;
//  - the sharing mode and version rules of kai_modes.h: under Disabled a gpu-fraction pod stays Pending; under
//    0.18 an invalid gpu-fraction.limit keeps it Pending (0.17 ignores the annotation); under 0.18 fractions of
//    different compute modes never share a GPU. The limit is never packed: groups sum requests only;
//  - `gpu-memory` and `gpu-fraction-num-devices` requests are not supported by the simulator: the pod stays
//    Pending with an Event saying so.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/log.h"

#include "sim/cluster/sched_loop.h"

namespace kubex::sim::cluster::sched {

// Why a pod cannot use queue `name` ("" = it can). `queues` maps every Queue name to its spec.parentQueue.
std::string queue_problem(const std::map<std::string, std::string>& queues, const std::string& name);

// The object an ownerReference names, in the namespace of the pod: fills `out` and returns true when it exists.
using OwnerLookup = std::function<bool(const std::string& api_version, const std::string& kind,
                                       const std::string& ns, const std::string& name, nlohmann::json& out)>;

// The queue KAI's podgrouper puts a pod in when it names none (Helm's install creates it as a leaf).
inline constexpr const char* kKaiDefaultQueue = "default-queue";

// The queue KAI's podgrouper assigns `pod` to: the kai.scheduler/queue label of its top owner when that label is
// present, else the pod's own label, else the `project` label of the top owner, else the pod's (with
// "-<kai.scheduler/node-pool label>" appended when the pod has one), else kKaiDefaultQueue. The top owner is
// reached by following controller ownerReferences (an owner that cannot be read, or whose uid differs from the
// reference's, ends the walk); a pod without an owner is its own top owner.
std::string kai_pod_queue(const nlohmann::json& pod, const OwnerLookup& lookup);

class KaiScheduler : public SchedulerLoop {
 public:
  KaiScheduler(ClusterContext& ctx, std::shared_ptr<Ledger> ledger);
  ~KaiScheduler() override;
  void start() override;

 protected:
  bool responsible(const SimPod& p) const override;
  Delay schedule(const SimPod& p) override;
  Delay chore(const std::string& key) override;

 private:
  // Creates the GPU group's reservation pod in kai-resource-reservation; the failure's message when the API server
  // refused it (the namespace missing, RBAC), nullopt on success.
  std::optional<std::string> create_reservation(const SimPod& p, const std::string& node, const std::string& group,
                                                const std::string& suffix);
  void collect_empty_groups();
  // The pod's queue (kai_pod_queue over the API server's objects).
  std::string queue_of(const SimPod& p);

  common::Logger log_{"sim.kai-scheduler"};
  std::set<std::string> failed_deletes_;  // reservation pods whose deletion must be retried
  mutable std::mutex queues_mu_;
  std::map<std::string, std::string> queues_;  // name -> parentQueue
};

}  // namespace kubex::sim::cluster::sched
