// OBS-5: kubex_admission_requests_total{webhook,result} and kubex_admission_duration_seconds{webhook}
// with the OBS-5 buckets, fed from the server's observer by ADM-1 path.
#include "webhook/admission_metrics.h"

#include <gtest/gtest.h>

#include "kube/runtime/metrics.h"

namespace kubex::webhook {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(AdmissionMetrics, SeriesStartAtZero) {
  kube::Metrics m;
  AdmissionMetrics am(m);
  std::string text = m.render();
  EXPECT_TRUE(has_line(text, "# TYPE kubex_admission_requests_total counter")) << text;
  EXPECT_TRUE(has_line(text, "# TYPE kubex_admission_duration_seconds histogram"));
  for (const char* pass : {"early", "late"}) {
    for (const char* result : {"patched", "unchanged", "error", "bad_request", "probe"}) {
      EXPECT_TRUE(has_line(text, std::string("kubex_admission_requests_total{result=\"") + result +
                                     "\",webhook=\"" + pass + "\"} 0"))
          << pass << " " << result;
    }
    EXPECT_TRUE(
        has_line(text, std::string("kubex_admission_duration_seconds_count{webhook=\"") + pass + "\"} 0"));
  }
  // The OBS-5 buckets.
  for (const char* le :
       {"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"}) {
    EXPECT_TRUE(has_line(
        text, std::string("kubex_admission_duration_seconds_bucket{webhook=\"late\",le=\"") + le + "\"} 0"))
        << le;
  }
}

TEST(AdmissionMetrics, ObserverCountsMutationPathsOnly) {
  kube::Metrics m;
  AdmissionMetrics am(m);
  Observer obs = am.observer();
  obs("/mutate--v1-pod", Outcome::kPatched, 0.003);
  obs("/mutate--v1-pod", Outcome::kPatched, 0.2);
  obs("/mutate--v1-pod-early", Outcome::kBadRequest, 0.001);
  obs("/mutate--v1-pod-early", Outcome::kError, 7.0);
  obs("/validate-rightsizing-kubex-ai-v1alpha1-staticpolicy", Outcome::kDenied, 0.01);
  obs("/mutate--v1-pod", Outcome::kDenied, 0.01);  // not an OBS-5 result: ignored
  std::string text = m.render();
  EXPECT_TRUE(has_line(text, "kubex_admission_requests_total{result=\"patched\",webhook=\"late\"} 2"))
      << text;
  EXPECT_TRUE(has_line(text, "kubex_admission_requests_total{result=\"bad_request\",webhook=\"early\"} 1"));
  EXPECT_TRUE(has_line(text, "kubex_admission_requests_total{result=\"error\",webhook=\"early\"} 1"));
  EXPECT_TRUE(has_line(text, "kubex_admission_duration_seconds_count{webhook=\"late\"} 2"));
  EXPECT_TRUE(has_line(text, "kubex_admission_duration_seconds_bucket{webhook=\"late\",le=\"0.005\"} 1"));
  EXPECT_TRUE(has_line(text, "kubex_admission_duration_seconds_bucket{webhook=\"late\",le=\"0.25\"} 2"));
  EXPECT_TRUE(has_line(text, "kubex_admission_duration_seconds_bucket{webhook=\"early\",le=\"5\"} 1"));
  EXPECT_TRUE(has_line(text, "kubex_admission_duration_seconds_bucket{webhook=\"early\",le=\"10\"} 2"));
  EXPECT_EQ(text.find("staticpolicy"), std::string::npos);
  EXPECT_EQ(pass_of_path("/mutate--v1-pod"), "late");
  EXPECT_EQ(pass_of_path("/mutate--v1-pod-early"), "early");
  EXPECT_EQ(pass_of_path("/mutate--v1-pod/"), "");
}

}  // namespace
}  // namespace kubex::webhook
