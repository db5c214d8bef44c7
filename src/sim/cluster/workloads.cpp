// The workload controllers of the simulated cluster, as kube-controller-manager (and KubeAI) would run them.
#include <algorithm>
#include <memory>
#include <vector>

#include "sim/cluster/subsystem.h"
#include "sim/cluster/workload_common.h"
#include "sim/cluster/workload_cronjob.h"
#include "sim/cluster/workload_daemonset.h"
#include "sim/cluster/workload_deployment.h"
#include "sim/cluster/workload_job.h"
#include "sim/cluster/workload_model.h"
#include "sim/cluster/workload_replicaset.h"
#include "sim/cluster/workload_statefulset.h"

namespace kubex::sim::cluster {
namespace {

// Owns the shared state and the controllers, so the state outlives every controller using it.
class WorkloadControllers final : public Subsystem {
 public:
  explicit WorkloadControllers(ClusterContext& ctx) : env_(std::make_unique<WorkloadEnv>(ctx)) {
    parts_.push_back(make_deployment_controller(*env_));
    parts_.push_back(make_replicaset_controller(*env_));
    parts_.push_back(make_statefulset_controller(*env_));
    parts_.push_back(make_daemonset_controller(*env_));
    parts_.push_back(make_job_controller(*env_));
    parts_.push_back(make_cronjob_controller(*env_));
    parts_.push_back(make_model_controller(*env_));
  }
  ~WorkloadControllers() override { stop(); }
  void start() override {
    for (auto& p : parts_) p->start();
  }
  void stop() override {
    for (auto& p : parts_) p->stop();
  }
  bool idle() const override {
    return std::all_of(parts_.begin(), parts_.end(), [](const auto& p) { return p->idle(); });
  }

 private:
  std::unique_ptr<WorkloadEnv> env_;
  std::vector<std::unique_ptr<Subsystem>> parts_;
};

}  // namespace

std::vector<std::unique_ptr<Subsystem>> make_workload_controllers(ClusterContext& ctx) {
  std::vector<std::unique_ptr<Subsystem>> out;
  out.push_back(std::make_unique<WorkloadControllers>(ctx));
  return out;
}

}  // namespace kubex::sim::cluster
