// The simulated cluster's schedulers: default-scheduler (kube-scheduler's filters, LeastAllocated scoring,
// whole nvidia.com/gpu) and the KAI-Scheduler emulation (sched_kai.h), sharing one occupancy ledger so that
// neither overcommits a node. KAI's pod admission (sched_admission.h) is registered with the KAI scheduler.
#include "sim/cluster/context.h"
#include "sim/cluster/sched_admission.h"
#include "sim/cluster/sched_kai.h"
#include "sim/cluster/sched_loop.h"

namespace kubex::sim::cluster {

using namespace sched;

namespace {

class DefaultScheduler : public SchedulerLoop {
 public:
  DefaultScheduler(ClusterContext& ctx, std::shared_ptr<Ledger> ledger)
      : SchedulerLoop(ctx, std::move(ledger), "default-scheduler") {
    resync_ledger_ = true;
  }
  ~DefaultScheduler() override { controller_.stop(); }

 protected:
  bool responsible(const SimPod& p) const override {
    return p.scheduler_name.empty() || p.scheduler_name == "default-scheduler";
  }

  Delay schedule(const SimPod& p) override {
    Decision d = ledger_->schedule(p.key(), placement_pod(p), Strategy::kDefault);
    if (!d.scheduled) return unschedulable(p, "FailedScheduling", d.message);
    if (!bind(p, d.node)) return std::chrono::milliseconds(1000);
    scheduled(p, "Successfully assigned " + p.key() + " to " + d.node);
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Subsystem> make_default_scheduler(ClusterContext& ctx) {
  return std::make_unique<DefaultScheduler>(ctx, shared_ledger(ctx));
}

std::unique_ptr<Subsystem> make_kai_scheduler(ClusterContext& ctx) {
  return std::make_unique<KaiScheduler>(ctx, shared_ledger(ctx));
}

}  // namespace kubex::sim::cluster
