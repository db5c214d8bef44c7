// The `consolidation` controller (SPEC §9 CON-1…CON-11, OBS-1, OBS-2, OBS-5): frees under-used GPU nodes of one
// pool per GpuConsolidationPolicy. Per valid policy, every spec.requeueAfter, on a single worker:
// observe::GpuInventory gives the pool (CON-1, CON-2), decide::packing plans it (CON-3…CON-6a, CON-10, CON-11),
// and act/ carries out the first feasible drain (CON-7): the node is tainted
// `rightsizing.kubex.ai/consolidating=<policy>:NoSchedule` with a resourceVersion-guarded update (act::Tainter),
// drainingNode/drainStartTime are set and its GPU pods evicted through act::Evictor (reason consolidation; a
// 429 is retried on the next reconcile). End of drain (no counted GPU pod left, CON-8): the taint is removed,
// lastDrainedNode/lastDrainTime set, `Drained`, event DrainCompleted, kubex_consolidation_nodes_drained_total.
// GPU pods still there after the drain timeout (10 minutes): taint removed, `DrainBlocked` and a Warning event.
//
// Serialisation (CON-9): a policy drains at most one node and plans nothing while it drains; only one drain
// runs at a time across all policies, and a node tainted by any policy is never chosen (two overlapping policies
// never drain the same node). The finalizer `rightsizing.kubex.ai/consolidation-cleanup` removes a deleted
// policy's taint; a periodic sweep removes consolidation taints whose policy no longer exists. --dry-run: no
// taint, no eviction, `WouldDrain` and event WouldDrain (CON-11). Invalid policies are left to the validity
// controller (Available=False/InvalidSpec|InvalidContract).
//
// Drain state lives in memory while the engine runs and is recovered from status.drainingNode/drainStartTime
// after a restart or a change of leader.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/kubex_views.h"
#include "controllers/log_news.h"
#include "common/clock.h"
#include "common/log.h"
#include "kube/runtime/controller.h"
#include "kube/runtime/runnable.h"
#include "decide/packing/drain.h"
#include "observe/gpu_inventory.h"

namespace prometheus {
class Counter;
class Gauge;
template <typename T>
class Family;
}
namespace kubex::kube {
class EventRecorder;
class Metrics;
}  // namespace kubex::kube
namespace kubex::act {
class Evictor;
class FinalizerWriter;
class StatusWriter;
class Tainter;
struct StatusChange;
}  // namespace kubex::act
namespace kubex::observe {
class GlobalConfigView;
}

namespace kubex::controllers {

// The GpuConsolidationPolicies as the engine's cache holds them.
class ConsolidationPolicies {
 public:
  virtual ~ConsolidationPolicies() = default;
  virtual std::vector<std::shared_ptr<const api::ConsolidationObject>> list() const = 0;
};

struct ConsolidationDeps {
  std::shared_ptr<const ConsolidationPolicies> policies;
  const observe::GlobalConfigView* global = nullptr;  // spec.kai.reservationNamespace (CON-2); null = default
  std::unique_ptr<observe::GpuInventory> inventory;
  std::shared_ptr<act::Tainter> tainter;
  std::shared_ptr<act::Evictor> evictor;
  std::shared_ptr<act::StatusWriter> status;
  std::shared_ptr<act::FinalizerWriter> finalizers;
  kube::EventRecorder* events = nullptr;  // may be null
};

struct ConsolidationOptions {
  bool dry_run = false;                                  // --dry-run (CON-11)
  common::Duration drain_timeout = std::chrono::minutes(10);  // CON-8; hidden --consolidation-drain-timeout
  common::Duration sweep_interval = std::chrono::minutes(1);  // orphaned-taint sweep (CON-9)
  // While a drain runs, the policy is re-checked at least this often (so that its end is seen promptly).
  common::Duration drain_poll = std::chrono::seconds(5);
  const common::Clock* clock = nullptr;  // default: the real clock
  kube::Metrics* metrics = nullptr;      // may be null
};

class ConsolidationController final : public kube::Runnable {
 public:
  static constexpr const char* kName = "consolidation";  // OBS-5 controller label
  static constexpr const char* kSweep = "~sweep";         // the orphaned-taint sweep's key

  ConsolidationController(ConsolidationDeps deps, ConsolidationOptions options = {});
  ~ConsolidationController() override;

  const std::string& name() const override { return controller_.name(); }
  void start() override;
  void stop() override;

  // Event hooks: a policy was added, changed or deleted (key: its name).
  void policy_changed(const std::string& name) { controller_.enqueue(name); }
  void policy_deleted(const std::string& name) {
    controller_.enqueue(name);
    controller_.enqueue(kSweep);
  }

  // One reconcile of a policy name or kSweep. Never throws.
  kube::ReconcileOutcome reconcile(const std::string& key);

  // The node a policy is draining now ("" when none), for tests.
  std::string draining(const std::string& policy) const;

 private:
  struct Drain {
    std::string node;
    common::TimePoint start{};
    // The node names of the draining policy's pool, refreshed on each of its reconciles (empty until the first
    // after a restart). Another policy waits while its own pool shares a node with this one (CON-9).
    std::set<std::string> pool;
  };
  kube::ReconcileOutcome reconcile_policy(const std::string& name);
  // An event for the policy (and the node it names): a Warning or Normal, its reason and message.
  struct PolicyEvent {
    bool warning = false;
    std::string reason, message;
  };
  kube::ReconcileOutcome start_drain(const api::ConsolidationObject& obj, const api::ConsolidationPolicy& policy,
                                     const decide::packing::DrainInput& in, const decide::packing::DrainDecision& step,
                                     act::StatusChange& change, const std::set<std::string>& pool_names,
                                     common::Duration requeue);
  struct EvictionRun {
    int blocked = 0;      // refused by a PodDisruptionBudget (429), retried at the next reconcile
    std::string aborted;  // CON-7a: why the drain stopped before an eviction ("" = it did not)
  };
  EvictionRun evict_drain_pods(const std::string& policy, const std::string& node, const api::LabelSelector& selector,
                               const decide::packing::Options& options, const std::vector<decide::packing::PoolPod>& pods);
  void forget_drain(const std::string& policy);
  decide::packing::MemoryReserve memory_reserve() const;
  void emit(const api::ConsolidationObject& obj, const std::vector<PolicyEvent>& events, const std::string& node);
  void set_candidates_gauge(const std::string& policy, const decide::packing::Plan& plan);
  kube::ReconcileOutcome sweep();
  kube::ReconcileOutcome cleanup_deleted(const api::ConsolidationObject& obj);
  // Removes every taint of `policy` (the drained node first); true when none is left.
  bool remove_taints(const std::string& policy, const std::string& node);
  std::shared_ptr<const api::ConsolidationObject> find(const std::string& name) const;
  std::string reservation_namespace() const;

  ConsolidationDeps deps_;
  ConsolidationOptions options_;
  common::Logger log_{"controller.consolidation"};
  LogNews no_candidate_news_;  // OBS-4: a policy's unchanged "no consolidation candidate" at debug
  prometheus::Counter* drained_ = nullptr;
  prometheus::Family<prometheus::Gauge>* candidates_ = nullptr;  // CON-12
  // CON-12: the series set per policy, by (result, blocker).
  std::map<std::string, std::map<std::pair<std::string, std::string>, prometheus::Gauge*>> gauge_series_;
  kube::Controller controller_;
  mutable std::mutex mu_;
  std::map<std::string, Drain> drains_;  // by policy name; at most one entry (CON-9)
  std::set<std::string> seen_;           // policies reconciled since start (drain state recovered once)
};

}  // namespace kubex::controllers
