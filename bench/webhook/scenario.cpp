#include "scenario.h"

#include <vector>

#include "api/parse.h"
#include "common/base64.h"
#include "common/file_io.h"
#include "common/yaml.h"

namespace kubex::bench {

using nlohmann::json;

namespace {

json kai_strategy_spec() {
  return json::parse(R"({
    "experimental": {"gpuKaiContract": "v1alpha1-2026-07"},
    "enablement": {"overrideScheduler": "kai",
                   "gpu": {"requests": {"downsize": true, "upsize": true, "ceiling": "1",
                                        "setFromUnspecified": false}}},
    "kai": {"vllm": {"gpuMemoryUtilizationBufferPercent": 10}},
    "inPlaceResize": {"enabled": false},
    "podEviction": {"enabled": true}})");
}

json object(const std::string& kind, const std::string& name, const std::string& ns, json spec) {
  json meta = {{"name", name},
               {"uid", "00000000-0000-4000-8000-" + std::to_string(100000000000 + name.size())},
               {"creationTimestamp", "2026-11-01T10:00:00Z"},
               {"generation", 1},
               {"resourceVersion", "4711"}};
  if (!ns.empty()) meta["namespace"] = ns;
  return {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
          {"kind", kind},
          {"metadata", std::move(meta)},
          {"spec", std::move(spec)}};
}

// 50 policies that never match the benchmark's pod: per team namespace a StaticPolicy or a ProactivePolicy
// with its AutomationStrategy, and every fifth one a cluster policy scoped to that team's namespace.
std::vector<json> other_objects() {
  std::vector<json> out;
  for (int i = 0; i < kOtherPolicies; ++i) {
    const std::string team = "team-" + std::to_string(i);
    const std::string app = "svc-" + std::to_string(i);
    json scope = {{"labelSelector", {{"matchLabels", {{"app", app}}}}},
                  {"workloadTypes", json::array({"Deployment", "StatefulSet"})}};
    json resources = {
        {"containers",
         {{"*", {{"requests", {{"cpu", "250m"}, {"memory", "512Mi"}}}, {"limits", {{"memory", "1Gi"}}}}},
          {"worker", {{"requests", {{"gpu", "0.25"}}}}}}}};
    if (i % 5 == 4) {
      scope["namespaceSelector"] = {{"operator", "In"}, {"values", json::array({team})}};
      out.push_back(object("ClusterStaticPolicy", "static-" + team, "",
                           {{"scope", scope},
                            {"resources", resources},
                            {"automationStrategyRef", {{"name", "kai-gpu-sharing"}}}}));
      continue;
    }
    out.push_back(object("AutomationStrategy", "kai", team, kai_strategy_spec()));
    if (i % 2 == 0) {
      out.push_back(
          object("StaticPolicy", "static-" + app, team,
                 {{"scope", scope}, {"resources", resources}, {"automationStrategyRef", {{"name", "kai"}}}}));
    } else {
      out.push_back(object("ProactivePolicy", "proactive-" + app, team,
                           {{"scope", scope}, {"automationStrategyRef", {{"name", "kai"}}}}));
    }
  }
  return out;
}

// The benchmark's own policy: the vllm container of ml-inference Deployments gets 0.5 GPU.
json static_half_gpu() {
  return object("ClusterStaticPolicy", "llm-half-gpu", "",
                {{"scope",
                  {{"namespaceSelector", {{"operator", "In"}, {"values", json::array({kNamespace})}}},
                   {"workloadTypes", json::array({"Deployment"})}}},
                 {"resources", {{"containers", {{"vllm", {{"requests", {{"gpu", "0.5"}}}}}}}}},
                 {"automationStrategyRef", {{"name", "kai-gpu-sharing"}}}});
}

// A vLLM Deployment pod as kube-apiserver sends it in request.object (defaulted fields present).
json vllm_pod() {
  return json::parse(R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "generateName": "llama-8b-6d9c7f5b8d-", "namespace": "ml-inference", "creationTimestamp": null,
    "labels": {"app": "llama-8b", "app.kubernetes.io/name": "llama-8b", "app.kubernetes.io/part-of": "inference",
               "pod-template-hash": "6d9c7f5b8d"},
    "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "8000"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "llama-8b-6d9c7f5b8d",
                         "uid": "7c1e2f3a-4b5c-4d6e-8f70-81a2b3c4d5e6", "controller": true,
                         "blockOwnerDeletion": true}],
    "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                       "time": "2026-12-01T08:00:00Z", "fieldsType": "FieldsV1",
                       "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}}}}]
  },
  "spec": {
    "volumes": [
      {"name": "model-cache", "persistentVolumeClaim": {"claimName": "hf-model-cache"}},
      {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
      {"name": "kube-api-access-9tq4x", "projected": {"sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                      "fieldPath": "metadata.namespace"}}]}}],
        "defaultMode": 420}}],
    "containers": [{
      "name": "vllm", "image": "vllm/vllm-openai:v0.6.3",
      "command": ["python3", "-m", "vllm.entrypoints.openai.api_server"],
      "args": ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--served-model-name", "llama-8b",
               "--gpu-memory-utilization", "0.9", "--max-model-len", "8192", "--port", "8000",
               "--disable-log-requests"],
      "ports": [{"name": "http", "containerPort": 8000, "protocol": "TCP"}],
      "env": [{"name": "HF_HOME", "value": "/models"},
              {"name": "HUGGING_FACE_HUB_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}},
              {"name": "VLLM_LOGGING_LEVEL", "value": "INFO"}],
      "resources": {"limits": {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"},
                    "requests": {"cpu": "4", "memory": "24Gi", "nvidia.com/gpu": "1"}},
      "volumeMounts": [{"name": "model-cache", "mountPath": "/models"},
                       {"name": "shm", "mountPath": "/dev/shm"},
                       {"name": "kube-api-access-9tq4x", "readOnly": true,
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
      "livenessProbe": {"httpGet": {"path": "/health", "port": 8000, "scheme": "HTTP"}, "initialDelaySeconds": 120,
                        "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
      "readinessProbe": {"httpGet": {"path": "/health", "port": 8000, "scheme": "HTTP"}, "initialDelaySeconds": 60,
                         "timeoutSeconds": 1, "periodSeconds": 5, "successThreshold": 1, "failureThreshold": 3},
      "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
      "imagePullPolicy": "IfNotPresent"}],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
    "nodeSelector": {"nvidia.com/gpu.present": "true"},
    "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
    "schedulerName": "default-scheduler",
    "tolerations": [
      {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
      {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 300}],
    "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"
  },
  "status": {}
})");
}

json review_of(const json& pod) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", kUid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", kNamespace},
            {"operation", "CREATE"},
            {"userInfo",
             {{"username", "system:serviceaccount:kube-system:replicaset-controller"},
              {"uid", "2b3c4d5e-6f70-4812-93a4-b5c6d7e8f901"},
              {"groups", json::array({"system:serviceaccounts", "system:serviceaccounts:kube-system",
                                      "system:authenticated"})}}},
            {"object", pod},
            {"oldObject", nullptr},
            {"dryRun", false},
            {"options", {{"kind", "CreateOptions"}, {"apiVersion", "meta.k8s.io/v1"}}}}}};
}

}  // namespace

common::Result<Scenario> make_scenario(const std::string& source_dir) {
  const std::string example = source_dir + "/examples/kai-gpu-sharing.yaml";
  auto text = common::read_file(example);
  if (!text) return common::fail("cannot read " + example + ": " + text.error().str());
  auto docs = common::yaml_to_json_documents(*text);
  if (!docs) return common::fail(example + ": " + docs.error().str());
  std::vector<json> objects = std::move(*docs);
  objects.push_back(static_half_gpu());
  for (auto& o : other_objects()) objects.push_back(std::move(o));

  Scenario s;
  std::vector<decide::policy::PolicyInput> policies;
  std::vector<decide::policy::StrategyInput> strategies;
  for (const json& o : objects) {
    const std::string kind = o.value("kind", "");
    const std::string name = kind + "/" + o["metadata"].value("name", "");
    if (kind == "AutomationStrategy" || kind == "ClusterAutomationStrategy") {
      auto p = api::parse_strategy(o);
      if (!p.valid()) return common::fail(name + " is invalid: " + p.report.message());
      decide::policy::StrategyInput in;
      in.strategy = std::make_shared<const api::Strategy>(std::move(p.value));
      in.valid = true;
      strategies.push_back(std::move(in));
    } else {
      auto p = api::parse_policy(o);
      if (!p.valid()) return common::fail(name + " is invalid: " + p.report.message());
      decide::policy::PolicyInput in;
      in.policy = std::make_shared<const api::Policy>(std::move(p.value));
      in.spec_valid = true;
      in.scope_evaluates = p.scope_evaluates;
      policies.push_back(std::move(in));
    }
  }
  s.strategies = static_cast<int>(strategies.size());
  s.policies = static_cast<int>(policies.size());
  s.catalog = std::make_shared<const decide::policy::Catalog>(
      std::move(policies), std::move(strategies), api::GlobalConfigSpec{}, api::PolicyEvaluation{});
  for (const auto& lp : s.catalog->policies()) {
    if (!lp.valid)
      return common::fail("policy " + lp.input.policy->meta.name + " does not resolve its strategy");
  }
  s.owner.kind = "Deployment";
  s.owner.name = "llama-8b";
  s.owner.ns = kNamespace;
  s.owner.labels = {{"app", "llama-8b"}, {"nvidia.com/gpu.present", "true"}};
  s.pod = vllm_pod();
  s.review = review_of(s.pod).dump();
  return s;
}

namespace {

// The scenario as the pod handler reads it: the catalog, synced caches and the scenario's Deployment as the
// owner of every pod (the caches are not what is measured).
class ScenarioSource final : public webhook::PodAdmissionSource {
 public:
  explicit ScenarioSource(const Scenario& s) : catalog_(s.catalog) {
    owner_.workload = s.owner;
    owner_.ref = {
        "apps/v1", "Deployment", s.owner.ns, s.owner.name, "9d8c7b6a-5f4e-4d3c-8b2a-19f0e1d2c3b4", "4242", ""};
  }
  std::shared_ptr<const decide::policy::Catalog> catalog() const override { return catalog_; }
  bool synced() const override { return true; }
  webhook::PodOwner owner(const std::string&, const json&, common::Duration) const override { return owner_; }
  std::map<std::string, std::string> namespace_annotations(const std::string&) const override { return {}; }

 private:
  std::shared_ptr<const decide::policy::Catalog> catalog_;
  webhook::PodOwner owner_;
};

}  // namespace

webhook::PodAdmissionDeps pod_admission_deps(const Scenario& s) {
  if (!s.source) s.source = std::make_shared<ScenarioSource>(s);
  webhook::PodAdmissionDeps deps;
  deps.source = s.source.get();
  return deps;
}

std::string check_response(const Scenario& s, const std::string& body, const std::string& uid) {
  json review = json::parse(body, nullptr, false);
  if (review.is_discarded() || !review.is_object()) return "the response is not JSON: " + body.substr(0, 200);
  const json& r = review.value("response", json::object());
  if (r.value("uid", "") != uid) return "the response uid is not the request's";
  if (r.value("allowed", false) != true) return "the response does not allow the pod: " + body.substr(0, 300);
  if (r.value("patchType", "") != "JSONPatch" || !r.contains("patch")) return "the response has no JSONPatch";
  auto raw = common::base64_decode(r["patch"].get<std::string>());
  if (!raw) return "the patch is not base64: " + raw.error().str();
  json ops = json::parse(*raw, nullptr, false);
  if (!ops.is_array() || ops.empty()) return "the patch is not a non-empty JSON array";
  json out;
  try {
    out = s.pod.patch(ops);
  } catch (const std::exception& e) {
    return std::string("the patch does not apply: ") + e.what();
  }
  const json& c = out["spec"]["containers"][0];
  if (out["metadata"]["annotations"].value("gpu-fraction", "") != "0.5") return "gpu-fraction is not 0.5";
  if (out["spec"].value("schedulerName", "") != "kai-scheduler") return "schedulerName is not kai-scheduler";
  if (c["resources"]["requests"].contains("nvidia.com/gpu") ||
      c["resources"]["limits"].contains("nvidia.com/gpu")) {
    return "nvidia.com/gpu was not removed";
  }
  const json& args = c["args"];
  bool rewritten = false;
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--gpu-memory-utilization") rewritten = args[i + 1] == "0.45";  // VLM-3: 0.5 x (1 - 10%)
  }
  if (!rewritten) return "--gpu-memory-utilization was not rewritten to 0.45: " + args.dump();
  return "";
}

}  // namespace kubex::bench
