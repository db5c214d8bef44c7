// What the actuation and rollback controller tests share: kubex's objects (the `kai` strategy and the `half`
// static policy for Deployments in `ml`), the workload `Deployment/ml/infer` with two replicas, the clock, the
// recorded events, the evictor, the pod annotation writer and a healthy webhook. `Controller` is the controller
// under test; each fixture builds it in its own make().
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../act/act_fakes.h"
#include "actuation_fakes.h"
#include "controllers/webhook_health_signal.h"
#include "status_fakes.h"

namespace kubex::controllers::test {

template <class Controller>
class EvictionFixture : public ::testing::Test {
 protected:
  FakeApi api;
  FakeCache cache{&api};
  FakeCatalogView catalog{&cache};
  common::FakeClock clock;
  std::vector<json> events;
  std::unique_ptr<kube::EventRecorder> recorder;
  FakeActuationFacts* facts = nullptr;
  std::shared_ptr<act::test::FakeEvictor> evictor = std::make_shared<act::test::FakeEvictor>();
  std::shared_ptr<FakePodAnnotations> pod_annotations = std::make_shared<FakePodAnnotations>();
  std::shared_ptr<WebhookHealthSignal> webhook = std::make_shared<WebhookHealthSignal>();
  std::unique_ptr<Controller> ctl;

  void seed_kubex_objects() {
    api.put(kubex_object("ClusterAutomationStrategy", "", "kai", kai_strategy_spec()));
    api.put(kubex_object("ClusterStaticPolicy", "", "half",
                         {{"scope", {{"namespaceSelector", {{"operator", "In"}, {"values", {"ml"}}}},
                                     {"workloadTypes", {"Deployment"}}}},
                          {"resources", {{"containers", {{"*", {{"requests", {{"gpu", "0.5"}}}}}}}}},
                          {"automationStrategyRef", {{"name", "kai"}}}}));
    webhook->set(decide::WebhookHealth::kHealthy);
  }

  // A new event recorder, and the workload with these owner annotations and pod template (facts points at it).
  std::unique_ptr<FakeActuationFacts> new_facts(json tmpl, json owner_annotations = json::object()) {
    kube::EventRecorderOptions eo;
    eo.clock = &clock;
    recorder = std::make_unique<kube::EventRecorder>(std::make_unique<FakeEventSink>(&events), eo);
    auto f = std::make_unique<FakeActuationFacts>();
    facts = f.get();
    f->workload = api::project_workload(
        {{"apiVersion", "apps/v1"},
         {"kind", "Deployment"},
         {"metadata", {{"name", "infer"}, {"namespace", "ml"}, {"uid", "d-infer"}, {"annotations", owner_annotations}}},
         {"spec", {{"replicas", 2}}}});
    f->tmpl = std::move(tmpl);
    return f;
  }

  kube::ReconcileOutcome reconcile() {
    cache.sync();
    auto r = ctl->reconcile(kKey);
    recorder->flush();
    return r;
  }
  std::vector<std::string> reasons() {
    std::vector<std::string> out;
    for (const auto& e : events) out.push_back(e["reason"]);
    return out;
  }
};

}  // namespace kubex::controllers::test
