// TEL-2: a pod of the node -> its containers by runtime ID, with the allocation kubex-sim's GPU model reads.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "telemetry/node_pods.h"

namespace kubex::telemetry {
namespace {

nlohmann::json pod(nlohmann::json annotations, nlohmann::json containers, nlohmann::json statuses) {
  return {{"metadata", {{"namespace", "ml"}, {"name", "chat-0"}, {"uid", "0b1c-22"}, {"annotations", annotations}}},
          {"spec", {{"containers", containers}}},
          {"status", {{"containerStatuses", statuses}}}};
}

nlohmann::json status(const std::string& name, const std::string& id, int restarts = 0) {
  return {{"name", name}, {"containerID", id}, {"restartCount", restarts}};
}

TEST(NodePods, FractionGoesToTheNamedContainerOthersWithAGpuAreWhole) {  // TEL-2, TEL-3
  auto c = node_containers_of(pod({{"gpu-fraction", "0.5"}, {"gpu-fraction-container-name", "server"}},
                                  {{{"name", "sidecar"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}},
                                   {{"name", "server"}}, {{"name", "log"}}},
                                  {status("sidecar", "containerd://aaa"), status("server", "cri-o://bbb", 3),
                                   status("log", "containerd://ccc")}));
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].first, "aaa");
  EXPECT_EQ(c[0].second.allocation_type, "whole");
  EXPECT_EQ(c[1].first, "bbb");
  EXPECT_EQ(c[1].second.allocation_type, "fraction");
  EXPECT_DOUBLE_EQ(c[1].second.gpu_fraction, 0.5);
  EXPECT_EQ(c[1].second.restart_count, 3);
  EXPECT_EQ(c[1].second.ns, "ml");
  EXPECT_EQ(c[1].second.pod, "chat-0");
  EXPECT_EQ(c[1].second.pod_uid, "0b1c-22");
  EXPECT_EQ(c[2].second.allocation_type, "");  // no GPU: its processes are counted, not attributed
}

TEST(NodePods, UnnamedFractionGoesToTheFirstContainer) {  // TEL-2 (as kubex-sim's GPU model)
  auto c = node_containers_of(pod({{"gpu-fraction", "0.25"}}, {{{"name", "a"}}, {{"name", "b"}}},
                                  {status("a", "containerd://1"), status("b", "containerd://2")}));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].second.allocation_type, "fraction");
  EXPECT_EQ(c[1].second.allocation_type, "");
}

TEST(NodePods, ContainersWithoutAnIdYetAreLeftOut) {  // a container still being created has no runtime ID
  auto c = node_containers_of(pod(nlohmann::json::object(),
                                  {{{"name", "a"}, {"resources", {{"requests", {{"nvidia.com/gpu", 2}}}}}}},
                                  {{{"name", "a"}}}));
  EXPECT_TRUE(c.empty());
  c = node_containers_of(pod(nlohmann::json::object(),
                             {{{"name", "a"}, {"resources", {{"requests", {{"nvidia.com/gpu", 2}}}}}}},
                             {status("a", "containerd://x")}));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].second.allocation_type, "whole");
}

TEST(NodePods, AnInvalidFractionIsNotAFraction) {  // KAI refuses gpu-fraction outside (0, 1)
  auto c = node_containers_of(pod({{"gpu-fraction", "1.5"}}, {{{"name", "a"}}}, {status("a", "containerd://x")}));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].second.allocation_type, "");
}

}  // namespace
}  // namespace kubex::telemetry
