#include "controllers/workload_gpus_gauge.h"

#include <gtest/gtest.h>

#include "kube/runtime/metrics.h"

namespace kubex::controllers {
namespace {

std::vector<std::string> series(const kube::Metrics& m) {
  std::vector<std::string> out;
  std::string text = m.render(), line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (line.rfind("kubex_workload_gpus{", 0) == 0) out.push_back(line);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

// RPT-5: two series per managed GPU workload, updated in place, dropped when it goes; none for a workload without
// GPUs (bounded cardinality).
TEST(WorkloadGpusGauge, TwoSeriesPerGpuWorkloadDroppedWhenGone) {
  kube::Metrics m;
  WorkloadGpusGauge g(&m);
  g.set("Deployment/ml/chat", "ml", "Deployment", "chat", {200, 80});
  g.set("Deployment/web/nginx", "web", "Deployment", "nginx", {0, 0});
  auto s = series(m);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NE(s[0].find("owner=\"chat\""), std::string::npos);
  EXPECT_NE(std::string(s[0] + s[1]).find("state=\"as_written\"} 2"), std::string::npos) << s[0] << s[1];
  EXPECT_NE(std::string(s[0] + s[1]).find("state=\"held\"} 0.8"), std::string::npos) << s[0] << s[1];
  g.set("Deployment/ml/chat", "ml", "Deployment", "chat", {100, 45});
  s = series(m);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_NE(std::string(s[0] + s[1]).find("state=\"held\"} 0.45"), std::string::npos) << s[0] << s[1];
  g.set("Deployment/ml/chat", "ml", "Deployment", "chat", {0, 0});  // scaled to zero: no GPUs, no series
  EXPECT_TRUE(series(m).empty());
  g.set("Deployment/ml/chat", "ml", "Deployment", "chat", {100, 45});
  g.drop("Deployment/ml/chat");
  EXPECT_TRUE(series(m).empty());
  g.drop("Deployment/ml/unknown");  // harmless
  WorkloadGpusGauge off(nullptr);
  off.set("k", "ns", "Deployment", "x", {100, 100});  // no metrics: does nothing
}

}  // namespace
}  // namespace kubex::controllers
