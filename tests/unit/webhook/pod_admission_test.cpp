// ADM-3 (3)-(5): the pod handler reads the owner, the namespace annotations and the policies only when
// decide::early_exit() finds no exit (probe pods, disabled automation and protected namespaces never wait for
// an owner lookup), the same function the decision skips on.
#include "webhook/pod_admission.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "decide/admission/exits.h"
#include "decide/policy/catalog.h"
#include "webhook/probe_witness.h"

namespace kubex::webhook {
namespace {

using nlohmann::json;

AdmissionRequest pod_create(const json& pod, const std::string& ns) {
  AdmissionRequest r;
  r.uid = "uid-1";
  r.kind = {"", "v1", "Pod"};
  r.operation = Operation::kCreate;
  r.ns = ns;
  r.object = std::make_shared<const json>(pod);
  r.old_object = std::make_shared<const json>();
  r.options = std::make_shared<const json>();
  return r;
}

json pod(bool probe) {
  json annotations = json::object();
  if (probe) annotations["rightsizing.kubex.ai/webhook-probe"] = "true";
  return {{"metadata", {{"name", "p"}, {"annotations", annotations}}},
          {"spec", {{"containers", json::array({{{"name", "app"}, {"image", "busybox"}}})}}}};
}

// A PodAdmissionSource that counts the owner and namespace reads.
class CountingSource final : public PodAdmissionSource {
 public:
  explicit CountingSource(std::shared_ptr<const decide::policy::Catalog> c) : catalog_(std::move(c)) {}
  std::shared_ptr<const decide::policy::Catalog> catalog() const override { return catalog_; }
  bool synced() const override { return true; }
  PodOwner owner(const std::string&, const json&, common::Duration) const override {
    ++owner_reads;
    return PodOwner{};
  }
  std::map<std::string, std::string> namespace_annotations(const std::string&) const override {
    ++namespace_reads;
    return {};
  }
  mutable int owner_reads = 0, namespace_reads = 0;

 private:
  std::shared_ptr<const decide::policy::Catalog> catalog_;
};

TEST(PodAdmissionExits, OwnerReadOnlyWithoutAnExit) {
  struct Case {
    const char* name;
    bool probe;
    bool automation_enabled;
    std::string ns;
    decide::EarlyExit want;
  } cases[] = {
      {"managed namespace", false, true, "ml", decide::EarlyExit::kNone},
      {"probe pod", true, true, "ml", decide::EarlyExit::kProbePod},                            // ADM-3 (3)
      {"automation disabled", false, false, "ml", decide::EarlyExit::kAutomationDisabled},      // ADM-3 (4)
      {"protected namespace", false, true, "kube-system", decide::EarlyExit::kProtectedNamespace},  // (5)
  };
  for (const auto& c : cases) {
    api::GlobalConfigSpec global;
    global.automation_enabled = c.automation_enabled;
    auto catalog = std::make_shared<const decide::policy::Catalog>(
        std::vector<decide::policy::PolicyInput>{}, std::vector<decide::policy::StrategyInput>{}, global,
        api::PolicyEvaluation{});
    CountingSource src(catalog);
    int& owner_reads = src.owner_reads;
    int& namespace_reads = src.namespace_reads;
    ProbeWitness witness;
    PodAdmissionDeps deps;
    deps.source = &src;
    deps.probe_witness = &witness;
    PodAdmission handler(std::move(deps));
    const json p = pod(c.probe);
    ASSERT_EQ(decide::early_exit(p, c.ns, global), c.want) << c.name;
    const AdmissionResponse r = handler.handle(pod_create(p, c.ns), decide::Pass::kLate);
    EXPECT_FALSE(r.internal_error) << c.name;
    EXPECT_EQ(r.probe, c.probe) << c.name;  // OBS-5: counted as result="probe", not "patched"
    const int want_reads = decide::needs_owner(c.want) ? 1 : 0;
    EXPECT_EQ(owner_reads, want_reads) << c.name;
    EXPECT_EQ(namespace_reads, want_reads) << c.name;
    EXPECT_EQ(witness.sighting("p", ProbeWitness::Clock::time_point{}).late, c.probe) << c.name;  // WHH-2
  }
}

}  // namespace
}  // namespace kubex::webhook
