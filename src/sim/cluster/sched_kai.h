// kubex-sim's emulation of KAI-Scheduler v0.17 for pods with `schedulerName: kai-scheduler`:
//  - a pod must name an existing leaf scheduling.run.ai/v2 Queue in its `kai.scheduler/queue` label (a leaf is a
//    queue no other queue names as spec.parentQueue); otherwise it stays Pending (Warning Event Unschedulable,
//    PodScheduled=False) and is retried when queues change;
//  - `gpu-fraction` pods are placed per physical GPU (binpack, see sched_placement.h). For a new GPU group the
//    scheduler creates a reservation pod like KAI's binder: namespace kai-resource-reservation, name
//    gpu-reservation-<node>-<5 random>, already bound, label runai-gpu-group=<uuid>, requesting
//    nvidia.com/gpu: 1; then it labels the fraction pod with the group and binds it (labels first, binding
//    second). Reservation pods of groups that lost their last member are deleted (gracePeriodSeconds 0);
//  - whole-GPU pods take whole free GPUs (fewest free GPUs first); other pods are placed like default-scheduler;
//  - `gpu-memory` and `gpu-fraction-num-devices` requests are not supported by the simulator: the pod stays
//    Pending with an Event saying so.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "sim/cluster/sched_loop.h"

namespace kubex::sim::cluster::sched {

// Why a pod cannot use queue `name` ("" = it can). `queues` maps every Queue name to its spec.parentQueue.
std::string queue_problem(const std::map<std::string, std::string>& queues, const std::string& name);

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
  bool create_reservation(const SimPod& p, const std::string& node, const std::string& group,
                          const std::string& suffix);
  void collect_empty_groups();

  std::set<std::string> failed_deletes_;  // reservation pods whose deletion must be retried
  mutable std::mutex queues_mu_;
  std::map<std::string, std::string> queues_;  // name -> parentQueue
};

}  // namespace kubex::sim::cluster::sched
