// KAI admission emulation (issue 3: gpu-fraction must be strictly between 0 and 1 and not combined with an
// nvidia.com/gpu limit; SPEC §2 key gpu-fraction; SIM-9: the real KAI's checks and answer).
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
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "0.5"}}, json::array({container("app", limits)}))),
            "cannot have both GPU fraction request and whole GPU resource request/limit");
  // KAI checks the combination before the value.
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "2"}}, json::array({container("app", limits)}))),
            "cannot have both GPU fraction request and whole GPU resource request/limit");
}

// SIM-9 (findings 3(b)): like KAI's getFirstGPULimit, an nvidia.com/gpu limit in ANY container or init container
// is refused with a fraction, whichever container gpu-fraction-container-name names; only limits count. A user
// sees a fraction pod with a GPU sidecar refused at `kubectl create`, not created and left Pending.
TEST(SchedAdmission, Sim9WholeGpuLimitInAnyContainerOrInitContainer) {
  const std::string both = "cannot have both GPU fraction request and whole GPU resource request/limit";
  json limits = {{"limits", {{"nvidia.com/gpu", "1"}}}};
  json two = json::array({container("sidecar", limits), container("app")});
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "0.5"}, {"gpu-fraction-container-name", "app"}}, two)), both);
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "0.5"}}, two)), both);
  json init = pod({{"gpu-fraction", "0.5"}}, json::array({container("app")}));
  init["spec"]["initContainers"] = json::array({container("warmup", limits)});
  EXPECT_EQ(kai_gpu_request_error(init), both);
  // A request without a limit is not KAI's concern (the API server refuses it: a GPU needs a limit).
  json requests = {{"requests", {{"nvidia.com/gpu", "1"}}}};
  EXPECT_EQ(kai_gpu_request_error(pod({{"gpu-fraction", "0.5"}}, json::array({container("app", requests)}))), "");
}

// SIM-9 (findings 3(a)): the refusal is what the API server answers for KAI's webhook: 403 Forbidden, KAI's text
// after the webhook's prefix. A user sees `Error from server (Forbidden): ... admission webhook
// "admission.kai-scheduler.svc" denied the request: ...` from kubectl, as on a real cluster, not a 400 BadRequest.
TEST(SchedAdmission, Sim9RefusalIsTheWebhooksForbidden) {
  auto denied = kai_admission_denial(pod({{"gpu-fraction", "1.5"}}, json::array({container("app")})));
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->code, 403);
  EXPECT_EQ(denied->reason, "Forbidden");
  EXPECT_EQ(denied->message,
            "admission webhook \"admission.kai-scheduler.svc\" denied the request: "
            "gpu-fraction annotation value must be a positive number smaller than 1.0");
  EXPECT_FALSE(kai_admission_denial(pod({{"gpu-fraction", "0.5"}}, json::array({container("app")}))));
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
