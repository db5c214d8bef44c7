// API-2: the CRD schemas (charts/kubex-crds) and the engine's validator/defaults are one API. This test fails
// when
//  * a schema field is missing from api::field_catalogue(kind), or the reverse, or their types/defaults
//  differ;
//  * a CRD is not what SPEC §1 / API-1 says (names, scope, one served+storage version, status subresource,
//    conditions as a list map keyed by type, a description on every field) or kubex-sim refuses it;
//  * defaulting by the API server (kubex-sim's structural schema) and api::apply_defaults differ;
//  * api::validate and kubex-sim's structural schema + CEL validation disagree on accept/reject for a rule
//  the
//    schema expresses (the behavioural table below).
//  * for an invalid object, the errors kubex-sim's schema + CEL print (what the first `kubectl apply` shows
//    while the webhook is down) are not the validator's errors, path and text (MessageParity, VAL-4).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "api/defaults.h"
#include "api/validate.h"
#include "api_test_util.h"
#include "sim/apiserver/custom.h"
#include "sim/apiserver/schema.h"

namespace kubex::api {
namespace {

using nlohmann::json;
using test::base_object;
using test::patched;

json load_crd(Kind k) {
  auto docs = test::load_documents(std::string("charts/kubex-crds/templates/rightsizing.kubex.ai_") +
                                   info(k).plural + ".yaml");
  EXPECT_EQ(docs.size(), 1u) << info(k).plural;
  return docs.empty() ? json() : docs[0];
}

const json& schema_of(const json& crd) {
  return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

struct SchemaField {
  std::string type;
  json default_value;  // null when none
  std::size_t max = 0;  // maxLength / maxItems / maxProperties (gen-crds.py BOUNDS), 0 when none
};

// Flattens a structural schema into catalogue paths ("spec.a.b", maps "*", list items "[]").
void walk(const json& node, const std::string& path, std::map<std::string, SchemaField>& out,
          std::vector<std::string>& undocumented) {
  if (!node.contains("description") || !node["description"].is_string() ||
      node["description"].get<std::string>().empty()) {
    undocumented.push_back(path);
  }
  SchemaField f;
  f.type = node.value("x-kubernetes-int-or-string", false) ? "int-or-string" : node.value("type", "");
  if (node.contains("default")) f.default_value = node["default"];
  for (const char* bound : {"maxLength", "maxItems", "maxProperties"}) {
    if (node.contains(bound)) f.max = node[bound].get<std::size_t>();
  }
  out[path] = f;
  if (node.contains("properties")) {
    for (const auto& [name, child] : node["properties"].items())
      walk(child, path + "." + name, out, undocumented);
  }
  if (node.contains("additionalProperties") && node["additionalProperties"].is_object()) {
    walk(node["additionalProperties"], path + ".*", out, undocumented);
  }
  if (node.contains("items")) walk(node["items"], path + "[]", out, undocumented);
}

class KindParity : public ::testing::TestWithParam<Kind> {};

std::string kind_name(const ::testing::TestParamInfo<Kind>& p) {
  return info(p.param).name;
}

// API-1, SPEC §1 table.
TEST_P(KindParity, CrdMatchesTheKindTableAndIsAcceptedByTheApiServer) {
  const Kind k = GetParam();
  const json crd = load_crd(k);
  ASSERT_TRUE(crd.is_object());
  EXPECT_EQ(crd["metadata"]["name"], std::string(info(k).plural) + ".rightsizing.kubex.ai");
  EXPECT_EQ(crd["spec"]["group"], kGroup);
  EXPECT_EQ(crd["spec"]["names"]["kind"], info(k).name);
  EXPECT_EQ(crd["spec"]["names"]["plural"], info(k).plural);
  EXPECT_EQ(crd["spec"]["names"]["singular"], info(k).singular);
  EXPECT_EQ(crd["spec"]["scope"], info(k).namespaced ? "Namespaced" : "Cluster");
  ASSERT_EQ(crd["spec"]["versions"].size(), 1u);
  const json& v = crd["spec"]["versions"][0];
  EXPECT_EQ(v["name"], kVersion);
  EXPECT_EQ(v["served"], true);
  EXPECT_EQ(v["storage"], true);
  EXPECT_TRUE(v["subresources"].contains("status"));
  const json& conditions = schema_of(crd)["properties"]["status"]["properties"]["conditions"];
  EXPECT_EQ(conditions["x-kubernetes-list-type"], "map");
  EXPECT_EQ(conditions["x-kubernetes-list-map-keys"], json::array({"type"}));
  EXPECT_EQ(conditions["items"]["properties"]["reason"]["pattern"],
            "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$");
  EXPECT_EQ(conditions["items"]["properties"]["reason"]["maxLength"], 1024);
  EXPECT_EQ(conditions["items"]["properties"]["message"]["maxLength"], 32768);
  EXPECT_EQ(conditions["items"]["properties"]["status"]["enum"], json::array({"True", "False", "Unknown"}));
  // kubex-sim validates CRDs like kube-apiserver: structural schema, defaults, CEL rules compile.
  auto causes = sim::custom::validate_crd(crd, nullptr);
  for (const auto& c : causes) ADD_FAILURE() << info(k).name << ": " << c.message;
}

TEST_P(KindParity, SchemaFieldsTypesAndDefaultsEqualTheFieldCatalogue) {
  const Kind k = GetParam();
  const json crd = load_crd(k);
  ASSERT_TRUE(crd.is_object());
  std::map<std::string, SchemaField> schema;
  std::vector<std::string> undocumented;
  const json& props = schema_of(crd)["properties"];
  for (const char* top : {"spec", "status"}) {
    if (props.contains(top)) walk(props[top], top, schema, undocumented);
  }
  for (const char* top : {"apiVersion", "kind"}) {
    EXPECT_TRUE(props.contains(top)) << top;
    if (!props[top].contains("description")) undocumented.push_back(top);
  }
  // kube-apiserver allows only `type: object` and string `name`/`generateName` on the root metadata (issue 16);
  // `name` is declared so that the singletons' rules can use `fieldPath: .metadata.name`.
  EXPECT_EQ(props["metadata"], json::parse(R"({"type": "object", "properties": {"name": {"type": "string"}}})"))
      << info(k).name;
  for (const auto& p : undocumented)
    ADD_FAILURE() << info(k).name << ": schema field without description: " << p;

  std::set<std::string> catalogue_paths;
  for (const auto& f : field_catalogue(k)) {
    EXPECT_TRUE(catalogue_paths.insert(f.path).second) << "duplicate catalogue entry " << f.path;
    auto it = schema.find(f.path);
    if (it == schema.end()) {
      ADD_FAILURE() << info(k).name << ": catalogue field missing from the CRD schema: " << f.path;
      continue;
    }
    EXPECT_EQ(f.type, it->second.type) << info(k).name << " " << f.path;
    json def = f.default_json.empty() ? json() : json::parse(f.default_json);
    EXPECT_EQ(def, it->second.default_value) << info(k).name << " " << f.path << " default";
    if (f.path.starts_with("spec")) {  // status keeps the plain OpenAPI keywords (metav1.Condition's)
      EXPECT_EQ(f.max, it->second.max) << info(k).name << " " << f.path << " bound";
    }
  }
  for (const auto& [path, field] : schema) {
    if (!catalogue_paths.contains(path)) {
      ADD_FAILURE() << info(k).name << ": CRD schema field missing from field_catalogue: " << path;
    }
  }
}

// API-2: "the engine re-applies CRD defaults in memory": the API server's defaulting and apply_defaults
// agree.
TEST_P(KindParity, ApiServerDefaultingEqualsInMemoryDefaulting) {
  const Kind k = GetParam();
  auto resources = sim::custom::crd_resources(load_crd(k));
  ASSERT_EQ(resources.size(), 1u);
  const auto& r = *resources[0];
  std::vector<json> objects = {base_object(k)};
  // Sparse objects: every parent present but (almost) nothing set, so that every default fires.
  json sparse = base_object(k);
  if (k == Kind::kAutomationStrategy || k == Kind::kClusterAutomationStrategy) {
    sparse["spec"] = json::parse(R"({"kai":{"vllm":{}},"experimental":{"gpuKaiContract":"v1alpha1-2026-07"},
      "enablement":{"gpu":{"requests":{"containers":{"app":{"ceiling":"1"}}}}},
      "scheduling":{"inclusionWindows":[{"start":"01:00","end":"02:00"}]}})");
  } else if (is_reactive(k)) {
    for (const char* s : {"compute", "memory"}) {
      sparse["spec"]["metrics"][s] = {{"prometheus", sparse["spec"]["metrics"][s]["prometheus"]}};
      sparse["spec"]["metrics"][s]["prometheus"].erase("interpretation");
    }
    sparse["spec"].erase("minPodMetricsAge");
    sparse["spec"]["scope"].erase("workloadTypes");
  } else if (k == Kind::kGlobalConfiguration || k == Kind::kPolicyEvaluation) {
    sparse.erase("spec");
  } else if (k == Kind::kGpuConsolidationPolicy) {
    sparse["spec"].erase("utilizationThresholdPercent");
    sparse["spec"].erase("requeueAfter");
  } else if (is_policy(k)) {
    sparse["spec"].erase("weight");
    if (sparse["spec"].contains("scope")) sparse["spec"]["scope"].erase("workloadTypes");
  }
  objects.push_back(sparse);
  for (const auto& o : objects) {
    json by_server = o;
    sim::custom::prune(r, by_server);
    sim::custom::apply_defaults(r, by_server);
    json by_engine = o;
    apply_defaults(k, by_engine);
    EXPECT_EQ(by_server, by_engine) << info(k).name << "\nserver: " << by_server.dump()
                                    << "\nengine: " << by_engine.dump()
                                    << "\ndiff: " << json::diff(by_server, by_engine).dump();
    // And defaulting twice changes nothing.
    json again = by_engine;
    apply_defaults(k, again);
    EXPECT_EQ(again, by_engine);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, KindParity,
                         ::testing::Values(Kind::kAutomationStrategy, Kind::kClusterAutomationStrategy,
                                           Kind::kProactivePolicy, Kind::kClusterProactivePolicy,
                                           Kind::kStaticPolicy, Kind::kClusterStaticPolicy,
                                           Kind::kGpuReactivePolicy, Kind::kClusterGpuReactivePolicy,
                                           Kind::kGpuConsolidationPolicy, Kind::kGlobalConfiguration,
                                           Kind::kPolicyEvaluation),
                         kind_name);

// ------------------------------------------------------------------------------------------------ behaviour

struct Case {
  Kind kind;
  const char* rule;   // the SPEC rule the case proves
  const char* patch;  // merge patch (YAML) on base_object(kind)
  bool valid;
};

// The sim's verdict: prune, default, validate (structural schema + CEL), as kube-apiserver does on create.
std::vector<sim::StatusCause> server_causes(Kind k, json obj) {
  static std::map<Kind, sim::ResourcePtr> cache;
  auto& r = cache[k];
  if (!r) {
    auto resources = sim::custom::crd_resources(load_crd(k));
    if (resources.empty()) return {{"Invalid", "no resource", ""}};
    r = resources[0];
  }
  sim::custom::prune(*r, obj);
  sim::custom::apply_defaults(*r, obj);
  return sim::custom::validate(*r, obj, nullptr);
}

constexpr Kind CAS = Kind::kClusterAutomationStrategy;
constexpr Kind AS = Kind::kAutomationStrategy;
constexpr Kind PP = Kind::kProactivePolicy;
constexpr Kind CPP = Kind::kClusterProactivePolicy;
constexpr Kind SP = Kind::kStaticPolicy;
constexpr Kind CSP = Kind::kClusterStaticPolicy;
constexpr Kind GRP = Kind::kGpuReactivePolicy;
constexpr Kind CGRP = Kind::kClusterGpuReactivePolicy;
constexpr Kind GCP = Kind::kGpuConsolidationPolicy;
constexpr Kind GC = Kind::kGlobalConfiguration;
constexpr Kind PE = Kind::kPolicyEvaluation;

// Every rule the schema can express, valid and invalid sides. Rules that only the validator checks are listed
// in ValidatorOnlyRules below.
const Case kCases[] = {
    // Base objects (the seed guide's YAML as written, SPEC §1).
    {CAS, "§1.1 seed", "", true},
    {AS, "§1.1", "", true},
    {CPP, "§1.2 seed", "", true},
    {PP, "§1.2", "", true},
    {SP, "§1.3", "", true},
    {CSP, "§1.3", "", true},
    {CGRP, "§1.4 seed", "", true},
    {GRP, "§1.4", "", true},
    {GCP, "§1.5 seed", "", true},
    {GC, "§1.6", "", true},
    {PE, "§1.7", "", true},
    // VAL-3 contract.
    {CAS, "VAL-3", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-04}}", false},
    {CAS, "VAL-3", "spec: {experimental: {gpuKaiContract: none}}", false},
    {CAS, "VAL-3", "spec: {experimental: null}", false},
    {CAS, "VAL-3", "spec: {experimental: {gpuKaiContract: null}}", false},
    {CAS, "VAL-3",
     "spec: {experimental: {gpuKaiContract: none}, kai: null, enablement: {overrideScheduler: none}}", true},
    {CAS, "VAL-3", "spec: {experimental: null, kai: null, enablement: {overrideScheduler: none}}", true},
    {CAS, "VAL-3", "spec: {experimental: null, enablement: {overrideScheduler: none}}",
     false},                                                         // spec.kai set
    {CAS, "VAL-3", "spec: {experimental: null, kai: null}", false},  // overrideScheduler kai
    {CGRP, "VAL-3", "spec: {experimental: null}", false},
    {CGRP, "VAL-3", "spec: {experimental: {gpuKaiContract: none}}", false},
    {GRP, "VAL-3", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-04}}", false},
    {GCP, "VAL-3", "spec: {experimental: null}", false},
    {GCP, "VAL-3", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-04}}", false},
    // Enums.
    {CAS, "VAL-4 enums", "spec: {enablement: {overrideScheduler: x}}", false},
    {CGRP, "VAL-4 enums", "spec: {metrics: {compute: {prometheus: {interpretation: halfGPU}}}}", false},
    {CGRP, "§1.4", "spec: {metrics: {compute: {prometheus: {interpretation: currentAllocation}}}}", true},
    {CPP, "VAL-4 enums", "spec: {scope: {namespaceSelector: {operator: Has}}}", false},
    {CPP, "§1.2", "spec: {scope: {workloadTypes: [StrimziPodSet, Model]}}", true},
    {CPP, "VAL-4 enums", "spec: {scope: {workloadTypes: [Pod]}}", false},
    {CPP, "VAL-4 lists", "spec: {scope: {workloadTypes: [Deployment, Job, Deployment]}}", false},
    {GC, "VAL-4 GlobalConfiguration", "spec: {kai: {memoryIsolation: HAMi}}", false},
    {GC, "§1.6", "spec: {kai: {memoryIsolation: HAMiCore}}", true},
    {GC, "CON-2a", "spec: {consolidation: {gpuMemoryReserve: {percent: 5, minimum: 1Gi}}}", true},
    {GC, "CON-2a", "spec: {consolidation: {gpuMemoryReserve: {percent: 0, minimum: 0}}}", true},
    {GC, "CON-2a", "spec: {consolidation: {gpuMemoryReserve: {percent: 60}}}", false},
    {GC, "CON-2a", "spec: {consolidation: {gpuMemoryReserve: {minimum: \"-1Mi\"}}}", false},
    {GC, "CON-2a", "spec: {consolidation: {gpuMemoryReserve: {minimum: lots}}}", false},
    {GC, "RPT-2", "spec: {report: {idle: {smPercent: 3, memoryPercent: 20, minimumGpus: \"0.5\"}}}", true},
    {GC, "RPT-2", "spec: {report: {idle: {smPercent: 101}}}", false},
    {GC, "RPT-2", "spec: {report: {idle: {minimumGpus: \"0\"}}}", false},
    {GC, "RPT-2", "spec: {report: {idle: {minimumGpus: lots}}}", false},
    {GC, "RPT-3", "spec: {cost: {gpuHourPrices: [{nodeSelector: {matchLabels: {a: b}}, price: \"2.50\"}, {price: \"0\", "
                  "currency: EUR}]}}", true},
    {GC, "RPT-3", "spec: {cost: {gpuHourPrices: [{price: \"-1\"}]}}", false},
    {GC, "RPT-3", "spec: {cost: {gpuHourPrices: [{price: \"2,50\"}]}}", false},
    {GC, "RPT-3", "spec: {cost: {gpuHourPrices: [{currency: USD}]}}", false},
    {GC, "RPT-3", "spec: {cost: {gpuHourPrices: [{price: \"1\", currency: \"\"}]}}", false},
    // Quantities, floor <= ceiling.
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {ceiling: abc}}}}", false},
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {ceiling: \"0\"}}}}", false},
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {ceiling: 0.5}}}}",
     false},  // unquoted decimal
    {CAS, "GPU-3", "spec: {enablement: {gpu: {requests: {ceiling: 2, floor: \"500m\"}}}}", true},
    {CAS, "GPU-3", "spec: {enablement: {gpu: {requests: {ceiling: \" 1\"}}}}", false},
    {CAS, "GPU-3", "spec: {enablement: {gpu: {requests: {ceiling: \"\"}}}}", false},
    {CAS, "GPU-3", "spec: {enablement: {gpu: {requests: {ceiling: \"1e3\", floor: \"+1\"}}}}", true},
    {CSP, "GPU-3", "spec: {resources: {containers: {app: {requests: {memory: 1.5Gi, cpu: \"0.1\"}}}}}", true},
    {SP, "GPU-3", "spec: {resources: {containers: {app: {requests: {gpu: 0.5}}}}}", false},  // unquoted decimal
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {floor: \"-1\"}}}}", false},
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {floor: \"0.5\", ceiling: \"0.25\"}}}}",
     false},
    {CAS, "VAL-4 quantities", "spec: {enablement: {gpu: {requests: {floor: \"0.25\", ceiling: \"0.25\"}}}}",
     true},
    {CAS, "VAL-4 quantities",
     "spec: {enablement: {gpu: {requests: {containers: {app: {floor: \"0.5\", ceiling: \"0.3\"}}}}}}", false},
    {CAS, "VAL-4 quantities", "spec: {enablement: {cpu: {limits: {floor: 2, ceiling: \"1500m\"}}}}", false},
    {CAS, "VAL-4 quantities", "spec: {enablement: {memory: {requests: {floor: 1Gi, ceiling: 2Gi}}}}", true},
    // Integers, minimums and ranges.
    {CAS, "VAL-4 ranges", "spec: {kai: {vllm: {gpuMemoryUtilizationBufferPercent: 101}}}", false},
    {CAS, "VAL-4 ranges", "spec: {kai: {vllm: {gpuMemoryUtilizationBufferPercent: 100}}}", true},
    {CAS, "VAL-4 minimums", "spec: {safetyChecks: {minCpuChangePercent: -1}}", false},
    {CPP, "VAL-4 minimums", "spec: {weight: -1}", false},
    {CPP, "VAL-4 minimums", "spec: {weight: 3000000000}", false},  // int32
    {CPP, "VAL-4 minimums", "spec: {safetyChecks: {maxAnalysisAgeDays: 0}}", false},
    {CGRP, "VAL-4 minimums", "spec: {metrics: {compute: {upsize: {thresholdPercent: 0}}}}", false},
    {CGRP, "VAL-4 minimums", "spec: {metrics: {memory: {upsize: {maxPercent: 0}}}}", false},
    {CGRP, "VAL-4 minimums", "spec: {metrics: {memory: {scaleBack: {headroomPercent: -5}}}}", false},
    {CGRP, "VAL-4 minimums", "spec: {metrics: {memory: {scaleBack: {thresholdPercent: 0}}}}", false},
    {GCP, "VAL-4 ranges", "spec: {utilizationThresholdPercent: 0}", false},
    {GCP, "VAL-4 ranges", "spec: {utilizationThresholdPercent: 101}", false},
    {GCP, "VAL-4 ranges", "spec: {utilizationThresholdPercent: 100}", true},
    {GC, "VAL-4 ranges", "spec: {proactive: {headroomPercent: 101}}", false},
    {GC, "§1.6", "spec: {webhookHealth: {failureThreshold: 0}}", false},
    {CGRP, "type", "spec: {weight: \"1\"}", false},
    {CGRP, "type", "spec: {weight: 1.5}", false},
    // Durations.
    {CGRP, "VAL-4 durations", "spec: {minPodMetricsAge: 30s}", false},
    {CGRP, "VAL-4 durations", "spec: {minPodMetricsAge: 0s}", true},
    {CGRP, "VAL-4 durations", "spec: {minPodMetricsAge: 1m}", true},
    {CGRP, "VAL-4 durations", "spec: {minPodMetricsAge: 10 minutes}", false},
    {CGRP, "VAL-4 durations", "spec: {metrics: {compute: {upsize: {metricsWindow: 59s}}}}", false},
    {CGRP, "VAL-4 durations", "spec: {metrics: {compute: {scaleBack: {metricsWindow: 1h30m}}}}", true},
    {CGRP, "VAL-4 durations", "spec: {metrics: {compute: {scaleBack: {metricsWindow: 1d}}}}", false},
    {GCP, "VAL-4 durations", "spec: {requeueAfter: 500ms}", false},
    {GCP, "VAL-4 durations", "spec: {requeueAfter: 1s}", true},
    {CAS, "VAL-4 durations", "spec: {safetyChecks: {resizeRetryInterval: 0s}}", false},
    {CAS, "VAL-4 durations", "spec: {safetyChecks: {minReadyDuration: -1s}}", false},
    {CAS, "VAL-4 durations", "spec: {safetyChecks: {minReadyDuration: 0s}}", true},
    {GC, "VAL-4 durations", "spec: {gpuReactiveCheckInterval: 30s}", false},
    {GC, "VAL-4 durations", "spec: {recommendationReloadInterval: 59s}", false},
    {GC, "VAL-4 durations", "spec: {webhookOwnerResolutionRetryTimeout: 6s}", false},
    {GC, "VAL-4 durations", "spec: {webhookOwnerResolutionRetryTimeout: 0s}", false},
    {GC, "VAL-4 durations", "spec: {webhookOwnerResolutionRetryTimeout: 5s}", true},
    {GC, "VAL-4 durations", "spec: {prometheus: {requestTimeout: 0s}}", false},
    {GC, "VAL-4 durations", "spec: {webhookHealth: {transitionCheckInterval: 100ms}}", false},
    // Required.
    {CPP, "VAL-4 required", "spec: {automationStrategyRef: null}", false},
    {CPP, "VAL-4 required", "spec: {automationStrategyRef: {name: \"\"}}", false},
    {CPP, "VAL-4 required", "spec: {scope: null}", false},
    {PP, "§1.2", "spec: {scope: null}", true},
    {CPP, "VAL-4 required", "spec: {scope: {namespaceSelector: null}}", false},
    {CPP, "VAL-4 lists", "spec: {scope: {namespaceSelector: {values: []}}}", false},
    {CSP, "VAL-4 required", "spec: {scope: null}", false},
    {CGRP, "VAL-4 required", "spec: {metrics: {memory: null}}", false},
    {CGRP, "VAL-4 required", "spec: {metrics: {compute: {prometheus: {metric: null}}}}", false},
    {CGRP, "VAL-4 required", "spec: {metrics: {compute: {prometheus: {podLabel: null}}}}", false},
    {GCP, "VAL-4 required", "spec: {nodeSelector: null}", false},
    {GC, "VAL-4 GlobalConfiguration", "spec: {proactive: {recommendationsConfigMap: {namespace: kubex}}}",
     false},
    {GC, "PRO-6", "spec: {proactive: {recommendationsConfigMap: {namespace: kubex, name: recs}}}", true},
    {PE, "§1.7", "spec: {precedence: [{type: StaticPolicy}]}", false},
    // Static GPU and resource keys.
    {SP, "KAI-2 burst limit", "spec: {resources: {containers: {app: {limits: {gpu: \"1\"}}}}}", true},
    {SP, "KAI-2 burst limit", "spec: {resources: {containers: {app: {requests: {gpu: \"0.3\"}, limits: {gpu: \"0.63\"}}}}}",
     true},
    {SP, "KAI-2 burst limit", "spec: {resources: {containers: {app: {limits: {gpu: \"0\"}}}}}", false},
    {CAS, "KAI-2 fractionLimit", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-07}, kai: {fractionLimit: {enabled: true, headroomPercent: 50, ceiling: \"0.9\"}}}",
     true},
    {CAS, "KAI-2 fractionLimit", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-07}, kai: {fractionLimit: {ceiling: \"1.5\"}}}", false},
    {CAS, "KAI-2 fractionLimit", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-07}, kai: {fractionLimit: {ceiling: \"0\"}}}", false},
    {CAS, "KAI-2 fractionLimit", "spec: {experimental: {gpuKaiContract: v1alpha1-2026-07}, kai: {fractionLimit: {headroomPercent: 1001}}}", false},
    {GC, "KAI-1 mode", "spec: {kai: {gpuSharingMode: NvFractions}}", true},
    {GC, "KAI-1 mode", "spec: {kai: {gpuSharingMode: Fractions}}", false},
    {SP, "VAL-4 static GPU", "spec: {resources: {containers: {app: {requests: {gpu: \"0\"}}}}}", false},
    {SP, "VAL-4 static GPU", "spec: {resources: {containers: {app: {requests: {nvidia.com/gpu: 1}}}}}",
     false},
    {SP, "VAL-4 quantities", "spec: {resources: {containers: {app: {requests: {cpu: lots}}}}}", false},
    {CSP, "VAL-4 static GPU", "spec: {resources: {containers: {\"*\": {requests: {gpu: 2}}}}}", true},
    // Patterns.
    {CGRP, "VAL-4 patterns", "spec: {metrics: {compute: {prometheus: {metric: 1bad}}}}", false},
    {CGRP, "VAL-4 patterns", "spec: {metrics: {compute: {prometheus: {metric: \"job:gpu_util:avg\"}}}}",
     true},
    {CGRP, "VAL-4 patterns", "spec: {metrics: {memory: {prometheus: {containerLabel: my-label}}}}", false},
    {CAS, "VAL-4 patterns", "spec: {kai: {queue: My_Queue}}", false},
    {CAS, "VAL-4 patterns", "spec: {kai: {queue: team-a-queue}}", true},
    {CAS, "VAL-4 patterns", "spec: {scheduling: {inclusionWindows: [{start: \"9:00\", end: \"17:00\"}]}}",
     false},
    {CAS, "VAL-4 patterns", "spec: {scheduling: {inclusionWindows: [{start: \"09:00\", end: \"09:00\"}]}}",
     false},
    {CAS, "VAL-4 patterns",
     "spec: {scheduling: {exclusionWindows: [{start: \"22:00\", end: \"24:00\", weekdays: [Sat, Sunday]}]}}",
     true},
    {CAS, "§1.1",
     "spec: {scheduling: {exclusionWindows: [{start: \"22:00\", end: \"24:00\", weekdays: [Caturday]}]}}",
     false},
    {CAS, "§1.1", "spec: {safetyChecks: {nodeCpuHeadroom: \"15%\", nodeMemoryHeadroom: 1Gi}}", true},
    {CAS, "§1.1", "spec: {safetyChecks: {nodeCpuHeadroom: \"lots\"}}", false},
    {GC, "VAL-4 GlobalConfiguration", "spec: {prometheus: {url: \"prometheus:9090\"}}", false},
    {GC, "VAL-4 GlobalConfiguration", "spec: {prometheus: {url: \"https://prom.example.com:9090/prefix\"}}",
     true},
    // Selectors.
    {GCP, "VAL-4 selectors", "spec: {nodeSelector: {matchExpressions: [{key: pool, operator: In}]}}", false},
    {GCP, "VAL-4 selectors",
     "spec: {nodeSelector: {matchExpressions: [{key: pool, operator: Exists, values: [a]}]}}", false},
    {GCP, "CON-1",
     "spec: {nodeSelector: {matchExpressions: [{key: pool, operator: In, values: [\"t4-*\"]}]}}", true},
    {CPP, "VAL-4 selectors",
     "spec: {scope: {labelSelector: {matchExpressions: [{key: app, operator: NotIn}]}}}", false},
    // Lengths and non-empty strings.
    {CAS, "§1.1", "spec: {kai: {queue: a123456789012345678901234567890123456789012345678901234567890123}}",
     false},
    {CAS, "§1.1",
     "spec: {scheduling: {inclusionWindows: [{start: \"01:00\", end: \"02:00\", timezone: "
     "Abcdefghijklmnopqrstuvwxyz/Abcdefghijklmnopqrstuvwxyz/Abcdefghijklmn}]}}",
     false},
    {CAS, "§1.1", "spec: {scheduling: {inclusionWindows: [{start: \"01:00\"}]}}", false},
    {GCP, "VAL-4 selectors", "spec: {nodeSelector: {matchExpressions: [{key: \"\", operator: Exists}]}}",
     false},
    {GC, "§1.6", "spec: {kai: {schedulerName: \"\"}}", false},
    {GC, "PRO-6", "spec: {proactive: {recommendationsConfigMap: {namespace: kubex, name: \"\"}}}", false},
    {PE, "§1.7", "spec: {precedence: [{type: \"\", priority: 1}]}", false},
    {CPP, "§1.2", "spec: {scope: {namespaceSelector: {values: [1]}}}", false},
    // Singletons (API-4).
    {GC, "VAL-4 singletons", "metadata: {name: other}", false},
    {PE, "VAL-4 singletons", "metadata: {name: other}", false},
    {PE, "VAL-4 singletons",
     "spec: {precedence: [{type: StaticPolicy, priority: 1}, {type: StaticPolicy, priority: 2}]}", false},
    {PE, "VAL-2", "spec: {precedence: [{type: RollbackPolicy, priority: 5}]}", true},
    {PE, "§1.7", "spec: {precedence: [{type: StaticPolicy, priority: -1}]}", false},
};

TEST(BehaviouralParity, ValidatorAndCrdSchemaAgreeOnEveryRuleTheSchemaExpresses) {  // API-2
  for (const auto& c : kCases) {
    json obj = patched(c.kind, c.patch);
    ValidationReport engine = validate(c.kind, obj);
    auto server = server_causes(c.kind, obj);
    std::string server_text;
    for (const auto& s : server) server_text += "\n  " + s.message;
    const std::string what = std::string(info(c.kind).name) + " [" + c.rule + "] " + c.patch;
    EXPECT_EQ(engine.ok(), c.valid) << what << "\n  validator: " << engine.message();
    EXPECT_EQ(server.empty(), c.valid) << what << "\n  CRD schema:" << server_text;
  }
}

// ------------------------------------------------------------------------------------------------ messages

// API-2, VAL-1, VAL-4: a bad object's first `kubectl apply` (webhook down) shows the validator's errors. Each
// validator error `<path>: <message>` is one API-server error whose field is <path> and whose detail is
// <message>, after the prefix Kubernetes itself inserts for the rule's reason ("Forbidden: ", "Required
// value: "). Below a container-name map (where CEL would print `containers[app]`) the error is on the map
// and its detail lists the validator's errors, `<path>: <message>` joined with "; ". Nothing else is
// printed: no OpenAPI wording, no `Invalid value: "object":`, and no "some validation rules were not
// checked" line, so cross-field errors show together with the simple ones.
struct ServerLine {
  std::string field;
  std::string detail;  // the text after the reason prefix; empty when the prefix is not a VAL-4 one
};

ServerLine server_line(const sim::StatusCause& c) {
  std::string body = c.message;
  if (body.starts_with(c.field + ": ")) body = body.substr(c.field.size() + 2);
  for (const char* prefix : {"Forbidden: ", "Required value: "}) {
    if (body.starts_with(prefix)) return {c.field, body.substr(std::string(prefix).size())};
  }
  return {c.field, ""};
}

// Empty when the server's errors are exactly the validator's (see above); else what differs.
std::string message_mismatch(const ValidationReport& engine, const std::vector<sim::StatusCause>& server) {
  std::vector<common::Error> expected = engine.errors.items();
  std::vector<bool> seen(expected.size(), false);
  std::string problems;
  for (const auto& cause : server) {
    ServerLine line = server_line(cause);
    bool matched = false;
    for (std::size_t i = 0; i < expected.size() && !matched && !line.detail.empty(); ++i) {
      if (!seen[i] && expected[i].path == line.field && expected[i].message == line.detail) {
        seen[i] = matched = true;
      }
    }
    if (!matched && !line.detail.empty()) {  // a list of "<path>: <message>" below this field
      std::string rest = line.detail;
      std::vector<std::size_t> used;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const std::string item = expected[i].str();
        const bool below = expected[i].path.starts_with(line.field + ".") ||
                           expected[i].path.starts_with(line.field + "[");
        std::size_t at = rest.find(item);
        if (seen[i] || !below || at == std::string::npos) continue;
        rest.replace(at, item.size(), "");
        used.push_back(i);
      }
      std::string separators = rest;
      std::erase_if(separators, [](char ch) { return ch == ';' || ch == ' '; });
      if (!used.empty() && separators.empty()) {
        for (auto i : used) seen[i] = true;
        matched = true;
      }
    }
    if (!matched) problems += "\n  API server printed: " + cause.message;
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (!seen[i]) problems += "\n  not shown on the first apply: " + expected[i].str();
  }
  return problems;
}

// Invalid objects mixing kinds of errors: cross-field rules together with enum, required, minimum,
// pattern and duration errors (kube-apiserver skips CEL rules when an OpenAPI enum/required/size error
// exists, so these used to need a second apply), and errors below container-name maps.
const Case kMessageCases[] = {
    {CAS, "VAL-3 VAL-4",
     "spec: {experimental: {gpuKaiContract: none}, enablement: {overrideScheduler: kai, gpu: {requests: "
     "{floor: \"0.5\", ceiling: \"0.25\"}}, cpu: {limits: {floor: \"-1\", ceiling: \"-2\"}}}, "
     "safetyChecks: {resizeRetryInterval: 10 minutes, minReadyDuration: -1s, minCpuChangePercent: -1}}",
     false},
    {CAS, "VAL-4 enums",
     "spec: {enablement: {overrideScheduler: x, gpu: {requests: {ceiling: \"0\"}}}}",
     false},
    {AS, "VAL-3", "spec: {experimental: {gpuKaiContract: null}, kai: {queue: \"\"}}", false},
    {CAS, "VAL-4 quantities",
     "spec: {enablement: {gpu: {requests: {containers: {app: {floor: \"0.5\", ceiling: \"0.3\"}, web: "
     "{ceiling: \"0\", floor: abc}, ok: {floor: 0, ceiling: 1}}}}, memory: {limits: {containers: {db: "
     "{ceiling: lots}}}}}}",
     false},
    {CAS, "VAL-4 patterns",
     "spec: {kai: {queue: Bad_Queue, vllm: {gpuMemoryUtilizationBufferPercent: -1}}, scheduling: "
     "{inclusionWindows: [{start: \"25:00\", end: \"24:00\", weekdays: [Funday, Mon], name: "
     "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrst"
     "uvwxyzabcdefghijklmnopqrstuvwxyz}, {start: \"10:00\", end: \"10:00\"}, {end: \"11:00\"}]}}",
     false},
    {CAS, "§1.1",
     "spec: {scheduling: {exclusionWindows: [{start: \"01:00\", end: \"02:00\", weekdays: [Mon, Tue, "
     "Wed, Thu, Fri, Sat, Sun, Mon]}]}}",
     false},
    {CPP, "VAL-4 required lists enums",
     "spec: {automationStrategyRef: null, weight: -1, scope: {namespaceSelector: {operator: Has, "
     "values: []}, workloadTypes: [Job, Deployment, Job, Pod, Job], labelSelector: {matchExpressions: "
     "[{key: \"\", operator: Exists, values: [a]}, {operator: In}, {key: k, operator: Near, values: "
     "[b]}]}}, safetyChecks: {maxAnalysisAgeDays: 0}}",
     false},
    {CPP, "VAL-4 required", "spec: {scope: {namespaceSelector: {operator: null, values: null}}}", false},
    {CPP, "VAL-4 required", "spec: null", false},
    {SP, "VAL-4 static GPU",
     "spec: {automationStrategyRef: {name: \"\"}, weight: 3000000000, resources: {containers: {app: "
     "{requests: {cpu: \"-1\", gpu: \"0\", nvidia.com/gpu: 1, memory: 1Gi}, limits: {gpu: 1, memory: "
     "lots}}, \"*\": {limits: {cpu: x}}, web: {requests: {cpu: 100m}}}}}",
     false},
    {CSP, "VAL-4 required",
     "spec: {scope: null, resources: {containers: {app: {requests: {gpu: \"-0.5\"}}}}}",
     false},
    {CGRP, "VAL-3 VAL-4",
     "spec: {experimental: {gpuKaiContract: v1alpha1-2026-04}, minPodMetricsAge: 30s, metrics: {memory: "
     "null, compute: {prometheus: {metric: 1bad, podLabel: \"\", namespaceLabel: my-ns, interpretation: "
     "halfGPU}, upsize: {thresholdPercent: 0, metricsWindow: 10 minutes, maxPercent: 0}, scaleBack: "
     "{metricsWindow: 59s, headroomPercent: -1}}}}",
     false},
    {GRP, "VAL-3 VAL-4",
     "spec: {experimental: null, metrics: null, automationStrategyRef: {name: null}}",
     false},
    {CGRP, "VAL-4 required", "spec: {metrics: {compute: {prometheus: null}}}", false},
    {GCP, "VAL-3 VAL-4",
     "spec: {experimental: {gpuKaiContract: none}, nodeSelector: {matchExpressions: [{key: pool, "
     "operator: In}, {key: zone, operator: DoesNotExist, values: [a]}]}, utilizationThresholdPercent: "
     "0, requeueAfter: soon}",
     false},
    {GCP, "VAL-4 required",
     "spec: {experimental: {gpuKaiContract: v1alpha1-2026-07}, nodeSelector: null, requeueAfter: 500ms}",
     false},
    {GC, "VAL-4 GlobalConfiguration",
     "metadata: {name: other}\nspec: {prometheus: {url: \"ftp://x\", requestTimeout: forever}, kai: "
     "{memoryIsolation: HAMi, schedulerName: \"\"}, proactive: {recommendationsConfigMap: {name: \"\"}, "
     "headroomPercent: 101}, gpuReactiveCheckInterval: 59s, webhookOwnerResolutionRetryTimeout: 6s, "
     "webhookHealth: {failureThreshold: 0, successThreshold: -3, transitionCheckInterval: 0s}}",
     false},
    {PE, "VAL-4 singletons",
     "metadata: {name: other}\nspec: {precedence: [{type: StaticPolicy, priority: 1}, {type: Job}, "
     "{type: StaticPolicy, priority: -1}, {type: \"\", priority: 2}, {type: Job, priority: 3}, {type: "
     "StaticPolicy, priority: 4}]}",
     false},
};

// Type errors (a string where an integer belongs, a float quantity) are reported by the OpenAPI `type`
// check, which no rule can replace: kube-apiserver prints `<path>: Invalid value: ...: <path> in body must
// be of type integer: "string"` and then skips the rules. The path is still the validator's.
bool is_type_error_case(const Case& c) {
  const std::string patch = c.patch;
  return patch.find("weight: \"1\"") != std::string::npos || patch.find("weight: 1.5") != std::string::npos ||
         patch.find("ceiling: 0.5") != std::string::npos || patch.find("gpu: 0.5}") != std::string::npos ||
         patch.find("values: [1]") != std::string::npos;
}

TEST(MessageParity, FirstApplyShowsEveryValidatorErrorWithItsPathAndMessage) {  // API-2, VAL-1, VAL-4
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  cases.insert(cases.end(), std::begin(kMessageCases), std::end(kMessageCases));
  int compared = 0;
  for (const auto& c : cases) {
    if (c.valid) continue;
    json obj = patched(c.kind, c.patch);
    ValidationReport engine = validate(c.kind, obj);
    auto server = server_causes(c.kind, obj);
    const std::string what = std::string(info(c.kind).name) + " [" + c.rule + "] " + c.patch;
    EXPECT_FALSE(engine.ok()) << what;
    EXPECT_FALSE(server.empty()) << what;
    if (is_type_error_case(c)) {
      for (const auto& e : engine.errors.items()) {
        EXPECT_TRUE(std::any_of(server.begin(), server.end(), [&](const auto& s) {
          return s.field == e.path && s.reason == "FieldValueTypeInvalid";
        })) << what << ": no type error at " << e.path;
      }
      continue;
    }
    ++compared;
    EXPECT_EQ(message_mismatch(engine, server), "") << what << "\n  validator: " << engine.message();
  }
  EXPECT_GE(compared, 100);  // the tables above, minus the type-error cases
}

// The comparison itself: a wording difference, a missing error, an extra line and the blocking line fail it.
TEST(MessageParity, TheComparisonCatchesEveryDifference) {
  const std::string gpu_error = "gpu must not be set under limits; use requests.gpu";
  ValidationReport engine;
  engine.errors.add("spec.weight", "must be >= 0");
  engine.errors.add("spec.resources.containers.app.limits.gpu", gpu_error);
  const sim::StatusCause weight{"FieldValueForbidden", "spec.weight: Forbidden: must be >= 0", "spec.weight"};
  const sim::StatusCause gpu{
      "FieldValueForbidden",
      "spec.resources.containers: Forbidden: spec.resources.containers.app.limits.gpu: " + gpu_error,
      "spec.resources.containers"};
  EXPECT_EQ(message_mismatch(engine, {weight, gpu}), "");
  EXPECT_EQ(message_mismatch(engine, {gpu, weight}), "");
  const sim::StatusCause openapi{
      "FieldValueInvalid",
      "spec.weight: Invalid value: -1: spec.weight in body should be greater than or equal to 0",
      "spec.weight"};
  EXPECT_NE(message_mismatch(engine, {openapi, gpu}), "");
  EXPECT_NE(message_mismatch(engine, {weight}), "");
  const sim::StatusCause bracketed{"FieldValueForbidden",
                                   "spec.resources.containers[app].limits: Forbidden: " + gpu_error,
                                   "spec.resources.containers[app].limits"};
  EXPECT_NE(message_mismatch(engine, {weight, bracketed}), "");
  const sim::StatusCause noise{"FieldValueInvalid",
                               "<nil>: Invalid value: null: some validation rules were not checked because "
                               "the object was invalid; correct the existing errors to complete validation",
                               "<nil>"};
  EXPECT_NE(message_mismatch(engine, {weight, gpu, noise}), "");
}

// Rules the CRD schema cannot express (or that kube-apiserver handles by pruning, VAL-5). The validator
// rejects these; the API server accepts them. The validating webhook (and `kubex validate`) is where they are
// enforced.
// gen-crds.py BOUNDS (issue 16): a value beyond its schema bound is refused by the validator and the schema.
TEST(BehaviouralParity, BoundsAreCheckedByBoth) {
  const std::string long_name(257, 'a');
  std::string many = "[";
  for (int i = 0; i < 65; ++i) many += std::string(i ? ", " : "") + "{key: k" + std::to_string(i) + ", operator: Exists}";
  many += "]";
  struct Case {
    Kind kind;
    std::string patch, path, message;
  };
  const Case cases[] = {
      {Kind::kStaticPolicy, "spec: {automationStrategyRef: {name: " + long_name + "}}",
       "spec.automationStrategyRef.name", "must be at most 256 characters"},
      {Kind::kStaticPolicy, "spec: {scope: {labelSelector: {matchExpressions: " + many + "}}}",
       "spec.scope.labelSelector.matchExpressions", "must have at most 64 items"},
  };
  for (const auto& c : cases) {
    json obj = patched(c.kind, c.patch);
    ValidationReport engine = validate(c.kind, obj);
    bool found = false;
    for (const auto& e : engine.errors.items()) found = found || (e.path == c.path && e.message == c.message);
    EXPECT_TRUE(found) << c.path << ": " << engine.message();
    EXPECT_FALSE(server_causes(c.kind, obj).empty()) << c.path;
  }
}

TEST(BehaviouralParity, ValidatorOnlyRules) {
  struct Only {
    Kind kind;
    const char* why;
    const char* patch;
  };
  const Only only[] = {
      // Label key/value syntax of selectors (qualified names): not expressible in a structural schema.
      {CPP, "label key syntax", "spec: {scope: {labelSelector: {matchLabels: {\"bad key!\": x}}}}"},
      {GCP, "label value syntax", "spec: {nodeSelector: {matchLabels: {pool: \"no spaces\"}}}"},
      // namespaceSelector is not part of the namespaced kinds' schema: the API server prunes it (VAL-5).
      {PP, "namespaceSelector on a namespaced kind",
       "spec: {scope: {namespaceSelector: {operator: In, values: [a]}}}"},
      {GRP, "namespaceSelector on a namespaced kind",
       "spec: {scope: {namespaceSelector: {operator: In, values: [a]}}}"},
  };
  for (const auto& o : only) {
    json obj = patched(o.kind, o.patch);
    EXPECT_FALSE(validate(o.kind, obj).ok()) << o.why;
    EXPECT_TRUE(server_causes(o.kind, obj).empty())
        << o.why << " (now expressible in the schema? move it to kCases)";
  }
  // status is written by the engine through the status subresource: the schema types it, the validator (which
  // judges what users write) does not look at it.
  // Referential rules need the cluster, so neither side checks them here: the strategy named by
  // automationStrategyRef must exist and be Valid (SEL-4, OBS-1 StrategyNotFound/StrategyInvalid), a strategy
  // DELETE is denied while referenced (VAL-4 "strategy DELETE"), and spec.kai.queue should exist (VAL-2
  // warning).
}

}  // namespace
}  // namespace kubex::api
