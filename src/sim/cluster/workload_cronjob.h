// CronJob controller of the simulated cluster (kube-controller-manager's cronjob controller v2): creates
// Jobs `<cronjob>-<scheduled time in minutes since the epoch>` from jobTemplate at the schedule (at most one
// for any number of missed runs), honours concurrencyPolicy Allow/Forbid/Replace, suspend and
// startingDeadlineSeconds, prunes finished Jobs to the history limits, and reports lastScheduleTime,
// lastSuccessfulTime and the active Jobs. Time comes from the ClusterContext clock.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "sim/cluster/workload_common.h"

namespace kubex::sim::cluster {

// "<cronjob>-<minutes since the epoch of the scheduled time>"
std::string cronjob_job_name(const std::string& cronjob, common::TimePoint scheduled);

std::unique_ptr<Subsystem> make_cronjob_controller(WorkloadEnv& env);

}  // namespace kubex::sim::cluster
