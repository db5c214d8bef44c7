// ENG-1/ACT-9: the lease check in front of every eviction, taint and owner write. A closed gate sends nothing,
// answers an error (so the reconcile comes back), counts kubex_lease_refused_writes_total{write} and logs once per
// run of refusals; an open gate passes every write through unchanged.
#include "act/write_gate.h"

#include <gtest/gtest.h>

#include "act_fakes.h"
#include "api/views.h"
#include "kube/runtime/metrics.h"

namespace kubex::act {
namespace {

class CountingOwnerWriter final : public AnnotationWriter {
 public:
  std::expected<OwnerWrite, std::string> write(const api::WorkloadView&, const std::map<std::string, std::string>&,
                                               const std::vector<std::string>&, const std::string&) override {
    ++calls;
    return OwnerWrite::kWritten;
  }
  int calls = 0;
};

class CountingFinalizerWriter final : public FinalizerWriter {
 public:
  kube::KResult<void> add(const std::string&, const std::string&) override {
    ++calls;
    return {};
  }
  kube::KResult<void> remove(const std::string&, const std::string&) override {
    ++calls;
    return {};
  }
  int calls = 0;
};

std::string refused_line(const std::string& write, int n) {
  return "kubex_lease_refused_writes_total{write=\"" + write + "\"} " + std::to_string(n);
}

class WriteGateTest : public ::testing::Test {
 protected:
  bool holds = true;
  kube::Metrics metrics;
  std::shared_ptr<LeaseGuard> guard =
      std::make_shared<LeaseGuard>(write_gate([this] { return holds; }), &metrics, common::Logger("test"));
  std::shared_ptr<test::FakeEvictor> evictor = std::make_shared<test::FakeEvictor>();
  std::shared_ptr<test::FakeTainter> tainter = std::make_shared<test::FakeTainter>();
  std::shared_ptr<CountingOwnerWriter> owner = std::make_shared<CountingOwnerWriter>();
  std::shared_ptr<const api::WorkloadView> deployment = api::project_workload(
      {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"metadata", {{"name", "infer"}, {"namespace", "ml"}}}});
};

TEST_F(WriteGateTest, AnOpenGatePassesEveryWrite) {
  auto e = gated_evictor(evictor, guard);
  auto t = gated_tainter(tainter, guard);
  auto o = gated_annotation_writer(owner, guard);
  EXPECT_TRUE(e->evict({"ml", "a", "uid-a"}, EvictionReason::kResize).succeeded());
  EXPECT_TRUE(t->add("n1", "p").ok());
  EXPECT_TRUE(t->remove("n1", "p").ok());
  EXPECT_EQ(o->write(*deployment, {{"k", "v"}}, {}, "x"), OwnerWrite::kWritten);
  EXPECT_EQ(evictor->calls().size(), 1u);
  EXPECT_EQ(tainter->calls().size(), 2u);
  EXPECT_EQ(owner->calls, 1);
  EXPECT_EQ(metrics.render().find("kubex_lease_refused_writes_total{"), std::string::npos);
}

TEST_F(WriteGateTest, AClosedGateSendsNothingAndCountsEachRefusal) {
  holds = false;
  auto e = gated_evictor(evictor, guard);
  auto t = gated_tainter(tainter, guard);
  auto o = gated_annotation_writer(owner, guard);
  EvictionResult r = e->evict({"ml", "a", "uid-a"}, EvictionReason::kResize);
  EXPECT_EQ(r.outcome, EvictionResult::Outcome::kError);  // retried after resizeRetryInterval (ACT-5)
  EXPECT_EQ(r.message, kLeaseNotHeld);
  EXPECT_EQ(t->add("n1", "p").outcome, TaintResult::Outcome::kError);
  EXPECT_EQ(t->remove("n1", "p").outcome, TaintResult::Outcome::kError);
  auto w = o->write(*deployment, {{"k", "v"}}, {}, "actuation state");
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().find("Lease"), std::string::npos);
  EXPECT_EQ(o->write(*deployment, {}, {}, "x"), OwnerWrite::kNothing);  // nothing to send is not refused
  EXPECT_TRUE(evictor->calls().empty());
  EXPECT_TRUE(tainter->calls().empty());
  EXPECT_EQ(owner->calls, 0);
  const std::string text = metrics.render();
  EXPECT_NE(text.find(refused_line("eviction", 1)), std::string::npos) << text;
  EXPECT_NE(text.find(refused_line("taint", 2)), std::string::npos) << text;
  EXPECT_NE(text.find(refused_line("owner", 1)), std::string::npos) << text;
  holds = true;  // the gate opens again (a new term would be a new process; the gate itself does not care)
  EXPECT_TRUE(e->evict({"ml", "a", "uid-a"}, EvictionReason::kResize).succeeded());
  EXPECT_EQ(evictor->calls().size(), 1u);
}

// VAL-4 strategy DELETE: the strategyhold controller's finalizer writes (and the consolidation finalizer) pass the
// same gate, counted as write="finalizer".
TEST_F(WriteGateTest, FinalizerWritesPassTheGateOnlyWhileTheLeaseIsHeld) {
  auto inner = std::make_shared<CountingFinalizerWriter>();
  auto f = gated_finalizer_writer(inner, guard);
  const std::string path = "/apis/rightsizing.kubex.ai/v1alpha1/clusterautomationstrategies/kai";
  EXPECT_TRUE(f->add(path, "rightsizing.kubex.ai/referenced").has_value());
  EXPECT_EQ(inner->calls, 1);
  holds = false;
  auto r = f->remove(path, "rightsizing.kubex.ai/referenced");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message, kLeaseNotHeld);
  EXPECT_FALSE(f->add(path, "rightsizing.kubex.ai/referenced").has_value());
  EXPECT_EQ(inner->calls, 1);
  EXPECT_NE(metrics.render().find(refused_line("finalizer", 2)), std::string::npos) << metrics.render();
}

TEST_F(WriteGateTest, AnEmptyGateFunctionIsAlwaysOpen) {
  EXPECT_TRUE(write_gate({})->may_write());
  EXPECT_FALSE(write_gate([] { return false; })->may_write());
}

}  // namespace
}  // namespace kubex::act
