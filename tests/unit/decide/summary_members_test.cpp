// OBS-4: the per-review `rightsizing summary` line is written from summary_members() without building a JSON
// value; it must be byte for byte the dump of summary_fields() (plus VAL-7's ignoredSources when present).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "decide/summary.h"

namespace kubex::decide {
namespace {

using nlohmann::json;

std::string members_of(const json& object) {
  std::string text = object.dump(-1, ' ', false, json::error_handler_t::replace);
  return text.substr(1, text.size() - 2);  // without the braces
}

TEST(SummaryMembers, SameBytesAsTheDumpedFields) {
  Summary empty;
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
  full.applied_filters = {"gpu-upsize-disabled", "vllm-args-not-rewritable"};
  full.failed_checks = {"bad \xff byte"};
  full.dry_run = true;
  full.text = summary_text(full.changes);
  for (const Summary* s : {&empty, &full}) {
    EXPECT_EQ(summary_members(*s), members_of(summary_fields(*s)));
    json with_ignored = summary_fields(*s);
    with_ignored["ignoredSources"] = json::array({"vllm.desired-resource-requests"});
    EXPECT_EQ(summary_members(*s, {"vllm.desired-resource-requests"}), members_of(with_ignored));
    EXPECT_TRUE(json::accept("{" + summary_members(*s) + "}"));
  }
}

}  // namespace
}  // namespace kubex::decide
