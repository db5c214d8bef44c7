#include "webhook/admission_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>

#include <map>

#include "api/keys.h"
#include "kube/runtime/metrics.h"

namespace kubex::webhook {

namespace {

constexpr std::array<Outcome, 5> kResults = {Outcome::kPatched, Outcome::kUnchanged, Outcome::kError,
                                             Outcome::kBadRequest, Outcome::kProbe};

}  // namespace

struct AdmissionMetrics::Impl {
  struct Pass {
    std::map<Outcome, prometheus::Counter*> requests;
    prometheus::Histogram* duration = nullptr;
  };
  std::map<std::string, Pass, std::less<>> passes;
};

AdmissionMetrics::AdmissionMetrics(kube::Metrics& metrics) : impl_(std::make_unique<Impl>()) {
  auto& requests =
      metrics.counter_family("kubex_admission_requests_total",
                             "Pod admission requests handled by the mutating webhook, by pass and result.");
  auto& duration = metrics.histogram_family("kubex_admission_duration_seconds",
                                            "Time to answer a pod admission request, by pass.");
  prometheus::Histogram::BucketBoundaries buckets(kAdmissionBuckets.begin(), kAdmissionBuckets.end());
  for (const char* pass : {"early", "late"}) {
    Impl::Pass& p = impl_->passes[pass];
    for (Outcome o : kResults)
      p.requests[o] = &requests.Add({{"webhook", pass}, {"result", outcome_label(o)}});
    p.duration = &duration.Add({{"webhook", pass}}, buckets);
  }
}

AdmissionMetrics::~AdmissionMetrics() = default;

void AdmissionMetrics::observe(std::string_view pass, Outcome outcome, double seconds) {
  auto it = impl_->passes.find(pass);
  if (it == impl_->passes.end()) return;
  auto r = it->second.requests.find(outcome);
  if (r == it->second.requests.end()) return;
  r->second->Increment();
  it->second.duration->Observe(seconds);
}

Observer AdmissionMetrics::observer() {
  return [this](const std::string& path, Outcome outcome, double seconds) {
    std::string_view pass = pass_of_path(path);
    if (!pass.empty()) observe(pass, outcome, seconds);
  };
}

std::string_view pass_of_path(std::string_view path) {
  if (path == api::keys::kEarlyPath) return "early";
  if (path == api::keys::kLatePath) return "late";
  return "";
}

}  // namespace kubex::webhook
