// ADM-5 (unsupported), ADM-7 (clamps), ADM-9 (gates), ADM-11 (mode table), ADM-12 (fraction container),
// ADM-13 (KAI extras), SEL-10 (conflict) on realistic pods.
#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/admission/pod_mutation.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

namespace {

const json& annotations(const AdmissionDecision& d) {
  static const json kEmpty = json::object();
  const json& m = d.pod->at("metadata");
  return m.contains("annotations") ? m.at("annotations") : kEmpty;
}
std::string constraints(const AdmissionDecision& d) {
  return annotations(d).value("rightsizing.kubex.ai/automation-constraints", std::string());
}
const json& resources(const AdmissionDecision& d, std::size_t i = 0) {
  return d.pod->at("spec").at("containers").at(i).at("resources");
}
std::string scheduler(const AdmissionDecision& d) {
  return d.pod->at("spec").at("schedulerName");
}
std::string queue(const AdmissionDecision& d) {
  return d.pod->at("metadata").at("labels").value("kai.scheduler/queue", std::string());
}

// A KAI scenario whose reactive recommendation for "app" is `rec`.
struct Reactive {
  Scenario s;
  api::Strategy* st;
  explicit Reactive(const std::string& rec, api::Strategy strategy = kai_strategy()) {
    st = const_cast<api::Strategy*>(s.add_strategy(std::move(strategy)));
    s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", st->meta.name), st);
    if (!rec.empty())
      s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] = rec;
  }
};

void expect_idempotent(const Scenario& s, const json& in) {
  const AdmissionDecision once = s.run(in);
  const AdmissionDecision again = s.run(*once.pod);
  EXPECT_FALSE(again.patched()) << again.patch->dump();  // ADM-2
  const AdmissionDecision late = s.run(*s.run(in, Pass::kEarly).pod, Pass::kLate);
  EXPECT_EQ(*late.pod, *once.pod);  // ADM-2
}

}  // namespace

// ADM-5: the pod's GPU is left untouched (cpu and memory still apply) with unsupported-gpu-request.
TEST(AdmissionGpu, UnsupportedGpuRequests) {
  struct Case {
    const char* name;
    json annotations;
    json resources;
    bool vanilla;
  } cases[] = {
      {"gpu-memory", {{"gpu-memory", "4096"}}, json::object(), false},
      {"num-devices", {{"gpu-fraction", "0.5"}, {"gpu-fraction-num-devices", "2"}}, json::object(), false},
      {"fraction+whole", {{"gpu-fraction", "0.5"}}, whole_gpus(1), false},
      {"bad fraction", {{"gpu-fraction", "half"}}, json::object(), false},
      {"fraction out of range", {{"gpu-fraction", "1.5"}}, json::object(), false},
      {"fraction zero", {{"gpu-fraction", "0"}}, json::object(), false},
      {"fraction in vanilla", {{"gpu-fraction", "0.5"}}, json::object(), true},
  };
  for (const auto& c : cases) {
    Scenario s;
    const auto* st = s.add_strategy(c.vanilla ? vanilla_strategy("k") : kai_strategy("k"));
    api::StaticResources r = gpu_request("0.3");
    r.cpu_request = q("250m");
    s.add_policy(static_policy("s", "k", {{"*", r}}), st);
    const json in = app_pod(c.resources, c.annotations);
    const AdmissionDecision d = s.run(in);
    EXPECT_EQ(constraints(d), R"([{"reason":"unsupported-gpu-request","targets":[]}])") << c.name;  // ADM-5
    json want_resources = c.resources;
    want_resources["requests"]["cpu"] = "250m";  // cpu and memory still apply
    EXPECT_EQ(resources(d), want_resources) << c.name;
    for (auto it = c.annotations.begin(); it != c.annotations.end(); ++it) {
      EXPECT_EQ(annotations(d).at(it.key()), it.value()) << c.name;  // GPU annotations untouched
    }
    EXPECT_EQ(scheduler(d), "default-scheduler") << c.name;  // no KAI extras
    expect_idempotent(s, in);
  }
}

// ADM-7: floor-clamped / ceiling-clamped with targets; a container entry overrides the usage-level bound.
TEST(AdmissionGpu, FloorAndCeilingClamps) {
  struct Case {
    const char* rec;
    const char* floor;
    const char* ceiling;
    const char* container_floor;
    const char* container_ceiling;
    const char* want_fraction;
    const char* want_reason;
  } cases[] = {
      {R"({"app":{"gpu":"0.05"}})", "0.1", "1", nullptr, nullptr, "0.1", "floor-clamped"},
      {R"({"app":{"gpu":"0.9"}})", nullptr, "0.4", nullptr, nullptr, "0.4", "ceiling-clamped"},  // X1
      {R"({"app":{"gpu":"0.9"}})", nullptr, "0.4", nullptr, "0.8", "0.8",
       "ceiling-clamped"},  // container wins
      {R"({"app":{"gpu":"0.3"}})", "0.1", "0.4", "0.35", nullptr, "0.35", "floor-clamped"},
      {R"({"app":{"gpu":"0.3"}})", "0.1", "0.4", nullptr, nullptr, "0.3", nullptr},
      {R"({"app":{"gpu":"0.3"}})", "250m", "500m", nullptr, nullptr, "0.3", nullptr},
  };
  for (const auto& c : cases) {
    api::Strategy strategy = kai_strategy();
    strategy.spec.gpu_requests.bounds = {};
    if (c.floor) strategy.spec.gpu_requests.bounds.floor = q(c.floor);
    if (c.ceiling) strategy.spec.gpu_requests.bounds.ceiling = q(c.ceiling);
    if (c.container_floor) strategy.spec.gpu_requests.containers["app"].floor = q(c.container_floor);
    if (c.container_ceiling) strategy.spec.gpu_requests.containers["app"].ceiling = q(c.container_ceiling);
    Reactive f(c.rec, strategy);
    const json in = app_pod(json::object(), {{"gpu-fraction", "0.25"}});
    const AdmissionDecision d = f.s.run(in);
    EXPECT_EQ(annotations(d).at("gpu-fraction"), c.want_fraction) << c.rec;  // ADM-7
    if (c.want_reason) {
      EXPECT_EQ(constraints(d),
                std::string(R"([{"reason":")") + c.want_reason +
                    R"(","targets":[{"container":"app","resource":"gpu","usage":"request"}]}])");
    } else {
      EXPECT_EQ(constraints(d), "");
    }
    expect_idempotent(f.s, in);
  }
}

// ADM-7: in KAI mode a missing ceiling is accepted and values >= 1 become whole GPUs (ceil).
TEST(AdmissionGpu, KaiWithoutCeilingGivesWholeGpus) {
  api::Strategy strategy = kai_strategy();
  strategy.spec.gpu_requests.bounds.ceiling.reset();
  Reactive f(R"({"app":{"gpu":"1.3"}})", strategy);
  const json in = app_pod(json::object(), {{"gpu-fraction", "0.5"}});
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(resources(d), whole_gpus(2));  // ADM-8: ceil(1.3)
  EXPECT_FALSE(annotations(d).contains("gpu-fraction"));
  EXPECT_EQ(d.summary.text,
            "Applied rightsizing requests [app:[gpu=1.3]] limits [none]; "
            "kai [scheduler=kai-scheduler queue=kubex-unlimited-gpu-queue]");  // OBS-4 clamped desired
  EXPECT_EQ(d.summary.changes.at(0).to, "2");
}

// ADM-9: each direction is gated by its flag; equal values are a no-op, not a constraint.
TEST(AdmissionGpu, DirectionGates) {
  struct Case {
    const char* current;  // gpu-fraction, or nullptr for whole GPUs 2
    const char* rec;
    bool upsize, downsize;
    const char* want_direction;  // nullptr: applied
  } cases[] = {
      {"0.25", "0.48", false, true, "upsize"},  // X1 with upsize off
      {"0.5", "0.3", true, false, "downsize"},
      {nullptr, "0.7", true, false, "downsize"},  // 2 GPUs -> 0.7 is a downsize
      {"0.25", "0.48", true, false, nullptr},
      {"0.5", "0.5", false, false, nullptr},  // equal: no-op
  };
  for (const auto& c : cases) {
    api::Strategy strategy = kai_strategy();
    strategy.spec.gpu_requests.upsize = c.upsize;
    strategy.spec.gpu_requests.downsize = c.downsize;
    Reactive f(std::string(R"({"app":{"gpu":")") + c.rec + R"("}})", strategy);
    const json in =
        c.current ? app_pod(json::object(), {{"gpu-fraction", c.current}}) : app_pod(whole_gpus(2));
    const AdmissionDecision d = f.s.run(in);
    if (c.want_direction) {
      EXPECT_EQ(
          constraints(d),
          std::string(
              R"([{"reason":"automation-strategy-disabled","targets":[{"container":"app","direction":")") +
              c.want_direction + R"(","resource":"gpu","usage":"request"}]}])")
          << c.rec;  // ADM-9
      EXPECT_TRUE(d.summary.changes.empty());
      if (c.current) {
        EXPECT_EQ(annotations(d).at("gpu-fraction"), c.current);  // ADM-11: fraction kept
        EXPECT_EQ(scheduler(d), "kai-scheduler");                 // ... with KAI extras
      } else {
        EXPECT_EQ(resources(d), whole_gpus(2));  // ADM-11: gated whole-GPU pod untouched
        EXPECT_EQ(scheduler(d), "default-scheduler");
        EXPECT_EQ(queue(d), "");
      }
    } else {
      EXPECT_EQ(constraints(d), "") << c.rec;
      EXPECT_EQ(annotations(d).at("gpu-fraction"), c.rec);
    }
    expect_idempotent(f.s, in);
  }
}

// ADM-11: more than one GPU container -> GPU, scheduler and queue untouched; multiple-gpu-containers.
TEST(AdmissionGpu, TwoGpuContainersAreNotConverted) {
  Scenario s;
  const auto* st = s.add_strategy(kai_strategy());
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.5")}}), st);
  const json in =
      pod(json::array({container("trainer", "nvcr.io/nvidia/pytorch:24.01-py3", whole_gpus(1)),
                       container("evaluator", "nvcr.io/nvidia/pytorch:24.01-py3", whole_gpus(1))}));
  const AdmissionDecision d = s.run(in);
  EXPECT_EQ(d.pod->at("spec").at("containers"), in.at("spec").at("containers"));  // ADM-11
  EXPECT_EQ(scheduler(d), "default-scheduler");
  EXPECT_EQ(queue(d), "");
  EXPECT_EQ(
      constraints(d),
      R"([{"reason":"multiple-gpu-containers","targets":[{"container":"evaluator","resource":"gpu","usage":"request"},{"container":"trainer","resource":"gpu","usage":"request"}]}])");
  EXPECT_EQ(d.result, AdmissionResult::kUnchanged);
  expect_idempotent(s, in);
}

// ADM-11: a second container receiving a surviving GPU value also makes two GPU containers.
TEST(AdmissionGpu, SurvivingValueOnSecondContainerCounts) {
  api::Strategy strategy = kai_strategy();
  strategy.spec.gpu_requests.set_from_unspecified = true;
  Reactive f(R"({"app":{"gpu":"0.5"},"side":{"gpu":"0.2"}})", strategy);
  const json in = pod(json::array({container("app", "img", whole_gpus(1)), container("side", "img")}));
  const AdmissionDecision d = f.s.run(in);
  EXPECT_TRUE(d.constraints.has("multiple-gpu-containers"));
  EXPECT_EQ(d.pod->at("spec").at("containers"), in.at("spec").at("containers"));
  // With setFromUnspecified off the side value is gated, leaving one GPU container: it converts.
  f.st->spec.gpu_requests.set_from_unspecified = false;
  const AdmissionDecision gated = f.s.run(in);
  EXPECT_FALSE(gated.constraints.has("multiple-gpu-containers"));
  EXPECT_TRUE(gated.constraints.has("automation-strategy-disabled"));
  EXPECT_EQ(annotations(gated).at("gpu-fraction"), "0.5");
}

// ADM-11 / ADM-12: the fraction on a container that is not index 0 sets gpu-fraction-container-name, and
// nvidia.com/gpu is removed from requests AND limits of every container.
TEST(AdmissionGpu, FractionContainerName) {
  Reactive f(R"({"worker":{"gpu":"0.3"}})");
  json side = container("proxy", "envoyproxy/envoy:v1.29", {{"requests", {{"cpu", "50m"}}}});
  json worker = container(
      "worker", "nvcr.io/nvidia/pytorch:24.01-py3",
      {{"limits", {{"nvidia.com/gpu", "1"}, {"memory", "8Gi"}}}, {"requests", {{"nvidia.com/gpu", "1"}}}});
  const json in = pod(json::array({side, worker}));
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.3");
  EXPECT_EQ(annotations(d).at("gpu-fraction-container-name"), "worker");  // ADM-12
  EXPECT_EQ(resources(d, 1), (json{{"limits", {{"memory", "8Gi"}}}}));    // ADM-11: gone from both lists
  EXPECT_EQ(resources(d, 0), side["resources"]);
  expect_idempotent(f.s, in);

  // The current value is read from the named container (ADM-12), and moving to whole GPUs removes both
  // annotations (ADM-11).
  Reactive up(R"({"worker":{"gpu":"1"}})");
  const AdmissionDecision whole = up.s.run(*d.pod);
  EXPECT_FALSE(annotations(whole).contains("gpu-fraction"));
  EXPECT_FALSE(annotations(whole).contains("gpu-fraction-container-name"));
  EXPECT_EQ(resources(whole, 1), (json{{"limits", {{"memory", "8Gi"}, {"nvidia.com/gpu", "1"}}},
                                       {"requests", {{"nvidia.com/gpu", "1"}}}}));
  ASSERT_EQ(whole.summary.changes.size(), 1u);
  EXPECT_EQ(whole.summary.changes[0].from, "0.3");
  EXPECT_EQ(whole.summary.changes[0].to, "1");
}

// ADM-12: a restartable init container is a target container; its fraction names it.
TEST(AdmissionGpu, RestartableInitContainerIsTarget) {
  Reactive f(R"({"gpu-sidecar":{"gpu":"0.2"}})");
  json in = pod(json::array({container("app", "img")}));
  json init = container("gpu-sidecar", "img", whole_gpus(1));
  init["restartPolicy"] = "Always";
  in["spec"]["initContainers"] = json::array({container("setup", "busybox"), init});
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.2");
  EXPECT_EQ(annotations(d).at("gpu-fraction-container-name"), "gpu-sidecar");
  EXPECT_EQ(d.pod->at("spec").at("initContainers").at(1).at("resources"), json::object());
  expect_idempotent(f.s, in);
}

// ADM-11: a pod that already has gpu-fraction and no GPU recommendation keeps it and gets KAI extras.
TEST(AdmissionGpu, ExistingFractionWithoutRecommendation) {
  Reactive f("");  // the reactive policy has not recommended anything yet
  const json in = app_pod(json::object(), {{"gpu-fraction", "0.25"}});
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.25");
  EXPECT_EQ(scheduler(d), "kai-scheduler");  // ADM-11 row 3
  EXPECT_EQ(queue(d), "kubex-unlimited-gpu-queue");
  EXPECT_EQ(constraints(d), "");
  EXPECT_EQ(d.result, AdmissionResult::kMutated);
  // OBS-4: no resource changed, the KAI extras did.
  EXPECT_EQ(d.summary.text,
            "No rightsizing changes; kai [scheduler=kai-scheduler queue=kubex-unlimited-gpu-queue]");
  EXPECT_TRUE(d.summary.changes.empty());
  ASSERT_EQ(d.summary.edits.size(), 2u);
  EXPECT_EQ(annotations(d).at("automation-webhook.kubex.ai/pod-rightsizing-info"),
            R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{},)"
            R"("kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"},)"
            R"("queue":{"from":null,"to":"kubex-unlimited-gpu-queue"}}})");  // ADM-16
  // Already on KAI in its queue: nothing changes, nothing is recorded.
  json on_kai = in;
  on_kai["spec"]["schedulerName"] = "kai-scheduler";
  on_kai["metadata"]["labels"]["kai.scheduler/queue"] = "team";
  const AdmissionDecision same = f.s.run(on_kai);
  EXPECT_FALSE(same.patched()) << same.patch->dump();
  EXPECT_EQ(same.summary.text, "No rightsizing changes");
  EXPECT_EQ(same.result, AdmissionResult::kUnchanged);
}

// ADM-11: a pod with no GPU and no surviving recommendation is untouched in KAI mode.
TEST(AdmissionGpu, NoGpuNoRecommendationUntouched) {
  Reactive f("");
  const json in = app_pod();
  const AdmissionDecision d = f.s.run(in);
  EXPECT_FALSE(d.patched());
  EXPECT_EQ(d.result, AdmissionResult::kUnchanged);
}

// ADM-11: with setFromUnspecified on, a pod without GPU gets a fraction on its first container (SEL-8).
TEST(AdmissionGpu, SetFromUnspecifiedKai) {
  Scenario s;
  api::Strategy strategy = kai_strategy();
  strategy.spec.gpu_requests.set_from_unspecified = true;
  const auto* st = s.add_strategy(strategy);
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.4")}}), st);
  const json in = pod(json::array({container("app", "img"), container("side", "img")}));
  const AdmissionDecision d = s.run(in);
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.4");
  EXPECT_FALSE(annotations(d).contains("gpu-fraction-container-name"));
  EXPECT_EQ(d.summary.changes.at(0).from, "unspecified");
  expect_idempotent(s, in);
}

// ADM-11 vanilla / X4: each GPU container gets requests = limits = ceil(d_c).
TEST(AdmissionGpu, VanillaPerContainerCeil) {
  Scenario s;
  const auto* st = s.add_strategy(vanilla_strategy());
  s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "plain"), st);
  s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] =
      R"({"x":{"gpu":"2.24"},"y":{"gpu":"1.12"}})";
  const json in =
      pod(json::array({container("x", "img", whole_gpus(2)), container("y", "img", whole_gpus(1))}));
  const AdmissionDecision d = s.run(in);
  EXPECT_EQ(resources(d, 0), whole_gpus(3));  // X4: 2.24 -> 3
  EXPECT_EQ(resources(d, 1), whole_gpus(2));  // X4: 1.12 -> 2
  EXPECT_EQ(scheduler(d), "default-scheduler");
  EXPECT_EQ(d.summary.text, "Applied rightsizing requests [x:[gpu=2.24] y:[gpu=1.12]] limits [none]");
  expect_idempotent(s, in);
}

// ADM-13: queue rules. A pod label is kept unless setQueueWhenSpecified; an owner label is never
// overridden and, when an overwrite was requested, gives queue-overridden-by-owner.
TEST(AdmissionGpu, QueueRules) {
  struct Case {
    const char* pod_queue;
    const char* owner_queue;
    bool overwrite;
    const char* want_label;  // "" = no pod label
    bool want_reason;
  } cases[] = {
      {nullptr, nullptr, false, "team-q", false}, {"mine", nullptr, false, "mine", false},
      {"mine", nullptr, true, "team-q", false},   {nullptr, "owners", false, "", false},
      {nullptr, "owners", true, "", true},        {"mine", "owners", true, "team-q", false},
  };
  for (const auto& c : cases) {
    api::Strategy strategy = kai_strategy();
    strategy.spec.kai_queue = "team-q";
    strategy.spec.set_queue_when_specified = c.overwrite;
    Reactive f(R"({"app":{"gpu":"0.5"}})", strategy);
    f.s.global.kai_scheduler_name = "custom-kai";
    if (c.owner_queue) f.s.workload.labels["kai.scheduler/queue"] = c.owner_queue;
    json labels = json::object();
    if (c.pod_queue) labels["kai.scheduler/queue"] = c.pod_queue;
    const json in = app_pod(whole_gpus(1), json::object(), labels);
    const AdmissionDecision d = f.s.run(in);
    EXPECT_EQ(queue(d), c.want_label) << c.pod_queue << "/" << c.owner_queue << "/" << c.overwrite;  // ADM-13
    EXPECT_EQ(scheduler(d), "custom-kai");  // from GlobalConfiguration spec.kai.schedulerName
    EXPECT_EQ(constraints(d),
              c.want_reason ? R"([{"reason":"queue-overridden-by-owner","targets":[]}])" : "");
    expect_idempotent(f.s, in);
  }
}

// SEL-10: several strategies -> strategy-conflict (whole pod); the GPU-winning policy's strategy governs.
TEST(AdmissionGpu, StrategyConflict) {
  Scenario s;
  const auto* kai = s.add_strategy(kai_strategy());
  const auto* plain = s.add_strategy(vanilla_strategy());
  s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "plain"), plain);
  s.add_policy(static_policy("s", "kai", {{"*", gpu_request("0.3")}}), kai);
  s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] =
      R"({"app":{"gpu":"0.7"}})";
  const json in = app_pod(whole_gpus(2));
  const AdmissionDecision d = s.run(in);
  EXPECT_TRUE(d.strategy_conflict);  // the caller emits StrategyConflict
  EXPECT_EQ(constraints(d), R"([{"reason":"strategy-conflict","targets":[]}])");  // SEL-10
  EXPECT_EQ(d.summary.strategy, "AutomationStrategy/plain");                      // SEL-9: reactive won GPU
  EXPECT_EQ(resources(d), whole_gpus(1));                                         // vanilla ceil(0.7)
  expect_idempotent(s, in);
}

// ADM-14: several reasons, sorted by reason, then container.
TEST(AdmissionGpu, ConstraintsSortedByReasonThenContainer) {
  Scenario s;
  api::Strategy strategy = kai_strategy();
  strategy.spec.gpu_requests.bounds.floor = q("0.2");
  strategy.spec.cpu_requests.upsize = false;
  const auto* st = s.add_strategy(strategy);
  const auto* other = s.add_strategy(kai_strategy("other"));
  api::StaticResources app = gpu_request("0.1"), side;
  side.cpu_request = q("2");
  app.cpu_request = q("2");
  s.add_policy(static_policy("s", "kai", {{"app", app}, {"side", side}, {"b", side}}), st);
  s.add_policy(policy_of(api::Kind::kProactivePolicy, "p", "other"), other);
  const json in = pod(
      json::array({container("side", "img", {{"requests", {{"cpu", "1"}}}}),
                   container("b", "img", {{"requests", {{"cpu", "1"}}}}),
                   container("app", "img", json{{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}})}));
  const AdmissionDecision d = s.run(in);
  EXPECT_EQ(
      constraints(d),
      R"([{"reason":"automation-strategy-disabled","targets":[)"
      R"({"container":"app","direction":"upsize","resource":"cpu","usage":"request"},)"
      R"({"container":"b","direction":"upsize","resource":"cpu","usage":"request"},)"
      R"({"container":"side","direction":"upsize","resource":"cpu","usage":"request"}]},)"
      R"({"reason":"floor-clamped","targets":[{"container":"app","resource":"gpu","usage":"request"}]},)"
      R"({"reason":"strategy-conflict","targets":[]}])");  // ADM-14
  EXPECT_EQ(annotations(d).at("gpu-fraction-container-name"), "app");
  EXPECT_EQ(annotations(d).at("gpu-fraction"), "0.2");
}
