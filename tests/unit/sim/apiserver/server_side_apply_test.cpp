// Server-side apply and managedFields (issue 34 item 5). Expected field sets and messages are the ones
// kube-apiserver v1.37 gave for the same requests (tests/conformance/test_differential.py runs them side by side).
#include "sim/apiserver/server_side_apply.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/apiserver/managed_fields.h"
#include "sim/apiserver/resource.h"

namespace kubex::sim::ssa {
namespace {

using nlohmann::json;

ResourceInfo kind(const std::string& group, const std::string& k, bool has_status) {
  ResourceInfo r;
  r.group = group;
  r.version = "v1";
  r.kind = k;
  r.has_status = has_status;
  return r;
}

json fields_of(const json& obj, const std::string& manager) {
  for (const auto& e : obj["metadata"]["managedFields"]) {
    if (e["manager"] == manager) return e["fieldsV1"];
  }
  return nullptr;
}

TEST(ManagedFields, FieldsV1RoundTripAndPaths) {
  json v = json::parse(R"({"f:data":{".":{},"f:a":{}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}})");
  auto s = FieldSet::from_fields_v1(v);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->to_fields_v1(), v);
  EXPECT_EQ(s->size(), 4u);
  std::vector<std::string> paths;
  s->for_each([&](const auto& p) { paths.push_back(path_string(p)); });
  EXPECT_EQ(paths, (std::vector<std::string>{".data", ".data.a", ".spec.containers[name=\"c\"]",
                                             ".spec.containers[name=\"c\"].image"}));
  EXPECT_EQ(path_string({"f:spec", key_pe({{"containerPort", 80}, {"protocol", "TCP"}})}),
            ".spec[containerPort=80,protocol=\"TCP\"]");
  EXPECT_EQ(path_string({"f:metadata", "f:finalizers", value_pe("a")}), ".metadata.finalizers[=\"a\"]");
  EXPECT_FALSE(FieldSet::from_fields_v1(json::parse(R"({"x:y":{}})")));
}

TEST(ManagedFields, ManagerFromUserAgent) {
  EXPECT_EQ(manager_from_user_agent("kubectl/v1.32.0 (linux/amd64) kubernetes/abc"), "kubectl");
  EXPECT_EQ(manager_from_user_agent("OpenAPI-Generator/31.0.0/python"), "OpenAPI-Generator");
  EXPECT_EQ(manager_from_user_agent("helm"), "helm");
}

TEST(ServerSideApply, ToFieldSetUsesListKeysAndAtomicTypes) {
  ResourceInfo dep = kind("apps", "Deployment", true);
  json obj = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
    "spec":{"selector":{"matchLabels":{"app":"d"}},"template":{"spec":{"nodeSelector":{"a":"b"},
    "containers":[{"name":"c","args":["x"],"ports":[{"containerPort":80}]}]}}}})");
  FieldSet s = to_field_set(obj, root_type(dep));
  json f = s.to_fields_v1();
  EXPECT_EQ(f["f:spec"]["f:selector"], json::object());  // LabelSelector is atomic
  const json& c = f["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"];
  EXPECT_TRUE(c.contains("."));
  EXPECT_EQ(c["f:args"], json::object());
  EXPECT_TRUE(c["f:ports"].contains("k:{\"containerPort\":80,\"protocol\":\"TCP\"}"));  // defaulted key
  EXPECT_EQ(f["f:spec"]["f:template"]["f:spec"]["f:nodeSelector"], json::object());
}

TEST(ServerSideApply, CreateReapplyConflictForceAndRemoval) {
  ResourceInfo cm = kind("", "ConfigMap", false);
  Request m1{&cm, "m1", "", "2026-01-01T00:00:00Z"};
  Request m2{&cm, "m2", "", "2026-01-01T00:00:01Z"};
  json config = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"app":"x"}},
    "data":{"a":"1","b":"2"}})");
  auto created = apply(m1, nullptr, config, false);
  ASSERT_TRUE(created);
  EXPECT_EQ(fields_of(*created, "m1"),
            json::parse(R"({"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}})"));
  auto again = apply(m1, &*created, config, false);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *created);

  json other = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"9"}})");
  auto conflict = apply(m2, &*created, other, false);
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error().code, 409);
  EXPECT_EQ(conflict.error().message, "Apply failed with 1 conflict: conflict with \"m1\": .data.a");
  ASSERT_EQ(conflict.error().causes.size(), 1u);
  EXPECT_EQ(conflict.error().causes[0].reason, "FieldManagerConflict");
  EXPECT_EQ(conflict.error().causes[0].field, ".data.a");

  auto forced = apply(m2, &*created, other, true);
  ASSERT_TRUE(forced);
  EXPECT_EQ((*forced)["data"]["a"], "9");
  EXPECT_EQ(fields_of(*forced, "m1"), json::parse(R"({"f:data":{"f:b":{}},"f:metadata":{"f:labels":{"f:app":{}}}})"));

  // m1 stops setting b and the label: both go; a stays (m2 owns it).
  json less = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"c":"3"}})");
  auto pruned = apply(m1, &*forced, less, false);
  ASSERT_TRUE(pruned);
  EXPECT_EQ((*pruned)["data"], json::parse(R"({"a":"9","c":"3"})"));
  EXPECT_FALSE((*pruned)["metadata"].contains("labels"));
}

TEST(ServerSideApply, ListsMergeByKeyAndUpdatesRecordTheirManager) {
  ResourceInfo dep = kind("apps", "Deployment", true);
  auto d = [](const char* containers) {
    return json::parse(std::string(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},
      "spec":{"template":{"spec":{"containers":)") + containers + "}}}}");
  };
  Request m1{&dep, "m1", "", "t1"}, m2{&dep, "m2", "", "t2"};
  auto a = apply(m1, nullptr, d(R"([{"name":"a","image":"i1","env":[{"name":"E1","value":"1"}]}])"), false);
  ASSERT_TRUE(a);
  auto b = apply(m2, &*a, d(R"([{"name":"b","image":"i2"},{"name":"a","env":[{"name":"E2","value":"2"}]}])"), false);
  ASSERT_TRUE(b);
  const json& cs = (*b)["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0]["name"], "b");
  EXPECT_EQ(cs[1]["name"], "a");
  EXPECT_EQ(cs[1]["image"], "i1");
  EXPECT_EQ(cs[1]["env"].size(), 2u);

  // An Update (PUT/PATCH) takes the fields it changes from their owners.
  json next = *b;
  next["spec"]["template"]["spec"]["containers"][1]["image"] = "i3";
  json mf = updated_managed_fields(Request{&dep, "kubectl-edit", "", "t3"}, &*b, next, nullptr);
  next["metadata"]["managedFields"] = mf;
  EXPECT_EQ(fields_of(next, "kubectl-edit"),
            json::parse(R"({"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{"f:image":{}}}}}}})"));
  EXPECT_FALSE(fields_of(next, "m1")["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"a\"}"].contains(
      "f:image"));
  // Status on the main resource of a kind with a status subresource is nobody's.
  json with_status = *b;
  with_status["status"] = {{"replicas", 1}};
  EXPECT_EQ(updated_managed_fields(Request{&dep, "x", "", "t4"}, &*b, with_status, nullptr), (*b)["metadata"]["managedFields"]);
}

}  // namespace
}  // namespace kubex::sim::ssa
