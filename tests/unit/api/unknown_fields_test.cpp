// VAL-5: `kubex validate` refuses unknown fields as kube-apiserver's strict field validation does, against the
// CRD schemas themselves (charts/kubex-crds, the one source of truth), with a hint when one known sibling is close.
#include "api/unknown_fields.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/validate.h"
#include "api_test_util.h"

namespace kubex::api {
namespace {

using nlohmann::json;

const json& schema(const std::string& plural) {
  static std::map<std::string, json> cache;
  auto it = cache.find(plural);
  if (it == cache.end()) {
    auto docs = test::load_documents("charts/kubex-crds/templates/rightsizing.kubex.ai_" + plural + ".yaml");
    it = cache.emplace(plural, docs.empty() ? json() : docs[0]["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
             .first;
  }
  return it->second;
}

std::vector<std::string> messages(const std::vector<UnknownField>& fs) {
  std::vector<std::string> out;
  for (const auto& f : fs) out.push_back(f.path + ": " + f.message());
  return out;
}

TEST(UnknownFields, TheStarterExampleHasNone) {  // VAL-5: nothing the guide writes is refused
  const std::vector<std::string> plurals = {"clusterautomationstrategies", "clusterproactivepolicies",
                                            "clustergpureactivepolicies"};
  ASSERT_EQ(test::starter().size(), plurals.size());
  for (std::size_t i = 0; i < plurals.size(); ++i) {
    EXPECT_TRUE(unknown_fields(schema(plurals[i]), test::starter()[i]).empty()) << plurals[i];
  }
}

TEST(UnknownFields, TheIssuesTyposAreRefusedWithTheirPathAndTheCloseField) {  // VAL-5 (issue 34 item 3)
  json reactive = test::starter()[2];
  reactive["spec"]["minPodMetricAge"] = reactive["spec"]["minPodMetricsAge"];
  reactive["spec"].erase("minPodMetricsAge");
  reactive["spec"]["metrics"]["compute"]["upsize"]["thresholdPrecent"] = 120;
  EXPECT_EQ(messages(unknown_fields(schema("clustergpureactivepolicies"), reactive)),
            (std::vector<std::string>{
                "spec.metrics.compute.upsize.thresholdPrecent: unknown field (did you mean \"thresholdPercent\"?)",
                "spec.minPodMetricAge: unknown field (did you mean \"minPodMetricsAge\"?)"}));

  json strategy = test::starter()[0];
  strategy["spec"]["enablement"]["gpu"]["requests"]["downSize"] = true;
  strategy["spec"]["podEvictions"] = {{"enabled", true}};
  EXPECT_EQ(messages(unknown_fields(schema("clusterautomationstrategies"), strategy)),
            (std::vector<std::string>{
                "spec.enablement.gpu.requests.downSize: unknown field (did you mean \"downsize\"?)",
                "spec.podEvictions: unknown field (did you mean \"podEviction\"?)"}));
}

TEST(UnknownFields, NoHintWhenNothingOrMoreThanOneFieldIsClose) {  // VAL-5: "when one known field is close"
  json strategy = test::starter()[0];
  strategy["spec"]["enablement"]["gpu"]["requests"]["somethingElse"] = 1;
  EXPECT_EQ(messages(unknown_fields(schema("clusterautomationstrategies"), strategy)),
            (std::vector<std::string>{"spec.enablement.gpu.requests.somethingElse: unknown field"}));
  // Two known siblings within two edits ("floor", "flour"): no guess.
  const json two = json::parse(R"({"type": "object", "properties": {"spec": {"type": "object",
      "properties": {"floor": {"type": "string"}, "flour": {"type": "string"}}}}})");
  const json object = json::parse(R"({"spec": {"flor": "1"}})");
  EXPECT_EQ(messages(unknown_fields(two, object)),
            (std::vector<std::string>{"spec.flor: unknown field"}));
}

TEST(UnknownFields, MapsKeyedByNameAndPreservedObjectsAreNotUnknown) {  // VAL-5: additionalProperties, preserve
  json sp = test::yaml(R"(
apiVersion: rightsizing.kubex.ai/v1alpha1
kind: StaticPolicy
metadata: {name: s, namespace: team, labels: {a: b}, annotations: {x: y}}
spec:
  resources:
    containers:
      my-container: {requests: {gpu: "0.5"}, limitz: {}}
)");
  EXPECT_EQ(messages(unknown_fields(schema("staticpolicies"), sp)),
            (std::vector<std::string>{"spec.resources.containers.my-container.limitz: unknown field (did you mean "
                                      "\"limits\"?)"}));
}

TEST(UnknownFields, MetadataIsCheckedAgainstObjectMeta) {  // VAL-5: the API server refuses metadata.lables too
  json sp = test::starter()[0];
  sp["metadata"]["lables"] = {{"a", "b"}};
  sp["metadata"]["uid"] = "u";
  EXPECT_EQ(messages(unknown_fields(schema("clusterautomationstrategies"), sp)),
            (std::vector<std::string>{"metadata.lables: unknown field (did you mean \"labels\"?)"}));
}

TEST(UnknownFields, ListItemsAreNamedByIndex) {  // VAL-5: paths as kubectl prints them
  json p = test::starter()[1];
  p["spec"]["scope"]["labelSelector"]["matchExpressions"] = json::array(
      {{{"key", "k"}, {"operator", "Exists"}}, {{"key", "k"}, {"operater", "Exists"}}});
  EXPECT_EQ(messages(unknown_fields(schema("clusterproactivepolicies"), p)),
            (std::vector<std::string>{"spec.scope.labelSelector.matchExpressions[1].operater: unknown field (did "
                                      "you mean \"operator\"?)"}));
}

TEST(UnknownFields, TheEngineValidatorStillIgnoresThem) {  // VAL-5: the engine never depends on unknown fields
  json reactive = test::starter()[2];
  reactive["spec"]["minPodMetricAge"] = "5m";
  EXPECT_TRUE(validate_any(reactive).ok()) << validate_any(reactive).message();
}

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("minPodMetricAge", "minPodMetricsAge"), 1u);
  EXPECT_EQ(edit_distance("thresholdPrecent", "thresholdPercent"), 2u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace kubex::api
