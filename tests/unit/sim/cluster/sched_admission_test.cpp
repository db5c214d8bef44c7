// KAI admission emulation (issue 3: gpu-fraction must be strictly between 0 and 1 and not combined with an
// nvidia.com/gpu request; SPEC §2 keys gpu-fraction and gpu-fraction-container-name).
#include "sim/cluster/sched_admission.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace kubex::sim::cluster;
using namespace kubex::sim::cluster::sched;
using nlohmann::json;

namespace {

json pod(const json& annotations, const json& containers, const std::string& scheduler = "kai-scheduler") {
  return {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"annotations", annotations}}},
          {"spec", {{"schedulerName", scheduler}, {"containers", containers}}}};
}

json container(const std::string& name, const json& resources = json::object()) {
  return {{"name", name}, {"image", "vllm"}, {"resources", resources}};
}

}  // namespace

TEST(SchedAdmission, FractionValueMustBeStrictlyBetweenZeroAndOne) {
  struct Case {
    json value;
    bool ok;
  };
  std::vector<Case> cases = {{"0.5", true},  {"0.01", true}, {".25", true},  {"5e-1", true},  {"0.999", true},
                             {"1", false},   {"1.0", false}, {"0", false},   {"-0.5", false}, {"1.5", false},
                             {"abc", false}, {"", false},    {" 0.5", false}, {"0.5 ", false}, {"50%", false},
                             {"inf", false}, {0.5, true}};
  for (const auto& c : cases) {
    std::string err = kai_gpu_request_error(pod({{"gpu-fraction", c.value}}, json::array({container("app")})));
    EXPECT_EQ(err.empty(), c.ok) << c.value.dump();
    if (!c.ok) {
      EXPECT_EQ(err, "gpu-fraction annotation value must be a positive number smaller than 1.0") << c.value.dump();
    }
  }
}

TEST(SchedAdmission, FractionCannotBeCombinedWithWholeGpus) {
  json limits = {{"limits", {{"nvidia.com/gpu", "1"}}}};
  json requests = {{"requests", {{"nvidia.com/gpu", "1"}}}};
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "0.5"}}, json::array({container("app", limits)}))),
            "cannot have both GPU fraction request and whole GPU resource request/limit");
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "0.5"}}, json::array({container("app", requests)}))),
            "cannot have both GPU fraction request and whole GPU resource request/limit");
  // KAI checks the combination before the value.
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "2"}}, json::array({container("app", limits)}))),
            "cannot have both GPU fraction request and whole GPU resource request/limit");
  // The fraction container is the one gpu-fraction-container-name names (else the first).
  json two = json::array({container("sidecar", limits), container("app")});
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "0.5"}, {"gpu-fraction-container-name", "app"}}, two)), "");
  EXPECT_NE(kai_gpu_request_error(pod({{"gpu-fraction", "0.5"}}, two)), "");
}

TEST(SchedAdmission, OnlyKaiPodsWithFractionsAreChecked) {
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "1"}}, json::array({container("app")}), "default-scheduler")), "");
  EXPECT_EQ(kai_gpu_request_error(pod(json::object(), json::array({container("app", {{"limits", {{"nvidia.com/gpu", "2"}}}})}))), "");
  EXPECT_EQ(kai_gpu_request_error(json("not a pod")), "");
  EXPECT_EQ(kai_gpu_request_error(json::parse(R"({"spec": {"schedulerName": "kai-scheduler"}, "metadata": 3})")), "");
  EXPECT_EQ(kai_gpu_request_error(json::parse(
                R"({"spec": {"schedulerName": "kai-scheduler", "containers": 1}, "metadata": {"annotations": {"gpu-fraction": "0.5"}}})")),
            "");
}
