// OBS-4: the per-review `rightsizing summary` fields are written as text by summary_members() (no JSON value
// is built per review): every field, keys sorted, strings escaped as JSON (invalid UTF-8 replaced), VAL-7's
// ignoredSources only when present; summary_fields() is the same object.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "decide/admission/summary.h"

namespace kubex::decide {
namespace {

using nlohmann::json;

TEST(SummaryMembers, EveryFieldSortedAndEscaped) {
  Summary empty;
  EXPECT_EQ(
      summary_members(empty),
      R"("appliedFilters":[],"changes":[],"dryRun":false,"failedChecks":[],"mode":"none","namespace":"",)"
      R"("owner":"","pass":"","phase":"admission","pod":"","policies":{},"rightsizingResult":"SKIPPED",)"
      R"("strategy":"","summary":"")");

  Summary full;
  full.pass = "late";
  full.ns = "ml-inference";
  full.pod = "llama-8b-6d9c7f5b8d-\"x\"";
  full.owner = "Deployment/llama-8b";
  full.policies = {{"requests.gpu", "ClusterStaticPolicy/a,StaticPolicy/b"},
                   {"limits.cpu", "StaticPolicy/\xc3\xa9"}};
  full.strategy = "ClusterAutomationStrategy/kai-gpu-sharing";
  full.mode = "kai";
  full.result = AdmissionResult::kMutated;
  full.changes = {
      {"vllm", Resource::kGpu, Usage::kRequest, "1", "0.5", "0.5", "ClusterStaticPolicy/a"},
      {"side\ncar", Resource::kCpu, Usage::kLimit, "unspecified", "500m", "500m", "StaticPolicy/b"}};
  // OBS-4: KAI and vLLM edits are changes too (container "", usage pod; usage arg), after the resources.
  full.edits = {{EditTarget::kScheduler, "", "default-scheduler", "kai-scheduler"},
                {EditTarget::kVllmGpuMemoryUtilization, "vllm", std::nullopt, "0.45"}};
  full.applied_filters = {"gpu-upsize-disabled", "vllm-args-not-rewritable"};
  full.failed_checks = {"bad \xff byte"};
  full.dry_run = true;
  full.text = summary_text(full.changes, full.edits);
  const std::string expected =
      R"("appliedFilters":["gpu-upsize-disabled","vllm-args-not-rewritable"],)"
      R"("changes":[{"container":"vllm","from":"1","resource":"gpu","to":"0.5","usage":"request"},)"
      R"({"container":"side\ncar","from":"unspecified","resource":"cpu","to":"500m","usage":"limit"},)"
      R"({"container":"","from":"default-scheduler","resource":"scheduler","to":"kai-scheduler","usage":"pod"},)"
      R"({"container":"vllm","from":null,"resource":"vllm-gpu-memory-utilization","to":"0.45","usage":"arg"}],)"
      R"("dryRun":true,"failedChecks":["bad )"
      "\xef\xbf\xbd"
      R"( byte"],"mode":"kai",)"
      R"("namespace":"ml-inference","owner":"Deployment/llama-8b","pass":"late","phase":"admission",)"
      R"("pod":"llama-8b-6d9c7f5b8d-\"x\"","policies":{"limits.cpu":"StaticPolicy/é",)"
      R"("requests.gpu":"ClusterStaticPolicy/a,StaticPolicy/b"},"rightsizingResult":"MUTATED",)"
      R"("strategy":"ClusterAutomationStrategy/kai-gpu-sharing",)"
      R"("summary":"Applied rightsizing requests [vllm:[gpu=0.5]] limits [side\ncar:[cpu=500m]]; )"
      R"(kai [scheduler=kai-scheduler]; vllm [vllm:0.45]")";
  EXPECT_EQ(summary_members(full), expected);
  // VAL-7: ignoredSources sits in its sorted place.
  std::string with_ignored = summary_members(full, {"vllm.desired-resource-requests"});
  EXPECT_NE(with_ignored.find(R"("failedChecks":["bad )"), std::string::npos);
  EXPECT_NE(with_ignored.find(R"( byte"],"ignoredSources":["vllm.desired-resource-requests"],"mode":"kai",)"),
            std::string::npos)
      << with_ignored;

  // The object form is these members, and dumping it gives the same bytes.
  for (const Summary* s : {&empty, &full}) {
    json fields = summary_fields(*s);
    EXPECT_EQ(fields.dump(-1, ' ', false, json::error_handler_t::replace), "{" + summary_members(*s) + "}");
  }
  EXPECT_EQ(summary_fields(full)["changes"][1]["container"], "side\ncar");
  EXPECT_TRUE(summary_fields(full)["changes"][3]["from"].is_null());

  // Edits alone (no resource change) are still listed, with no leading comma.
  Summary only_vllm;
  only_vllm.edits = {{EditTarget::kVllmGpuMemoryUtilization, "server", "0.95", "0.45"}};
  EXPECT_NE(summary_members(only_vllm).find(
                R"("changes":[{"container":"server","from":"0.95","resource":"vllm-gpu-memory-utilization",)"
                R"("to":"0.45","usage":"arg"}],)"),
            std::string::npos)
      << summary_members(only_vllm);
}

// The reactive and proactive lines' changes: only containers whose value moves, from the stored value or
// "unspecified", as requests.gpu changes of the recommending policy.
TEST(RecommendationChanges, OnlyMovedContainersFromStoredOrUnspecified) {
  const auto changes = recommendation_changes({{"app", "0.25"}, {"side", "0.5"}},
                                              {{"app", "0.5"}, {"new", "0.3"}, {"side", "0.5"}},
                                              "ClusterGpuReactivePolicy/r");
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].container, "app");
  EXPECT_EQ(changes[0].from, "0.25");
  EXPECT_EQ(changes[0].to, "0.5");
  EXPECT_EQ(changes[0].desired, "0.5");
  EXPECT_EQ(changes[0].resource, Resource::kGpu);
  EXPECT_EQ(changes[0].usage, Usage::kRequest);
  EXPECT_EQ(changes[0].source, "ClusterGpuReactivePolicy/r");
  EXPECT_EQ(changes[1].container, "new");
  EXPECT_EQ(changes[1].from, kUnspecified);
  EXPECT_EQ(summary_text(changes), "Applied rightsizing requests [app:[gpu=0.5] new:[gpu=0.3]] limits [none]");
}

// OBS-4: a summary repeats its workload's previous one (and goes out at debug) exactly when the result, the
// changes and the edits are the same, and for actuation and rollback also the pod and the failed checks; the
// pod a recommender happened to read, the timestamps-free text and the policies do not make news.
TEST(SummaryIdentity, NewsIsTheResultTheChangesAndForEvictionsThePod) {
  Summary base;
  base.phase = "reactive";
  base.ns = "ns";
  base.owner = "Deployment/infer";
  base.pod = "infer-a";
  base.result_text = "UNCHANGED";
  Change c;
  c.container = "app";
  c.from = "0.25";
  c.to = "0.5";
  c.desired = "0.5";
  base.changes = {c};

  struct Case {
    const char* name;
    void (*edit)(Summary&);
    bool same;
  };
  const Case cases[] = {
      {"identical", [](Summary&) {}, true},
      {"another pod read by a recommender", [](Summary& s) { s.pod = "infer-b"; }, true},
      {"other policies or strategy", [](Summary& s) { s.strategy = "ClusterAutomationStrategy/x"; }, true},
      {"another result", [](Summary& s) { s.result_text = "RECOMMENDED"; }, false},
      {"the admission result when no text", [](Summary& s) { s.result_text.clear(); }, false},
      {"another target value", [](Summary& s) { s.changes[0].to = "0.6"; }, false},
      {"another from value", [](Summary& s) { s.changes[0].from = "0.3"; }, false},
      {"a change more", [](Summary& s) { s.changes.push_back(s.changes[0]); }, false},
      {"no change", [](Summary& s) { s.changes.clear(); }, false},
      {"an edit", [](Summary& s) { s.edits.push_back(Edit{EditTarget::kQueue, "", std::nullopt, "q"}); }, false},
  };
  for (const Case& k : cases) {
    Summary other = base;
    k.edit(other);
    EXPECT_EQ(summary_identity(base) == summary_identity(other), k.same) << k.name;
  }

  Summary evicted = base;
  evicted.phase = "actuation";
  evicted.result_text = "EVICTED";
  Summary next_pod = evicted;
  next_pod.pod = "infer-b";
  EXPECT_NE(summary_identity(evicted), summary_identity(next_pod)) << "evicting the next pod is news";
  Summary same_pod = evicted;
  EXPECT_EQ(summary_identity(evicted), summary_identity(same_pod)) << "the same eviction logged again is not";
  Summary blocked = evicted;
  blocked.result_text = "BLOCKED_RETRYING";
  blocked.failed_checks = {"pdb"};
  Summary other_reason = blocked;
  other_reason.failed_checks = {"budget"};
  EXPECT_NE(summary_identity(blocked), summary_identity(other_reason)) << "a new reason to wait is news";
}

}  // namespace
}  // namespace kubex::decide
