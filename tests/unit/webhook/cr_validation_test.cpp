// The validating webhook of kubex's kinds (VAL-1, VAL-2, VAL-4) with its named inputs faked: the cluster's
// KAI queues (observe::KaiQueueNames) and the catalog for the strategy DELETE check (observe::CatalogView).
// The validator itself is api/validate's, tested in tests/unit/api.
#include "webhook/cr_validation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/kubex_views.h"
#include "decide/policy/catalog.h"
#include "observe/catalog_view.h"
#include "observe/kai_queues.h"

namespace kubex::webhook {
namespace {

using nlohmann::json;
using K = api::Kind;

const std::string kEarlyWarning =
    "spec.enablement.overrideScheduler: \"kai\" needs the early pod-mutating webhook "
    "(webhook.podMutation.additionalWebhook.enabled: true), which is disabled";
const std::string kQueueWarning = "spec.kai.queue: KAI queue \"kubex-unlimited-gpu-queue\" does not exist";

class FakeQueues final : public observe::KaiQueueNames {
 public:
  std::optional<std::set<std::string>> names() const override { return queues; }
  std::optional<std::set<std::string>> queues;  // nullopt: not known
};

class FakeCatalog final : public observe::CatalogView {
 public:
  std::shared_ptr<const decide::policy::Catalog> catalog() const override { return current; }
  std::shared_ptr<const decide::policy::Catalog> current;
};

json kubex_object(const std::string& kind, const std::string& name, json spec) {
  return {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
          {"kind", kind},
          {"metadata", {{"name", name}, {"generation", 1}}},
          {"spec", std::move(spec)}};
}

// A KAI strategy with ceiling 1 and the contract: valid, no warning of its own.
json kai_strategy() {
  return kubex_object("ClusterAutomationStrategy", "kai",
                      {{"experimental", {{"gpuKaiContract", "v1alpha1-2026-07"}}},
                       {"enablement",
                        {{"overrideScheduler", "kai"}, {"gpu", {{"requests", {{"ceiling", "1"}}}}}}}});
}

AdmissionRequest request(Operation op, const std::string& name, const json& object) {
  AdmissionRequest r;
  r.uid = "uid-1";
  r.kind = {"rightsizing.kubex.ai", "v1alpha1", "ClusterAutomationStrategy"};
  r.operation = op;
  r.name = name;
  r.object = std::make_shared<const json>(object);
  r.old_object = std::make_shared<const json>();
  r.options = std::make_shared<const json>();
  return r;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(CrValidation, KaiWarningsComeFromTheNamedInputs) {  // VAL-2
  auto queues = std::make_shared<FakeQueues>();
  CrValidationDeps d;
  d.kai_queues = queues;
  d.early_webhook_enabled = false;
  CrValidation v(std::move(d));

  // Queues not known yet (the API absent or not synced): no queue warning.
  AdmissionResponse r =
      v.handle(request(Operation::kCreate, "kai", kai_strategy()), K::kClusterAutomationStrategy);
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(r.warnings, std::vector<std::string>{kEarlyWarning});

  queues->queues = std::set<std::string>{"default"};
  r = v.handle(request(Operation::kUpdate, "kai", kai_strategy()), K::kClusterAutomationStrategy);
  EXPECT_TRUE(r.allowed);
  EXPECT_EQ(sorted(r.warnings), sorted({kEarlyWarning, kQueueWarning}));

  queues->queues = std::set<std::string>{"kubex-unlimited-gpu-queue"};
  r = v.handle(request(Operation::kCreate, "kai", kai_strategy()), K::kClusterAutomationStrategy);
  EXPECT_EQ(r.warnings, std::vector<std::string>{kEarlyWarning});
}

TEST(CrValidation, WithoutInputsTheDefaultsWarnOfNothing) {  // VAL-2
  CrValidation v(CrValidationDeps{});
  AdmissionResponse r =
      v.handle(request(Operation::kCreate, "kai", kai_strategy()), K::kClusterAutomationStrategy);
  EXPECT_TRUE(r.allowed);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(CrValidation, InvalidObjectsAreDeniedWith422) {  // VAL-1
  CrValidation v(CrValidationDeps{});
  json bad = kai_strategy();
  bad["spec"].erase("experimental");
  AdmissionResponse r = v.handle(request(Operation::kCreate, "kai", bad), K::kClusterAutomationStrategy);
  EXPECT_FALSE(r.allowed);
  ASSERT_TRUE(r.status);
  EXPECT_EQ(r.status->code, 422);
  EXPECT_EQ(r.status->reason, "Invalid");
  EXPECT_NE(r.status->message.find("spec.experimental.gpuKaiContract"), std::string::npos)
      << r.status->message;
}

TEST(CrValidation, DeleteOfAReferencedStrategyIsAllowedTheFinalizerHoldsIt) {  // VAL-4 "strategy DELETE"
  auto strategy = std::static_pointer_cast<const api::StrategyObject>(
      api::project_kubex_object(K::kClusterAutomationStrategy, kai_strategy()));
  json policy = kubex_object("ClusterStaticPolicy", "fixed",
                             {{"automationStrategyRef", {{"name", "kai"}}},
                              {"scope", {{"namespaceSelector", {{"operator", "In"}, {"values", {"*"}}}}}}});
  auto linked = std::static_pointer_cast<const api::PolicyObject>(
      api::project_kubex_object(K::kClusterStaticPolicy, policy));
  FakeCatalog catalog;
  catalog.current = std::make_shared<const decide::policy::Catalog>(
      std::vector<decide::policy::PolicyInput>{decide::policy::policy_input(linked)},
      std::vector<decide::policy::StrategyInput>{decide::policy::strategy_input(strategy)},
      api::GlobalConfigSpec{}, api::PolicyEvaluation{});
  CrValidationDeps d;
  d.catalog = &catalog;
  CrValidation v(std::move(d));
  AdmissionResponse r = v.handle(request(Operation::kDelete, "kai", json()), K::kClusterAutomationStrategy);
  EXPECT_TRUE(r.allowed);
  EXPECT_FALSE(r.status);
  EXPECT_TRUE(v.handle(request(Operation::kDelete, "other", json()), K::kClusterAutomationStrategy).allowed);
}

}  // namespace
}  // namespace kubex::webhook
