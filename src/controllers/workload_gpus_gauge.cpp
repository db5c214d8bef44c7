#include "controllers/workload_gpus_gauge.h"

#include <prometheus/family.h>
#include <prometheus/gauge.h>

#include "kube/runtime/metrics.h"

namespace kubex::controllers {

WorkloadGpusGauge::WorkloadGpusGauge(kube::Metrics* metrics) {
  if (!metrics) return;
  family_ = &metrics->gauge_family(
      "kubex_workload_gpus",
      "GPUs of a managed workload's running pods as its template writes them (state=as_written) and as they hold "
      "them now (state=held) (RPT-5).");
}

void WorkloadGpusGauge::set(const std::string& key, const std::string& ns, const std::string& kind,
                            const std::string& name, const decide::report::WorkloadGpus& gpus) {
  if (!family_) return;
  if (gpus.as_written == 0 && gpus.held == 0) {  // a managed workload without GPUs: no series (cardinality)
    drop(key);
    return;
  }
  std::lock_guard lk(mu_);
  Series& s = series_[key];
  if (!s.as_written) {
    s.as_written = &family_->Add({{"namespace", ns}, {"owner_kind", kind}, {"owner", name}, {"state", "as_written"}});
    s.held = &family_->Add({{"namespace", ns}, {"owner_kind", kind}, {"owner", name}, {"state", "held"}});
  }
  s.as_written->Set(static_cast<double>(gpus.as_written) / decide::kOneGpu);
  s.held->Set(static_cast<double>(gpus.held) / decide::kOneGpu);
}

void WorkloadGpusGauge::drop(const std::string& key) {
  if (!family_) return;
  std::lock_guard lk(mu_);
  auto it = series_.find(key);
  if (it == series_.end()) return;
  family_->Remove(it->second.as_written);
  family_->Remove(it->second.held);
  series_.erase(it);
}

}  // namespace kubex::controllers
