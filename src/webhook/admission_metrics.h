// OBS-5 admission metrics of the pod mutation passes: kubex_admission_requests_total{webhook,result} and
// kubex_admission_duration_seconds{webhook}, where webhook is `early` or `late` (ADM-1 paths) and result is
// patched, unchanged, error or bad_request, and probe for the webhook health probe's own pods (WHH-1: they are
// marked, not rightsized, so they never count as patched). Every series starts at zero.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "webhook/server.h"

namespace kubex::kube {
class Metrics;
}

namespace kubex::webhook {

inline constexpr std::array<double, 11> kAdmissionBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                             0.5,   1,    2.5,   5,    10};

class AdmissionMetrics {
 public:
  // Registers both families in `metrics` (which must outlive this object).
  explicit AdmissionMetrics(kube::Metrics& metrics);
  ~AdmissionMetrics();
  AdmissionMetrics(const AdmissionMetrics&) = delete;
  AdmissionMetrics& operator=(const AdmissionMetrics&) = delete;

  // `pass` is "early" or "late"; other passes and results outside OBS-5's list are ignored.
  void observe(std::string_view pass, Outcome outcome, double seconds);
  // A server observer that maps /mutate--v1-pod-early to early and /mutate--v1-pod to late and ignores
  // every other path. The observer refers to this object.
  Observer observer();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "early" / "late" for the ADM-1 paths, "" for any other path.
std::string_view pass_of_path(std::string_view path);

}  // namespace kubex::webhook
