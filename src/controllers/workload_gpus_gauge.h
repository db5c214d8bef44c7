// kubex_workload_gpus{namespace, owner_kind, owner, state="as_written"|"held"} (SPEC RPT-5, OBS-5): the GPUs of a
// managed workload's pods as its template writes them and as they hold them now, set by the actuation controller
// at every reconcile of the workload and dropped when the workload is gone or no longer managed, so dashboards
// need no `kubex report`. Only the leader runs that controller, so only the leader exports the series. A managed
// workload that neither asks for nor holds a GPU has none: two series per managed GPU workload, no more.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "decide/report/report.h"

namespace prometheus {
class Gauge;
template <typename T>
class Family;
}  // namespace prometheus
namespace kubex::kube {
class Metrics;
}

namespace kubex::controllers {

class WorkloadGpusGauge {
 public:
  explicit WorkloadGpusGauge(kube::Metrics* metrics);  // null: does nothing
  // `key` is the workload's work-queue key (observe::workload_key).
  void set(const std::string& key, const std::string& ns, const std::string& kind, const std::string& name,
           const decide::report::WorkloadGpus& gpus);
  void drop(const std::string& key);

 private:
  struct Series {
    prometheus::Gauge* as_written = nullptr;
    prometheus::Gauge* held = nullptr;
  };
  prometheus::Family<prometheus::Gauge>* family_ = nullptr;
  std::mutex mu_;
  std::map<std::string, Series> series_;
};

}  // namespace kubex::controllers
