// PATCH engine (DESIGN §5: merge-patch / JSON-patch / strategic-merge-patch like kube-apiserver).
// Expected results of the strategic, merge and JSON patch cases were cross-checked against
// `kubectl patch --local` (v1.32), which runs the same Go libraries as kube-apiserver.
#include "sim/apiserver/patch.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kubex::sim {
namespace {

using nlohmann::json;

PatchResult smp(const json& original, std::string_view patch, const std::string& kind) {
  return apply_patch(original, patch, PatchType::kStrategic, kind);
}

PatchResult json_patch(const json& original, std::string_view patch) {
  return apply_patch(original, patch, PatchType::kJson, "Pod");
}

PatchResult merge_patch(const json& original, std::string_view patch) {
  return apply_patch(original, patch, PatchType::kMerge, "Pod");
}

// The names of the objects of a list, in order.
std::vector<std::string> names(const json& list, const std::string& key = "name") {
  std::vector<std::string> out;
  for (const auto& item : list) out.push_back(item.at(key).get<std::string>());
  return out;
}

json deployment() {
  return json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
    "spec": {
      "replicas": 2,
      "selector": {"matchLabels": {"app": "web"}},
      "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
      "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
          "containers": [
            {"name": "app", "image": "registry/app:v1",
             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
             "ports": [{"containerPort": 8080, "name": "http"}],
             "resources": {"requests": {"cpu": "100m"}}},
            {"name": "sidecar", "image": "registry/sidecar:v1", "args": ["--verbose"],
             "resources": {"limits": {"memory": "64Mi"}},
             "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
          ],
          "volumes": [{"name": "data", "emptyDir": {}}],
          "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
        }
      }
    },
    "status": {"conditions": [
      {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"},
      {"type": "Progressing", "status": "True", "reason": "NewReplicaSetCreated"}
    ]}
  })");
}

json pod() {
  return json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default", "labels": {"a": "1", "b": "2"},
                 "finalizers": ["f1", "f2"],
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u1"}]},
    "spec": {
      "containers": [
        {"name": "c1", "image": "i1",
         "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 443, "name": "https"}]},
        {"name": "c2", "image": "i2"},
        {"name": "c3", "image": "i3"}
      ],
      "securityContext": {"runAsUser": 1000, "fsGroup": 2000},
      "tolerations": [{"key": "k1", "operator": "Exists"}, {"key": "k2", "operator": "Exists"}]
    },
    "status": {"phase": "Running", "conditions": [
      {"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}
    ]}
  })");
}

// ---------------------------------------------------------------------------------------------------
// Content types.

TEST(PatchContentType, MapsTheThreePatchMediaTypes) {
  EXPECT_EQ(patch_type_from_content_type("application/json-patch+json"), PatchType::kJson);
  EXPECT_EQ(patch_type_from_content_type("application/merge-patch+json"), PatchType::kMerge);
  EXPECT_EQ(patch_type_from_content_type("application/strategic-merge-patch+json"), PatchType::kStrategic);
  EXPECT_EQ(patch_type_from_content_type("Application/Merge-Patch+JSON; charset=utf-8"), PatchType::kMerge);
}

TEST(PatchContentType, RejectsApplyAndOtherTypes) {
  EXPECT_EQ(patch_type_from_content_type("application/apply-patch+yaml"), std::nullopt);
  EXPECT_EQ(patch_type_from_content_type("application/json"), std::nullopt);
  EXPECT_EQ(patch_type_from_content_type(""), std::nullopt);
}

// ---------------------------------------------------------------------------------------------------
// Strategic merge patch: the kubectl apply case.

// The patch `kubectl apply` (CreateThreeWayMergePatch) sends when the manifest changes app's image to
// v2 and drops env B: deletions become `$patch: delete` items, and every touched merge list gets a
// `$setElementOrder` list of merge keys.
constexpr std::string_view kKubectlApplyPatch = R"({
  "spec": {"template": {"spec": {
    "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
    "containers": [{
      "$setElementOrder/env": [{"name": "A"}],
      "env": [{"$patch": "delete", "name": "B"}],
      "image": "registry/app:v2",
      "name": "app"
    }]
  }}}
})";

TEST(StrategicMergePatch, KubectlApplyChangesImageAndDeletesEnvVar) {
  const json original = deployment();
  auto result = smp(original, kKubectlApplyPatch, "Deployment");
  ASSERT_TRUE(result) << result.error().message;
  const json& containers = (*result)["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(names(containers), (std::vector<std::string>{"app", "sidecar"}));

  const json& app = containers[0];
  EXPECT_EQ(app["image"], "registry/app:v2");
  EXPECT_EQ(app["env"], json::parse(R"([{"name": "A", "value": "1"}])"));
  // Fields of app that the patch never mentions survive.
  EXPECT_EQ(app["ports"], json::parse(R"([{"containerPort": 8080, "name": "http"}])"));
  EXPECT_EQ(app["resources"], json::parse(R"({"requests": {"cpu": "100m"}})"));
  // No directive leaks into the stored object.
  EXPECT_FALSE(app.contains("$setElementOrder/env"));

  // The sidecar is untouched, including everything the patch never mentioned.
  EXPECT_EQ(containers[1], original["spec"]["template"]["spec"]["containers"][1]);
  // So is the rest of the object.
  EXPECT_EQ((*result)["spec"]["template"]["spec"]["volumes"],
            original["spec"]["template"]["spec"]["volumes"]);
  EXPECT_EQ((*result)["spec"]["strategy"], original["spec"]["strategy"]);
  EXPECT_FALSE((*result)["spec"]["template"]["spec"].contains("$setElementOrder/containers"));
}

// `kubectl apply` (or `helm upgrade`) onto a webhook configuration created another way: webhooks merge by name.
TEST(StrategicMergePatch, WebhookConfigurationWebhooksMergeByName) {
  const json original = json::parse(R"({
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "zzz-kubex"},
    "webhooks": [{"name": "a.kubex.ai", "timeoutSeconds": 10, "sideEffects": "None"},
                 {"name": "b.kubex.ai", "timeoutSeconds": 10, "sideEffects": "None"}]})");
  auto result = smp(original, R"({
    "$setElementOrder/webhooks": [{"name": "b.kubex.ai"}, {"name": "a.kubex.ai"}],
    "webhooks": [{"name": "a.kubex.ai", "timeoutSeconds": 5}]})",
                    "MutatingWebhookConfiguration");
  ASSERT_TRUE(result) << result.error().message;
  const json& hooks = (*result)["webhooks"];
  ASSERT_EQ(names(hooks), (std::vector<std::string>{"b.kubex.ai", "a.kubex.ai"}));
  EXPECT_EQ(hooks[1]["timeoutSeconds"], 5);
  EXPECT_EQ(hooks[1]["sideEffects"], "None");  // merged, not replaced
  EXPECT_EQ(hooks[0]["timeoutSeconds"], 10);
}

TEST(StrategicMergePatch, DoesNotModifyTheOriginal) {
  const json original = deployment();
  const json copy = original;
  ASSERT_TRUE(smp(original, kKubectlApplyPatch, "Deployment"));
  EXPECT_EQ(original, copy);
}

// ---------------------------------------------------------------------------------------------------
// Strategic merge patch: list strategies from the struct tags.

TEST(StrategicMergePatch, FinalizersUnionMergeNewItemsFirstWithoutDuplicates) {
  // ObjectMeta.finalizers: patchStrategy=merge on a list of strings.
  auto result = smp(pod(), R"({"metadata": {"finalizers": ["f3", "f1"]}})", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["finalizers"], json::parse(R"(["f3", "f1", "f2"])"));
}

TEST(StrategicMergePatch, FinalizersFollowSetElementOrder) {
  auto result =
      smp(pod(), R"({"metadata": {"$setElementOrder/finalizers": ["f2", "f9", "f1"], "finalizers": ["f9"]}})",
          "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["finalizers"], json::parse(R"(["f2", "f9", "f1"])"));
}

TEST(StrategicMergePatch, DeleteFromPrimitiveListRemovesFinalizer) {
  auto result =
      smp(pod(), R"({"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1", "absent"]}})", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["finalizers"], json::parse(R"(["f2"])"));
  EXPECT_FALSE((*result)["metadata"].contains("$deleteFromPrimitiveList/finalizers"));
}

TEST(StrategicMergePatch, DeleteFromPrimitiveListRunsAfterAdditions) {
  auto result = smp(
      pod(), R"({"metadata": {"finalizers": ["f1", "f9"], "$deleteFromPrimitiveList/finalizers": ["f1"]}})",
      "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["finalizers"], json::parse(R"(["f9", "f2"])"));
}

TEST(StrategicMergePatch, DeleteFromPrimitiveListOfAbsentListAddsNothing) {
  json original = pod();
  original["metadata"].erase("finalizers");
  auto result = smp(original, R"({"metadata": {"$deleteFromPrimitiveList/finalizers": ["f1"]}})", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_FALSE((*result)["metadata"].contains("finalizers"));
}

TEST(StrategicMergePatch, TolerationsAreReplacedWhole) {
  // PodSpec.tolerations has no patch strategy: the list is atomic.
  auto result = smp(pod(), R"({"spec": {"tolerations": [{"key": "k3", "operator": "Exists"}]}})", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["tolerations"], json::parse(R"([{"key": "k3", "operator": "Exists"}])"));
}

TEST(StrategicMergePatch, ContainerPortsMergeByContainerPort) {
  auto result = smp(pod(), R"({"spec": {"containers": [{"name": "c1", "ports": [
      {"containerPort": 8080, "name": "alt"}, {"containerPort": 80, "name": "web"}]}]}})",
                    "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["containers"][0]["ports"], json::parse(R"([
      {"containerPort": 8080, "name": "alt"}, {"containerPort": 80, "name": "web"},
      {"containerPort": 443, "name": "https"}])"));
  EXPECT_EQ((*result)["spec"]["containers"][0]["image"], "i1");
}

TEST(StrategicMergePatch, ConditionsMergeByType) {
  auto result = smp(pod(), R"({"status": {"conditions": [
      {"type": "Ready", "status": "True"}, {"type": "Initialized", "status": "True"}]}})",
                    "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["status"]["conditions"], json::parse(R"([
      {"type": "Ready", "status": "True"}, {"type": "Initialized", "status": "True"},
      {"type": "PodScheduled", "status": "True"}])"));
  EXPECT_EQ((*result)["status"]["phase"], "Running");
}

TEST(StrategicMergePatch, DeploymentConditionsMergeByType) {
  auto result = smp(deployment(), R"({"status": {"conditions": [{"type": "Available", "status": "True"}]}})",
                    "Deployment");
  ASSERT_TRUE(result) << result.error().message;
  const json& conditions = (*result)["status"]["conditions"];
  ASSERT_EQ(names(conditions, "type"), (std::vector<std::string>{"Available", "Progressing"}));
  EXPECT_EQ(conditions[0]["status"], "True");
  EXPECT_EQ(conditions[0]["reason"], "MinimumReplicasUnavailable");
}

TEST(StrategicMergePatch, OwnerReferencesMergeByUid) {
  auto result = smp(pod(), R"({"metadata": {"ownerReferences": [
      {"apiVersion": "v1", "kind": "X", "name": "other", "uid": "u2"}]}})",
                    "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(names((*result)["metadata"]["ownerReferences"], "uid"), (std::vector<std::string>{"u2", "u1"}));
}

TEST(StrategicMergePatch, NewContainersGoFirstAndExistingOnesKeepTheirPlace) {
  auto result = smp(
      pod(), R"({"spec": {"containers": [{"name": "c2", "image": "i2b"}, {"name": "c0", "image": "i0"}]}})",
      "Pod");
  ASSERT_TRUE(result) << result.error().message;
  const json& containers = (*result)["spec"]["containers"];
  EXPECT_EQ(names(containers), (std::vector<std::string>{"c1", "c2", "c0", "c3"}));
  EXPECT_EQ(containers[1]["image"], "i2b");
}

TEST(StrategicMergePatch, SetElementOrderKeepsServerOnlyItemsInLiveOrder) {
  auto result = smp(pod(), R"({"spec": {"$setElementOrder/containers": [{"name": "c3"}, {"name": "c1"}],
                          "containers": [{"name": "c1", "image": "n"}]}})",
                    "Pod");
  ASSERT_TRUE(result) << result.error().message;
  const json& containers = (*result)["spec"]["containers"];
  EXPECT_EQ(names(containers), (std::vector<std::string>{"c2", "c3", "c1"}));
  EXPECT_EQ(containers[2]["image"], "n");
  EXPECT_EQ(containers[2]["ports"].size(), 2u);
}

TEST(StrategicMergePatch, SetElementOrderAloneReordersTheList) {
  auto result = smp(
      pod(), R"({"spec": {"$setElementOrder/containers": [{"name": "c3"}, {"name": "c2"}, {"name": "c1"}]}})",
      "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(names((*result)["spec"]["containers"]), (std::vector<std::string>{"c3", "c2", "c1"}));
}

TEST(StrategicMergePatch, SetElementOrderThatContradictsThePatchListIsInvalid) {
  auto result = smp(pod(), R"({"spec": {"$setElementOrder/containers": [{"name": "c1"}, {"name": "c3"}],
                                        "containers": [{"name": "c3", "image": "n"}, {"name": "c1", "image": "n"}]}})",
                    "Pod");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, PatchErrorKind::kInvalid);
  EXPECT_NE(result.error().message.find("doesn't match $setElementOrder list"), std::string::npos)
      << result.error().message;
}

TEST(StrategicMergePatch, PatchDeleteRemovesListItemByMergeKey) {
  auto result = smp(pod(), R"({"spec": {"containers": [{"name": "c2", "$patch": "delete"}]}})", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(names((*result)["spec"]["containers"]), (std::vector<std::string>{"c1", "c3"}));
}

TEST(StrategicMergePatch, PatchReplaceInListReplacesTheWholeList) {
  auto result =
      smp(pod(), R"({"spec": {"containers": [{"name": "c9", "image": "x"}, {"$patch": "replace"}]}})", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["containers"], json::parse(R"([{"name": "c9", "image": "x"}])"));
}

TEST(StrategicMergePatch, PatchReplaceOnMapReplacesTheMap) {
  auto result = smp(pod(), R"({"metadata": {"labels": {"$patch": "replace", "z": "9"}}})", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["labels"], json::parse(R"({"z": "9"})"));
  EXPECT_EQ((*result)["metadata"]["name"], "p");
}

TEST(StrategicMergePatch, PatchDeleteOnMapEmptiesIt) {
  // Like kube-apiserver: an existing map becomes empty; an absent one stays absent.
  auto result =
      smp(pod(), R"({"spec": {"securityContext": {"$patch": "delete"}, "affinity": {"$patch": "delete"}}})",
          "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["securityContext"], json::object());
  EXPECT_FALSE((*result)["spec"].contains("affinity"));
}

TEST(StrategicMergePatch, MapsMergeAndNullDeletesKey) {
  auto result = smp(pod(), R"({"metadata": {"labels": {"a": null, "c": "3"}}})", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["labels"], json::parse(R"({"b": "2", "c": "3"})"));
}

TEST(StrategicMergePatch, RetainKeysSwitchesDeploymentStrategyToRecreate) {
  // What kubectl apply sends for DeploymentSpec.strategy (patchStrategy=retainKeys).
  auto result = smp(deployment(), R"({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})",
                    "Deployment");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["strategy"], json::parse(R"({"type": "Recreate"})"));
}

TEST(StrategicMergePatch, WithoutRetainKeysTheOldUnionMemberStays) {
  // Shows why kubectl sends $retainKeys: a plain merge keeps rollingUpdate.
  auto result = smp(deployment(), R"({"spec": {"strategy": {"type": "Recreate"}}})", "Deployment");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE((*result)["spec"]["strategy"].contains("rollingUpdate"));
}

TEST(StrategicMergePatch, RetainKeysMustListEveryPatchedField) {
  auto result = smp(deployment(),
                    R"({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 1}}}})",
                    "Deployment");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, PatchErrorKind::kBadRequest);
  EXPECT_EQ(result.error().message, "invalid patch format of retainKeys");
}

TEST(StrategicMergePatch, RetainKeysInVolumeItemClearsOldVolumeSource) {
  auto result = smp(deployment(), R"({"spec": {"template": {"spec": {"volumes": [
      {"name": "data", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/srv"}}]}}}})",
                    "Deployment");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["template"]["spec"]["volumes"],
            json::parse(R"([{"name": "data", "hostPath": {"path": "/srv"}}])"));
}

TEST(StrategicMergePatch, ServicePortsMergeByPort) {
  const json service = json::parse(R"({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
      "spec": {"ports": [{"port": 80, "targetPort": 8080, "name": "http"}, {"port": 443, "name": "https"}]}})");
  auto result =
      smp(service, R"({"spec": {"ports": [{"port": 443, "targetPort": 8443}, {"port": 9090, "name": "m"}]}})",
          "Service");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["ports"], json::parse(R"([
      {"port": 80, "targetPort": 8080, "name": "http"},
      {"port": 443, "targetPort": 8443, "name": "https"},
      {"port": 9090, "name": "m"}])"));
}

TEST(StrategicMergePatch, NodeAddressesMergeByTypeAndTaintsAreAtomic) {
  const json node = json::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
      "spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]},
      "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "Hostname", "address": "n1"}]}})");
  auto result = smp(node, R"({"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]},
      "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]}})",
                    "Node");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["taints"], json::parse(R"([{"key": "b", "effect": "NoExecute"}])"));
  EXPECT_EQ((*result)["status"]["addresses"], json::parse(R"([
      {"type": "InternalIP", "address": "10.0.0.2"}, {"type": "Hostname", "address": "n1"}])"));
}

TEST(StrategicMergePatch, NamespaceSpecFinalizersAreAtomicButMetadataFinalizersMerge) {
  const json ns = json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
      "metadata": {"name": "ns", "finalizers": ["x"]}, "spec": {"finalizers": ["kubernetes"]}})");
  auto result =
      smp(ns, R"({"metadata": {"finalizers": ["y"]}, "spec": {"finalizers": ["other"]}})", "Namespace");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["finalizers"], json::parse(R"(["y", "x"])"));
  EXPECT_EQ((*result)["spec"]["finalizers"], json::parse(R"(["other"])"));
}

TEST(StrategicMergePatch, PodDisruptionBudgetSelectorIsReplaced) {
  // PodDisruptionBudgetSpec.selector: patchStrategy=replace.
  const json pdb =
      json::parse(R"({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
      "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}}})");
  auto result = smp(pdb, R"({"spec": {"selector": {"matchLabels": {"x": "y"}}}})", "PodDisruptionBudget");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["selector"], json::parse(R"({"matchLabels": {"x": "y"}})"));
  EXPECT_EQ((*result)["spec"]["minAvailable"], 1);
}

TEST(StrategicMergePatch, CronJobPodTemplateContainersMergeByName) {
  const json cronjob =
      json::parse(R"({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
      "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "a", "image": "a", "env": [{"name": "X", "value": "1"}]}, {"name": "b", "image": "b"}]}}}}}})");
  auto result = smp(cronjob, R"({"spec": {"jobTemplate": {"spec": {"template": {"spec": {
      "containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}]}]}}}}}})",
                    "CronJob");
  ASSERT_TRUE(result) << result.error().message;
  const json& containers = (*result)["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"];
  EXPECT_EQ(names(containers), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(containers[0]["env"]), (std::vector<std::string>{"Y", "X"}));
}

TEST(StrategicMergePatch, UnknownKindHasOnlyObjectMetaRules) {
  const json object = json::parse(R"({"apiVersion": "example.com/v1", "kind": "Widget",
      "metadata": {"name": "w", "finalizers": ["a"]}, "spec": {"containers": [{"name": "x", "image": "1"}]}})");
  auto result = smp(object, R"({"metadata": {"finalizers": ["b"]}, "spec": {"containers": [{"name": "y"}]}})",
                    "Widget");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["finalizers"], json::parse(R"(["b", "a"])"));
  EXPECT_EQ((*result)["spec"]["containers"], json::parse(R"([{"name": "y"}])"));
}

TEST(StrategicMergePatch, NewValuesAreStoredWithoutNullsOrDirectives) {
  auto result = smp(pod(), R"({"spec": {"containers": [{"name": "c5", "image": "x",
      "$setElementOrder/env": [{"name": "A"}], "env": [{"name": "A", "value": null}]}],
      "nodeSelector": {"zone": null, "disk": "ssd"}}})",
                    "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["containers"][0],
            json::parse(R"({"name": "c5", "image": "x", "env": [{"name": "A"}]})"));
  EXPECT_EQ((*result)["spec"]["nodeSelector"], json::parse(R"({"disk": "ssd"})"));
}

TEST(StrategicMergePatch, NullBodyIsAnEmptyPatch) {
  auto result = smp(pod(), "null", "Pod");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(*result, pod());
}

TEST(StrategicMergePatch, UnknownPatchDirectiveIsInvalid) {
  auto in_list = smp(pod(), R"({"spec": {"containers": [{"name": "c2", "$patch": "xyz"}]}})", "Pod");
  ASSERT_FALSE(in_list);
  EXPECT_EQ(in_list.error().kind, PatchErrorKind::kInvalid);
  EXPECT_EQ(in_list.error().message, "unknown patch type: xyz in map: map[$patch:xyz name:c2]");

  auto in_map = smp(pod(), R"({"spec": {"securityContext": {"$patch": "xyz"}}})", "Pod");
  ASSERT_FALSE(in_map);
  EXPECT_EQ(in_map.error().message, "unknown patch type: xyz in map: map[$patch:xyz]");
}

TEST(StrategicMergePatch, ExplicitMergeDirectiveIsRejectedLikeKubernetes) {
  auto in_list = smp(pod(), R"({"spec": {"containers": [{"name": "c2", "$patch": "merge"}]}})", "Pod");
  ASSERT_FALSE(in_list);
  EXPECT_EQ(in_list.error().message, "merging lists cannot yet be specified in the patch");
}

TEST(StrategicMergePatch, ListItemWithoutMergeKeyIsInvalid) {
  auto result = smp(pod(), R"({"spec": {"containers": [{"image": "noname"}]}})", "Pod");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, PatchErrorKind::kInvalid);
  EXPECT_EQ(result.error().message, "map: map[image:noname] does not contain declared merge key: name");
}

TEST(StrategicMergePatch, MalformedDirectiveKeysAreBadRequests) {
  auto order = smp(pod(), R"({"metadata": {"$setElementOrderfinalizers": ["f1"]}})", "Pod");
  ASSERT_FALSE(order);
  EXPECT_EQ(order.error().kind, PatchErrorKind::kBadRequest);
  EXPECT_EQ(order.error().message, "invalid patch format of setElementOrder list");

  auto deletion = smp(pod(), R"({"metadata": {"$deleteFromPrimitiveListfinalizers": ["f1"]}})", "Pod");
  ASSERT_FALSE(deletion);
  EXPECT_EQ(deletion.error().kind, PatchErrorKind::kBadRequest);
  EXPECT_EQ(deletion.error().message, "invalid patch format of primitive list");
}

TEST(StrategicMergePatch, MixedElementTypesAreInvalid) {
  auto result = smp(pod(), R"({"metadata": {"finalizers": [1]}})", "Pod");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, PatchErrorKind::kInvalid);
  EXPECT_EQ(result.error().message, "list element types are not identical: [[f1 f2] [1]]");
}

TEST(StrategicMergePatch, UndecodableOrNonObjectBodyIsBadRequest) {
  for (std::string_view body : {R"({"spec":)", "[1, 2]", "", "\"x\""}) {
    auto result = smp(pod(), body, "Pod");
    ASSERT_FALSE(result) << body;
    EXPECT_EQ(result.error().kind, PatchErrorKind::kBadRequest) << body;
    EXPECT_EQ(http_status(result.error().kind), 400);
    EXPECT_TRUE(result.error().message.starts_with("error decoding patch: ")) << result.error().message;
  }
}

TEST(StrategicMergePatch, ExcessiveNestingIsBadRequest) {
  std::string body = R"({"metadata":{"annotations":)";
  body += std::string(2000, '[') + std::string(2000, ']') + "}}";
  auto result = smp(pod(), body, "Pod");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, PatchErrorKind::kBadRequest);
  EXPECT_NE(result.error().message.find("exceeded max depth"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------
// JSON Patch.

TEST(JsonPatch, AppliesAllOperationsInOrder) {
  auto result = json_patch(pod(), R"([
    {"op": "test", "path": "/metadata/name", "value": "p"},
    {"op": "add", "path": "/metadata/labels/app.kubernetes.io~1name", "value": "web"},
    {"op": "add", "path": "/metadata/labels/t~0x", "value": "tilde"},
    {"op": "replace", "path": "/spec/containers/0/image", "value": "i1b"},
    {"op": "remove", "path": "/spec/tolerations/0"},
    {"op": "add", "path": "/spec/containers/-", "value": {"name": "c4", "image": "i4"}},
    {"op": "copy", "from": "/metadata/labels", "path": "/metadata/annotations"},
    {"op": "move", "from": "/metadata/labels/a", "path": "/metadata/labels/moved"}
  ])");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["labels"],
            json::parse(R"({"app.kubernetes.io/name": "web", "t~x": "tilde", "b": "2", "moved": "1"})"));
  EXPECT_EQ((*result)["metadata"]["annotations"],
            json::parse(R"({"app.kubernetes.io/name": "web", "t~x": "tilde", "a": "1", "b": "2"})"));
  EXPECT_EQ((*result)["spec"]["containers"][0]["image"], "i1b");
  EXPECT_EQ(names((*result)["spec"]["containers"]), (std::vector<std::string>{"c1", "c2", "c3", "c4"}));
  EXPECT_EQ((*result)["spec"]["tolerations"], json::parse(R"([{"key": "k2", "operator": "Exists"}])"));
}

TEST(JsonPatch, ArrayIndicesLikeEvanphx) {
  auto inserted =
      json_patch(pod(), R"([{"op": "add", "path": "/spec/containers/1", "value": {"name": "x"}}])");
  ASSERT_TRUE(inserted) << inserted.error().message;
  EXPECT_EQ(names((*inserted)["spec"]["containers"]), (std::vector<std::string>{"c1", "x", "c2", "c3"}));

  // Index == size appends; negative indices count from the end.
  auto at_end = json_patch(pod(), R"([{"op": "add", "path": "/spec/containers/3", "value": {"name": "x"}},
                                      {"op": "remove", "path": "/spec/containers/-1"}])");
  ASSERT_TRUE(at_end) << at_end.error().message;
  EXPECT_EQ(names((*at_end)["spec"]["containers"]), (std::vector<std::string>{"c1", "c2", "c3"}));
}

TEST(JsonPatch, ReplaceOfMissingKeyInExistingObjectAddsItLikeKubernetes) {
  // evanphx/json-patch v4 (used by kube-apiserver) only checks that the parent exists.
  auto result = json_patch(pod(), R"([{"op": "replace", "path": "/spec/hostname", "value": "h"}])");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["spec"]["hostname"], "h");
}

TEST(JsonPatch, ErrorsCarryTheKubeApiserverMessages) {
  struct Case {
    const char* patch;
    const char* message;
  };
  const Case cases[] = {
      {R"([{"op": "remove", "path": "/spec/foo"}])",
       "error in remove for path: '/spec/foo': Unable to remove nonexistent key: foo: missing value"},
      {R"([{"op": "add", "path": "/spec/nope/x", "value": 1}])",
       "add operation does not apply: doc is missing path: \"/spec/nope/x\": missing value"},
      {R"([{"op": "replace", "path": "/spec/nope/foo", "value": 1}])",
       "replace operation does not apply: doc is missing path: /spec/nope/foo: missing value"},
      {R"([{"op": "replace", "path": "/spec/containers/9", "value": 1}])",
       "replace operation does not apply: doc is missing key: /spec/containers/9: missing value"},
      {R"([{"op": "add", "path": "/spec/containers/4", "value": 1}])",
       "error in add for path: '/spec/containers/4': Unable to access invalid index: 4: invalid index "
       "referenced"},
      {R"([{"op": "remove", "path": "/spec/containers/7"}])",
       "error in remove for path: '/spec/containers/7': Unable to access invalid index: 7: invalid index "
       "referenced"},
      {R"([{"op": "add", "path": "/spec/containers/x", "value": 1}])",
       "error in add for path: '/spec/containers/x': value was not a proper array index: 'x': "
       "strconv.Atoi: parsing \"x\": invalid syntax"},
      {R"([{"op": "test", "path": "/metadata/name", "value": "q"}])",
       "testing value /metadata/name failed: test failed"},
      {R"([{"op": "test", "path": "/spec/x", "value": 1}])", "testing value /spec/x failed: test failed"},
      {R"([{"op": "test", "path": "/spec/nope/x", "value": 1}])",
       "test operation does not apply: is missing path: /spec/nope/x: missing value"},
      {R"([{"op": "move", "from": "/metadata/labels/zz", "path": "/metadata/x"}])",
       "error in move for path: 'zz': Unable to remove nonexistent key: zz: missing value"},
      {R"([{"op": "copy", "from": "/metadata/labels", "path": "/x/y"}])",
       "copy operation does not apply: doc is missing destination path: /x/y: missing value"},
      {R"([{"op": "add", "path": "", "value": {}}])",
       "add operation does not apply: doc is missing path: \"\": missing value"},
      {R"([{"op": "frob", "path": "/x"}])", "Unexpected kind: frob"},
      {R"([{"path": "/x"}])", "Unexpected kind: unknown"},
      {R"([{"op": "add", "value": 1}])", "add operation failed to decode path: missing value"},
  };
  for (const auto& c : cases) {
    auto result = json_patch(pod(), c.patch);
    ASSERT_FALSE(result) << c.patch;
    EXPECT_EQ(result.error().kind, PatchErrorKind::kInvalid) << c.patch;
    EXPECT_EQ(http_status(result.error().kind), 422);
    EXPECT_EQ(result.error().message, c.message) << c.patch;
  }
}

TEST(JsonPatch, FailingOperationLeavesNothingHalfApplied) {
  const json original = pod();
  auto result = json_patch(original, R"([{"op": "add", "path": "/metadata/labels/x", "value": "1"},
                                         {"op": "test", "path": "/metadata/name", "value": "other"}])");
  ASSERT_FALSE(result);
  EXPECT_FALSE(original["metadata"]["labels"].contains("x"));
}

TEST(JsonPatch, ResultMustStayAnObject) {
  auto result = json_patch(pod(), R"([{"op": "replace", "path": "", "value": [1]}])");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, PatchErrorKind::kInvalid);
}

TEST(JsonPatch, UndecodableBodiesAreBadRequests) {
  for (std::string_view body : {"[{", R"({"op": "add"})", "[1]", R"([{"op": "add", "path": 5}])"}) {
    auto result = json_patch(pod(), body);
    ASSERT_FALSE(result) << body;
    EXPECT_EQ(result.error().kind, PatchErrorKind::kBadRequest) << body;
    EXPECT_TRUE(result.error().message.starts_with("error decoding patch: ")) << result.error().message;
  }
  auto not_array = json_patch(pod(), R"({"op": "add"})");
  ASSERT_FALSE(not_array);
  EXPECT_EQ(
      not_array.error().message,
      "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp");
}

// ---------------------------------------------------------------------------------------------------
// JSON Merge Patch.

TEST(MergePatch, NullDeletesAndObjectsMerge) {
  auto result = merge_patch(pod(), R"({"metadata": {"labels": {"a": null, "c": "3"}}, "status": null})");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ((*result)["metadata"]["labels"], json::parse(R"({"b": "2", "c": "3"})"));
  EXPECT_FALSE(result->contains("status"));
  EXPECT_EQ((*result)["metadata"]["name"], "p");
}

TEST(MergePatch, NonObjectValuesReplaceIncludingLists) {
  auto result = merge_patch(
      pod(), R"({"spec": {"containers": [{"name": "only", "image": null}], "securityContext": "x"}})");
  ASSERT_TRUE(result) << result.error().message;
  // Lists are never merged; nulls inside the new value are pruned like evanphx does.
  EXPECT_EQ((*result)["spec"]["containers"], json::parse(R"([{"name": "only"}])"));
  EXPECT_EQ((*result)["spec"]["securityContext"], "x");
  EXPECT_EQ((*result)["spec"]["tolerations"].size(), 2u);
}

TEST(MergePatch, UndecodableOrNonObjectBodyIsBadRequest) {
  for (std::string_view body : {"{\"spec\"", "null", "[1]", "\"x\""}) {
    auto result = merge_patch(pod(), body);
    ASSERT_FALSE(result) << body;
    EXPECT_EQ(result.error().kind, PatchErrorKind::kBadRequest) << body;
  }
  EXPECT_EQ(merge_patch(pod(), "null").error().message, "Invalid JSON Patch");
}

TEST(PatchResult, ConvertsToCommonResult) {
  common::Result<json> ok = merge_patch(pod(), R"({"metadata": {"labels": {"a": "9"}}})");
  ASSERT_TRUE(ok);
  EXPECT_EQ((*ok)["metadata"]["labels"]["a"], "9");
  common::Result<json> failed = json_patch(pod(), R"([{"op": "frob"}])");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message, "Unexpected kind: frob");
}

}  // namespace
}  // namespace kubex::sim
