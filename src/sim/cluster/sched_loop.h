// The loop both simulated schedulers share: a work queue of pending pods fed by the pod feed, binding
// through the `binding` subresource, and kube-scheduler's handling of unschedulable pods (condition
// PodScheduled=False/Unschedulable, a Warning Event, per-pod back-off of 1s doubling to 10s, and an early
// retry — debounced to at most one per second — whenever capacity may have been freed).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "sim/cluster/runtime.h"
#include "sim/cluster/sched_ledger.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {
class ClusterContext;
}

// The schedulers' types live in their own namespace (cluster::sched) so their names never meet the workload
// controllers' or the GPU model's.
namespace kubex::sim::cluster::sched {

// The ledger of `ctx`, created (with its feed handlers) by the first caller and shared by later ones.
std::shared_ptr<Ledger> shared_ledger(ClusterContext& ctx);

class SchedulerLoop : public Subsystem {
 public:
  using Delay = std::optional<std::chrono::milliseconds>;
  SchedulerLoop(ClusterContext& ctx, std::shared_ptr<Ledger> ledger, std::string component);
  ~SchedulerLoop() override;
  void start() override;
  void stop() override;

 protected:
  // Whether this scheduler schedules pods with this schedulerName.
  virtual bool responsible(const SimPod& p) const = 0;
  // One scheduling attempt for a pending pod; returns when to try again (nullopt: not before a change).
  virtual Delay schedule(const SimPod& p) = 0;
  // Keys starting with '~' other than "~flush"/"~resync" (periodic chores of a subclass).
  virtual Delay chore(const std::string& key);

  // The placement view of a pod (whole GPUs only; KAI adds the fraction).
  static PlacementPod placement_pod(const SimPod& p);
  // POST .../binding. On failure the assumption is dropped; returns whether the pod is now bound.
  bool bind(const SimPod& p, const std::string& node);
  // Marks a pod unschedulable (condition once per message, an Event per attempt); returns the back-off.
  // `condition_reason`: PodScheduled=False's reason (kube-scheduler's Unschedulable, or SchedulerError for a
  // failure that is not the pod's fit, e.g. an API error).
  Delay unschedulable(const SimPod& p, const std::string& event_reason, const std::string& message,
                      bool retry = true, const std::string& condition_reason = "Unschedulable");
  void scheduled(const SimPod& p, const std::string& message);
  // Retries every unschedulable pod soon (at most once a second).
  void request_flush();

  ClusterContext& ctx_;
  std::shared_ptr<Ledger> ledger_;
  Client client_;
  std::string component_;
  Controller controller_;
  bool resync_ledger_ = false;  // one scheduler resyncs the shared ledger against the store

 private:
  struct Pending {
    std::string uid, message;
    int attempts = 0;
    std::chrono::steady_clock::time_point retry_due{};  // a back-off retry is queued for then
  };
  Delay reconcile(const std::string& key);
  void flush();
  void resync();

  std::mutex mu_;
  std::unordered_map<std::string, Pending> pending_;  // unschedulable pods
  std::atomic<bool> flush_queued_{false};
};

}  // namespace kubex::sim::cluster::sched
