// The history part of the `proactivepolicy` controller (SPEC §7 PRO-1, PRO-2, PRO-8): per valid proactive policy, a
// history evaluation every recommendationReloadInterval, at once when the policy's spec or the Prometheus settings
// change, and for workloads that first match it (batched with the others that arrive meanwhile). An evaluation reads
// the PRO-2 history of the workloads the policy wins (observe::read_history: batched queries, at most 2 in flight) on
// this class's own thread, never on a reconcile worker, keeps what came back per workload, writes the policy's status
// (PRO-8: Ready, recommendedWorkloads, lastEvaluationTime only when an evaluation completes) and hands the workloads
// to the owner-annotation reconciles. A failed evaluation keeps the previous results, sets
// Ready=False/PrometheusQueryFailed and retries after 1m, doubling up to the reload interval.
// Catch-up reads (issue 34 item 11): a workload whose history is still shorter than PRO-2's span is read again when
// its history first covers it (decide::history_covered_at), in one batched read with every other workload of the
// policy due by then (decide::next_catch_up), instead of waiting for the next regular reload.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/prometheus_connector.h"
#include "decide/proactive/history.h"
#include "decide/proactive/history_schedule.h"

namespace kubex::kube {
class Metrics;
}
namespace kubex::act {
class StatusWriter;
}
namespace kubex::observe {
class CatalogView;
class WorkloadViews;
class HistorySubjects;
}  // namespace kubex::observe
namespace prometheus {
class Counter;
}

namespace kubex::controllers {

// What the last evaluation of a policy read for one workload.
struct WorkloadHistory {
  std::map<std::string, decide::ContainerHistory> containers;  // by container (absent: no samples)
  std::map<std::string, decide::Allocation> allocations;       // PRO-4: the containers that hold a GPU then
  bool failed = false;  // its queries failed: the history could not be refreshed
};

struct HistoryEvaluationDeps {
  const observe::CatalogView* catalog = nullptr;
  std::shared_ptr<const observe::WorkloadViews> workloads;
  std::unique_ptr<observe::HistorySubjects> subjects;
  std::unique_ptr<PrometheusConnector> prometheus;  // null: no history (every evaluation fails with that reason)
  std::unique_ptr<act::StatusWriter> status;        // the policies' status
};

struct HistoryEvaluationOptions {
  std::string bearer_token_file, ca_file;  // --prometheus-bearer-token-file, --prometheus-ca-file
  const common::Clock* clock = nullptr;    // default: the real clock
  kube::Metrics* metrics = nullptr;        // may be null
  // Per-batch back-off of a failed query (observe::HistoryReadOptions); controller tests set none.
  std::vector<common::Duration> retry_after = {std::chrono::seconds(1), std::chrono::seconds(2)};
};

class HistoryEvaluations {
 public:
  // After an evaluation of `policy`: the workloads it covered (their owner annotations are reconciled next).
  using Evaluated = std::function<void(const std::string& policy, const std::vector<std::string>& workloads)>;
  // recommendedWorkloads of `policy` now (the controller counts the workloads that hold a value).
  using Recommended = std::function<std::int64_t(const std::string& policy)>;
  // Whether the policies have a ConfigMap source (the Ready message says "no GPU history" when they do not).
  using HasConfigMap = std::function<bool()>;

  struct Callbacks {
    Evaluated evaluated;
    Recommended recommended;
    HasConfigMap has_config_map;
  };
  HistoryEvaluations(HistoryEvaluationDeps deps, HistoryEvaluationOptions options, Callbacks callbacks);
  ~HistoryEvaluations();

  // A new term (engine start, new leader): every policy is evaluated again before its workloads are written.
  void start();
  void stop();

  // Policies, strategies or global-config changed: schedules are looked at again (a new generation or new Prometheus
  // settings evaluate at once).
  void wake();
  // PRO-1: `workload` first matches `policy` (it was not in the policy's last evaluation): it is evaluated soon.
  void first_match(const std::string& policy, const std::string& workload);
  // The ConfigMap set changed: recommendedWorkloads is counted again for every policy.
  void recount();

  enum class Seen { kNotYet, kAbsent, kRead };
  struct Lookup {
    Seen seen = Seen::kNotYet;  // kNotYet: the policy was never evaluated (wait); kAbsent: not in its evaluation
    WorkloadHistory history;
  };
  Lookup lookup(const std::string& policy, const std::string& workload) const;

  // One pass: runs every evaluation that is due at `clock.now()` and returns how many ran. The thread calls it;
  // tests call it without start().
  std::size_t run_due();

 private:
  struct Schedule {
    std::int64_t generation = -1;
    std::string settings;
    common::TimePoint next_due{};
    common::Duration backoff{0};
    bool evaluated = false;  // an evaluation finished (its results are in results_)
    std::map<std::string, common::TimePoint> covered_at;  // workload -> when its history first covers PRO-2's span
    std::optional<common::TimePoint> last_read;            // the last read, full or partial (catch-up minimum gap)
  };
  struct Work {
    std::string policy;
    bool full = false;
    std::set<std::string> workloads;  // partial: these workloads only
  };
  std::vector<Work> due_work(common::TimePoint now);
  static std::optional<decide::CatchUpRead> catch_up(const Schedule& s);
  void evaluate(const Work& work);
  void loop();

  HistoryEvaluationDeps deps_;
  HistoryEvaluationOptions options_;
  common::Logger log_{"controller.proactivepolicy"};
  Callbacks callbacks_;
  prometheus::Counter* queries_ok_ = nullptr;      // kubex_prometheus_queries_total{phase="proactive",result}
  prometheus::Counter* queries_failed_ = nullptr;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool recount_ = false;
  std::map<std::string, Schedule> schedules_;                               // by policy key
  std::map<std::string, std::set<std::string>> first_matches_;              // policy -> workloads
  std::map<std::string, std::map<std::string, WorkloadHistory>> results_;  // policy -> workload -> history
  std::thread thread_;
};

}  // namespace kubex::controllers
