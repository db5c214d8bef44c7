// ADM-2 as a property: over many seeded random pods, policies and strategies, (1) the patch turns the input
// into the returned pod, (2) deciding on the output gives an empty patch, and (3) an early pass followed by
// a late pass gives the same pod as one pass. The generator is deterministic (fixed seed).
#include <gtest/gtest.h>

#include <random>

#include "../fixtures.h"
#include "decide/admission/pod_mutation.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

namespace {

class Gen {
 public:
  explicit Gen(std::uint32_t seed) : rng_(seed) {}
  int below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool coin() { return below(2) == 0; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(below(static_cast<int>(v.size())))];
  }

 private:
  std::mt19937 rng_;
};

const std::vector<std::string> kGpus = {"0.05", "0.25", "0.3", "0.5", "0.7", "0.99", "1", "1.3", "2.24"};
const std::vector<std::string> kCpus = {"100m", "250m", "0.5", "1", "2"};
const std::vector<std::string> kMems = {"128Mi", "256Mi", "1Gi", "2Gi"};
const std::vector<std::string> kNames = {"app", "side", "worker"};

api::Strategy random_strategy(Gen& g, const std::string& name) {
  api::Strategy s = g.coin() ? kai_strategy(name) : vanilla_strategy(name);
  s.spec.gpu_requests.upsize = g.below(4) != 0;
  s.spec.gpu_requests.downsize = g.below(4) != 0;
  s.spec.gpu_requests.set_from_unspecified = g.coin();
  s.spec.gpu_requests.bounds = {};
  if (g.coin()) s.spec.gpu_requests.bounds.ceiling = q(g.coin() ? "1" : "0.6");
  if (g.below(3) == 0) s.spec.gpu_requests.bounds.floor = q("0.1");
  s.spec.cpu_requests.upsize = g.coin();
  s.spec.memory_limits.downsize = g.coin();
  s.spec.cpu_limits.set_from_unspecified = g.coin();
  if (g.below(3) == 0) s.spec.cpu_requests.bounds.ceiling = q("1");
  s.spec.set_queue_when_specified = g.coin();
  s.spec.has_vllm = g.coin();
  s.spec.vllm_buffer_percent = g.below(30);
  return s;
}

json random_pod(Gen& g, int& containers_out) {
  const int n = 1 + g.below(3);
  containers_out = n;
  json containers = json::array();
  json annotations = json::object();
  json labels = json::object();
  const int gpu_state = g.below(4);  // 0 none, 1 whole on one, 2 fraction, 3 whole on two
  const int gpu_index = g.below(n);
  for (int i = 0; i < n; ++i) {
    json res = json::object();
    if ((gpu_state == 1 && i == gpu_index) || (gpu_state == 3 && i < 2)) res = whole_gpus(1 + g.below(2));
    if (g.coin()) res["requests"]["cpu"] = g.pick(kCpus);
    if (g.below(3) == 0) res["limits"]["memory"] = g.pick(kMems);
    json c = container(kNames[static_cast<std::size_t>(i)],
                       g.coin() ? "vllm/vllm-openai:v0.6" : "nvcr.io/nvidia/pytorch:24.01-py3", res);
    if (g.coin()) {
      c["args"] = g.coin() ? json::array({"--model", "m", "--gpu-memory-utilization", "0.9"})
                           : json::array({"--gpu-memory-utilization=0.8", "--gpu-memory-utilization=0.7"});
    }
    containers.push_back(std::move(c));
  }
  if (gpu_state == 2) {
    annotations["gpu-fraction"] = g.pick(std::vector<std::string>{"0.25", "0.5", "0.7"});
    if (gpu_index != 0)
      annotations["gpu-fraction-container-name"] = kNames[static_cast<std::size_t>(gpu_index)];
  }
  if (g.below(8) == 0) annotations["gpu-memory"] = "2048";
  if (g.below(3) == 0) labels["kai.scheduler/queue"] = "mine";
  return pod(std::move(containers), std::move(annotations), std::move(labels));
}

}  // namespace

TEST(AdmissionProperty, IdempotentAndPassOrderIndependent) {
  Gen g(20260701);
  int mutated = 0, unchanged = 0, with_reasons = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    Scenario s;
    const auto* a = s.add_strategy(random_strategy(g, "a"));
    const auto* b = s.add_strategy(random_strategy(g, "b"));
    if (g.coin()) s.workload.labels["kai.scheduler/queue"] = "owners";
    std::map<std::string, api::StaticResources> statics;
    for (const std::string& name : {std::string("*"), kNames[static_cast<std::size_t>(g.below(3))]}) {
      if (!g.coin()) continue;
      api::StaticResources r;
      if (g.coin()) r.gpu_request = q(g.pick(kGpus).c_str());
      if (g.coin()) r.cpu_request = q(g.pick(kCpus).c_str());
      if (g.coin()) r.cpu_limit = q(g.pick(kCpus).c_str());
      if (g.coin()) r.memory_request = q(g.pick(kMems).c_str());
      if (g.coin()) r.memory_limit = q(g.pick(kMems).c_str());
      statics[name] = r;
    }
    if (!statics.empty()) s.add_policy(static_policy("s", "a", statics), a);
    if (g.coin()) {
      s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", g.coin() ? "a" : "b"), g.coin() ? a : b);
      json rec = json::object();
      for (const auto& name : kNames) {
        if (g.coin()) rec[name]["gpu"] = g.pick(kGpus);
      }
      s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] = rec.dump();
    }
    if (s.candidates.empty()) s.add_policy(policy_of(api::Kind::kProactivePolicy, "p", "b"), b);

    int n = 0;
    const json in = random_pod(g, n);
    const AdmissionDecision once = s.run(in);
    ASSERT_EQ(patched(in, once), *once.pod) << "iteration " << iteration;
    const AdmissionDecision again = s.run(*once.pod);
    ASSERT_FALSE(again.patched()) << "iteration " << iteration << "\ninput: " << in.dump()
                                  << "\nfirst: " << once.patch->dump() << "\nsecond: " << again.patch->dump();
    const AdmissionDecision early = s.run(in, Pass::kEarly);
    const AdmissionDecision late = s.run(*early.pod, Pass::kLate);
    ASSERT_EQ(*late.pod, *once.pod) << "iteration " << iteration << "\ninput: " << in.dump();
    // The constraints annotation always reflects the decision's reasons (ADM-14).
    const json& meta = once.pod->at("metadata");
    const bool annotated = meta.contains("annotations") &&
                           meta.at("annotations").contains("rightsizing.kubex.ai/automation-constraints");
    ASSERT_EQ(annotated, !once.constraints.empty()) << "iteration " << iteration;
    mutated += once.result == AdmissionResult::kMutated;
    unchanged += once.result == AdmissionResult::kUnchanged;
    with_reasons += !once.constraints.empty();
  }
  // The generator really exercises both outcomes (a test that cannot fail is a defect).
  EXPECT_GT(mutated, 100);
  EXPECT_GT(unchanged, 20);
  EXPECT_GT(with_reasons, 100);
}
