#include "sim/apiserver/schema.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kubex::sim {
namespace {

using nlohmann::json;

// A trimmed-down ClusterGpuReactivePolicy openAPIV3Schema, plus a few fields exercising every keyword.
constexpr const char* kPolicySchema = R"json({
  "type": "object",
  "description": "ClusterGpuReactivePolicy resizes GPU fractions from observed usage.",
  "properties": {
    "apiVersion": {"type": "string"},
    "kind": {"type": "string"},
    "metadata": {"type": "object"},
    "spec": {
      "type": "object",
      "required": ["metrics"],
      "properties": {
        "replicas": {"type": "integer", "format": "int32"},
        "metrics": {
          "type": "object",
          "properties": {
            "metricsWindow": {"type": "string", "default": "10m"},
            "compute": {
              "type": "object",
              "properties": {
                "prometheus": {
                  "type": "object",
                  "properties": {
                    "address": {"type": "string"},
                    "interpretation": {"type": "string", "enum": ["fullGPU", "currentAllocation"], "default": "fullGPU"}
                  }
                },
                "upsize": {
                  "type": "object",
                  "properties": {
                    "thresholdPercent": {"type": "integer", "minimum": 1, "default": 120},
                    "cooldown": {"type": "string", "default": "5m"}
                  }
                }
              }
            }
          }
        },
        "kai": {
          "type": "object",
          "properties": {"queue": {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}}
        },
        "scope": {
          "type": "object",
          "properties": {
            "namespaceSelector": {
              "type": "object",
              "properties": {"values": {"type": "array", "minItems": 1, "items": {"type": "string"}}}
            }
          }
        },
        "precedence": {
          "type": "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["type"],
          "items": {
            "type": "object",
            "required": ["type"],
            "properties": {"type": {"type": "string"}, "weight": {"type": "integer", "default": 1}}
          }
        },
        "resources": {
          "type": "object",
          "additionalProperties": {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "x-kubernetes-int-or-string": true,
            "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"
          }
        },
        "pools": {
          "type": "object",
          "additionalProperties": {"type": "object", "properties": {"size": {"type": "integer", "default": 3}}}
        },
        "limits": {
          "type": "object",
          "default": {"bogus": true},
          "properties": {"maxGpus": {"type": "integer", "default": 8}}
        },
        "extra": {
          "type": "object",
          "x-kubernetes-preserve-unknown-fields": true,
          "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}
        },
        "podTemplate": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
        "tags": {"type": "array", "maxItems": 3, "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "owner": {"type": "string", "nullable": true},
        "x": {"type": "string", "minLength": 1},
        "name": {"type": "string", "maxLength": 5},
        "lastRun": {"type": "string", "format": "date-time"},
        "ratio": {"type": "number", "maximum": 1.5, "exclusiveMinimum": true, "minimum": 0},
        "big": {"type": "number", "maximum": 1000000},
        "step": {"type": "integer", "multipleOf": 5},
        "unique": {"type": "array", "uniqueItems": true, "items": {"type": "integer"}},
        "labels": {"type": "object", "minProperties": 1, "maxProperties": 2, "additionalProperties": {"type": "string"}},
        "strict": {"type": "object", "additionalProperties": false},
        "mode": {"type": "string", "oneOf": [{"enum": ["a", "b"]}, {"enum": ["b", "c"]}]},
        "window": {"type": "object", "allOf": [{"required": ["from"]}, {"required": ["to"]}], "not": {"required": ["never"]},
                   "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "never": {"type": "string"}}}
      }
    }
  }
})json";

StructuralSchema policy_schema() {
  auto s = StructuralSchema::compile(json::parse(kPolicySchema));
  if (!s) ADD_FAILURE() << s.error().str();
  return *s;
}

json valid_policy() {
  return json::parse(R"json({
    "apiVersion": "rightsizing.kubex.ai/v1alpha1",
    "kind": "ClusterGpuReactivePolicy",
    "metadata": {"name": "p"},
    "spec": {"metrics": {"compute": {"upsize": {"thresholdPercent": 110}}}}
  })json");
}

std::vector<std::string> messages(const std::vector<Cause>& causes) {
  std::vector<std::string> out;
  for (const auto& c : causes) out.push_back(c.message);
  return out;
}

// The schema errors of one spec fragment, with everything else valid.
std::vector<Cause> validate_spec(const StructuralSchema& s, const json& spec_patch) {
  json obj = valid_policy();
  obj["spec"].merge_patch(spec_patch);
  return s.validate(obj);
}

std::string single_message(const StructuralSchema& s, const char* spec_patch) {
  auto causes = validate_spec(s, json::parse(spec_patch));
  if (causes.size() != 1) {
    std::string all;
    for (const auto& m : messages(causes)) all += "\n  " + m;
    ADD_FAILURE() << "expected exactly one error for " << spec_patch << ", got " << causes.size() << ":"
                  << all;
    return {};
  }
  return causes[0].message;
}

// ---------------------------------------------------------------------------------------------------------
// Compilation
// ---------------------------------------------------------------------------------------------------------

TEST(StructuralSchemaCompile, AcceptsRealisticSchemaAndKeepsRaw) {
  auto s = StructuralSchema::compile(json::parse(kPolicySchema));
  ASSERT_TRUE(s) << s.error().str();
  EXPECT_EQ(s->raw()["description"], "ClusterGpuReactivePolicy resizes GPU fractions from observed usage.");
  EXPECT_EQ(s->raw(), json::parse(kPolicySchema));
  EXPECT_FALSE(s->has_validation_rules());
}

TEST(StructuralSchemaCompile, ReportsMissingTypeWithCrdPath) {
  json schema = {{"type", "object"}, {"properties", {{"spec", {{"properties", json::object()}}}}}};
  std::vector<Cause> all;
  auto s = StructuralSchema::compile(schema, "spec.versions[0].schema.openAPIV3Schema", &all);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().path, "spec.versions[0].schema.openAPIV3Schema.properties[spec].type");
  EXPECT_EQ(
      s.error().str(),
      "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for "
      "specified object fields");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].reason, "FieldValueRequired");
}

TEST(StructuralSchemaCompile, ReportsEveryStructuralProblem) {
  json schema = json::parse(R"json({
    "type": "object",
    "properties": {
      "a": {"type": "array"},
      "b": {"type": "strin"},
      "c": {"type": "string", "pattern": "([a-z"},
      "d": {"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
      "e": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
      "f": {"items": {"type": "string"}}
    }
  })json");
  std::vector<Cause> all;
  auto s = StructuralSchema::compile(schema, "openAPIV3Schema", &all);
  ASSERT_FALSE(s);
  std::vector<std::string> fields;
  for (const auto& c : all) fields.push_back(c.field);
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "openAPIV3Schema.properties[a].items",
                        "openAPIV3Schema.properties[b].type",
                        "openAPIV3Schema.properties[c].pattern",
                        "openAPIV3Schema.properties[d].x-kubernetes-list-map-keys",
                        "openAPIV3Schema.properties[e].additionalProperties",
                        "openAPIV3Schema.properties[f].type",
                    }));
  EXPECT_EQ(all[0].message, "openAPIV3Schema.properties[a].items: Required value: must be specified");
  EXPECT_EQ(all[1].message,
            "openAPIV3Schema.properties[b].type: Unsupported value: \"strin\": supported values: \"array\", "
            "\"boolean\", \"integer\", \"number\", \"object\", \"string\"");
  EXPECT_EQ(
      all[2].message.rfind("openAPIV3Schema.properties[c].pattern: Invalid value: \"([a-z\": must be a valid "
                           "regular expression, but isn't: ",
                           0),
      0u)
      << all[2].message;
  EXPECT_EQ(all[3].message,
            "openAPIV3Schema.properties[d].x-kubernetes-list-map-keys: Required value: must not be empty if "
            "x-kubernetes-list-type is map");
  EXPECT_EQ(all[4].message,
            "openAPIV3Schema.properties[e].additionalProperties: Forbidden: additionalProperties and "
            "properties are "
            "mutual exclusive");
  // The Error lists them all.
  EXPECT_NE(
      s.error().message.find("properties[f].type: Required value: must not be empty for specified object"),
      std::string::npos)
      << s.error().message;
}

TEST(StructuralSchemaCompile, RejectsRootProblemsAndEmbeddedWithoutObjectType) {
  std::vector<Cause> all;
  auto s = StructuralSchema::compile(
      json::parse(
          R"({"type": "string", "properties": {"r": {"type": "string", "x-kubernetes-embedded-resource": true}}})"),
      "openAPIV3Schema", &all);
  ASSERT_FALSE(s);
  EXPECT_EQ(messages(all),
            (std::vector<std::string>{
                "openAPIV3Schema.properties[r].type: Invalid value: \"string\": must be object if "
                "x-kubernetes-embedded-resource is true",
                "openAPIV3Schema.properties[r].properties: Required value: must not be empty if "
                "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
                "openAPIV3Schema.type: Invalid value: \"string\": must be object at the root",
            }));
}

TEST(StructuralSchemaCompile, ValidatesDefaultsAgainstTheirSchema) {
  std::vector<Cause> all;
  auto s = StructuralSchema::compile(
      json::parse(
          R"({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "default": 0}}})"),
      "openAPIV3Schema", &all);
  ASSERT_FALSE(s);
  // kube-apiserver validates the default as a document of its own: its path is empty, hence " in body".
  EXPECT_EQ(messages(all),
            (std::vector<std::string>{"openAPIV3Schema.properties[n].default: Invalid value: 0:  in "
                                      "body should be greater than or equal to 1"}));
}

TEST(StructuralSchemaCompile, AcceptsGoStyleCaseInsensitivePatternAndRejectsBackReferences) {
  auto ok = StructuralSchema::compile(
      json::parse(R"({"type": "object", "properties": {"p": {"type": "string", "pattern": "(?i)^abc$"}}})"));
  ASSERT_TRUE(ok) << ok.error().str();
  EXPECT_TRUE(ok->validate(json{{"p", "ABC"}}).empty());
  EXPECT_EQ(ok->validate(json{{"p", "abd"}}).size(), 1u);

  auto bad = StructuralSchema::compile(
      json::parse(R"({"type": "object", "properties": {"p": {"type": "string", "pattern": "(a)\\1"}}})"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().path, "openAPIV3Schema.properties[p].pattern");
}

// ---------------------------------------------------------------------------------------------------------
// Pruning
// ---------------------------------------------------------------------------------------------------------

TEST(StructuralSchemaPrune, RemovesUnknownFieldsAndReportsSortedPaths) {
  auto s = policy_schema();
  json obj = json::parse(R"json({
    "apiVersion": "rightsizing.kubex.ai/v1alpha1",
    "kind": "ClusterGpuReactivePolicy",
    "metadata": {"name": "p", "unknownMeta": 1},
    "foo": 1,
    "spec": {
      "metrics": {"compute": {"upsize": {"thresholdPercent": 110, "bogus": "x"}}},
      "foo": {"nested": true},
      "metrics-x": 1,
      "precedence": [{"type": "A", "bar": 1}, {"type": "B"}, {"type": "C", "bar": 3}, {"type": "D"}, {"type": "E"},
                     {"type": "F"}, {"type": "G"}, {"type": "H"}, {"type": "I"}, {"type": "J"}, {"type": "K", "bar": 2}],
      "extra": {"anything": {"goes": 1}, "known": {"a": "kept", "b": "pruned"}},
      "podTemplate": {"apiVersion": "v1", "kind": "Pod", "metadata": {"x": 1}, "spec": {"containers": []}},
      "pools": {"gpu": {"size": 2, "color": "red"}},
      "resources": {"gpu": "1"}
    }
  })json");
  auto removed = s.prune(obj);
  // Sorted bytewise like kube-apiserver, not in traversal order: "-" < "." and "[10]" < "[2]".
  EXPECT_EQ(removed, (std::vector<std::string>{
                         "foo",
                         "spec.extra.known.b",
                         "spec.foo",
                         "spec.metrics-x",
                         "spec.metrics.compute.upsize.bogus",
                         "spec.pools.gpu.color",
                         "spec.precedence[0].bar",
                         "spec.precedence[10].bar",
                         "spec.precedence[2].bar",
                     }));
  EXPECT_FALSE(obj.contains("foo"));
  EXPECT_EQ(obj["metadata"], json::parse(R"({"name": "p", "unknownMeta": 1})"));  // the server's business
  EXPECT_EQ(obj["spec"]["extra"], json::parse(R"({"anything": {"goes": 1}, "known": {"a": "kept"}})"));
  EXPECT_EQ(obj["spec"]["podTemplate"]["spec"], json::parse(R"({"containers": []})"));
  EXPECT_EQ(obj["spec"]["pools"], json::parse(R"({"gpu": {"size": 2}})"));
  EXPECT_EQ(obj["spec"]["precedence"][0], json::parse(R"({"type": "A"})"));
}

TEST(StructuralSchemaPrune, ObjectsWithoutPropertiesEmbeddedResourcesAndAdditionalPropertiesTrue) {
  auto s = StructuralSchema::compile(json::parse(R"json({
    "type": "object",
    "properties": {
      "opaque": {"type": "object"},
      "anyKeys": {"type": "object", "additionalProperties": true},
      "embedded": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}}
    }
  })json"));
  ASSERT_TRUE(s) << s.error().str();
  json obj = json::parse(R"({"opaque": {"a": 1}, "anyKeys": {"k": {"x": 1}, "s": "v"},
                             "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "status": {}}})");
  // additionalProperties: true keeps any key but, having no schema for the values, prunes inside them.
  EXPECT_EQ(s->prune(obj), (std::vector<std::string>{"anyKeys.k.x", "embedded.status", "opaque.a"}));
  EXPECT_EQ(obj, json::parse(R"({"opaque": {}, "anyKeys": {"k": {}, "s": "v"},
                                 "embedded": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}})"));
}

// ---------------------------------------------------------------------------------------------------------
// Defaulting
// ---------------------------------------------------------------------------------------------------------

TEST(StructuralSchemaDefaults, FillsAbsentFieldsOnlyWhereTheParentExists) {
  auto s = policy_schema();
  json obj = {{"spec", {{"metrics", json::object()}}}};
  s.apply_defaults(obj);
  EXPECT_EQ(obj["spec"]["metrics"], json::parse(R"({"metricsWindow": "10m"})"));  // no compute created
  EXPECT_FALSE(obj["spec"].contains("kai"));

  json obj2 = {{"spec", {{"metrics", {{"compute", {{"upsize", json::object()}}}}}}}};
  s.apply_defaults(obj2);
  EXPECT_EQ(
      obj2["spec"]["metrics"]["compute"],
      json::parse(R"({"upsize": {"thresholdPercent": 120, "cooldown": "5m"}})"));  // no prometheus created
}

TEST(StructuralSchemaDefaults, ObjectDefaultCreatesTheObjectPrunedAndDefaultedInside) {
  auto s = policy_schema();
  json obj = {{"spec", {{"metrics", json::object()}}}};
  s.apply_defaults(obj);
  // default {"bogus": true} is pruned to {} at compile time, then maxGpus is defaulted inside it.
  EXPECT_EQ(obj["spec"]["limits"], json::parse(R"({"maxGpus": 8})"));
}

TEST(StructuralSchemaDefaults, DefaultsInsideListItemsAndMapValues) {
  auto s = policy_schema();
  json obj = json::parse(R"({"spec": {"precedence": [{"type": "A"}, {"type": "B", "weight": 5}],
                                     "pools": {"a": {}, "b": {"size": 1}}}})");
  s.apply_defaults(obj);
  EXPECT_EQ(obj["spec"]["precedence"],
            json::parse(R"([{"type": "A", "weight": 1}, {"type": "B", "weight": 5}])"));
  EXPECT_EQ(obj["spec"]["pools"], json::parse(R"({"a": {"size": 3}, "b": {"size": 1}})"));
  EXPECT_EQ(obj["spec"]["limits"], json::parse(R"({"maxGpus": 8})"));
}

TEST(StructuralSchemaDefaults, NullsAreDefaultedDroppedOrKeptByNullability) {
  auto s = policy_schema();
  json obj =
      json::parse(R"({"spec": {"metrics": {"metricsWindow": null}, "kai": {"queue": null}, "owner": null}})");
  s.apply_defaults(obj);
  EXPECT_EQ(obj["spec"]["metrics"]["metricsWindow"], "10m");  // non-nullable null with a default
  EXPECT_EQ(obj["spec"]["kai"], json::object());              // non-nullable null without a default
  ASSERT_TRUE(obj["spec"].contains("owner"));                 // nullable
  EXPECT_TRUE(obj["spec"]["owner"].is_null());
  EXPECT_TRUE(s.validate(obj).empty()) << messages(s.validate(obj)).front();
}

// ---------------------------------------------------------------------------------------------------------
// Validation: the messages users see from kube-apiserver
// ---------------------------------------------------------------------------------------------------------

TEST(StructuralSchemaValidate, ValidPolicyHasNoErrors) {
  auto s = policy_schema();
  json obj = valid_policy();
  obj["spec"].merge_patch(json::parse(R"json({
    "replicas": 3, "kai": {"queue": "team-a"}, "scope": {"namespaceSelector": {"values": ["a"]}},
    "precedence": [{"type": "StaticPolicy"}, {"type": "Other"}], "resources": {"gpu": 2, "mem": "500Mi", "cpu": "1.5"},
    "tags": ["a", "b"], "owner": null, "x": "y", "name": "éééé\u00e9", "lastRun": "2024-02-29T10:00:00.123+01:00",
    "ratio": 1.5, "big": 1000000, "step": 15, "unique": [1, 2], "labels": {"a": "b"}, "strict": {}, "mode": "a",
    "window": {"from": "a", "to": "b"}, "podTemplate": {"apiVersion": "v1", "kind": "Pod"}
  })json"));
  auto causes = s.validate(obj);
  EXPECT_TRUE(causes.empty()) << messages(causes).front();
}

TEST(StructuralSchemaValidate, TypeMismatchNamesTheJsonType) {
  auto s = policy_schema();
  auto causes = validate_spec(s, json::parse(R"({"replicas": "string"})"));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(
      causes[0].message,
      "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"");
  EXPECT_EQ(causes[0].reason, "FieldValueTypeInvalid");
  EXPECT_EQ(causes[0].field, "spec.replicas");
  EXPECT_EQ(causes[0].bad_value, "\"string\"");
  EXPECT_EQ(causes[0].body(),
            "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"");
}

TEST(StructuralSchemaValidate, RequiredValue) {
  auto s = policy_schema();
  json obj = valid_policy();
  obj["spec"].erase("metrics");
  auto causes = s.validate(obj);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].message, "spec.metrics: Required value");
  EXPECT_EQ(causes[0].reason, "FieldValueRequired");
}

TEST(StructuralSchemaValidate, EnumListsSupportedValues) {
  auto s = policy_schema();
  auto causes = validate_spec(
      s, json::parse(R"({"metrics": {"compute": {"prometheus": {"interpretation": "halfGPU"}}}})"));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(
      causes[0].message,
      "spec.metrics.compute.prometheus.interpretation: Unsupported value: \"halfGPU\": supported values: "
      "\"fullGPU\", \"currentAllocation\"");
  EXPECT_EQ(causes[0].reason, "FieldValueNotSupported");
}

TEST(StructuralSchemaValidate, MinimumMaximumMultipleOf) {
  auto s = policy_schema();
  EXPECT_EQ(single_message(s, R"({"metrics": {"compute": {"upsize": {"thresholdPercent": 0}}}})"),
            "spec.metrics.compute.upsize.thresholdPercent: Invalid value: 0: "
            "spec.metrics.compute.upsize.thresholdPercent in body should be greater than or equal to 1");
  EXPECT_EQ(single_message(s, R"({"ratio": 2.25})"),
            "spec.ratio: Invalid value: 2.25: spec.ratio in body should be less than or equal to 1.5");
  EXPECT_EQ(single_message(s, R"({"ratio": 0})"),
            "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0");
  // Go prints floats with %v: exponent form from 1e6 on.
  EXPECT_EQ(single_message(s, R"({"big": 1234567.5})"),
            "spec.big: Invalid value: 1.2345675e+06: spec.big in body should be less than or equal to 1e+06");
  EXPECT_EQ(single_message(s, R"({"step": 7})"),
            "spec.step: Invalid value: 7: spec.step in body should be a multiple of 5");
}

TEST(StructuralSchemaValidate, PatternAndLengths) {
  auto s = policy_schema();
  EXPECT_EQ(single_message(s, R"({"kai": {"queue": "Bad_Queue"}})"),
            "spec.kai.queue: Invalid value: \"Bad_Queue\": spec.kai.queue in body should match "
            "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'");
  EXPECT_EQ(single_message(s, R"({"x": ""})"),
            "spec.x: Invalid value: \"\": spec.x in body should be at least 1 chars long");
  auto causes = validate_spec(s, json::parse(R"({"name": "abcdef"})"));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].message, "spec.name: Too long: may not be more than 5 bytes");
  EXPECT_EQ(causes[0].reason, "FieldValueTooLong");
  // Lengths count code points: 5 two-byte characters fit in maxLength 5, 6 do not.
  EXPECT_TRUE(validate_spec(s, json{{"name", "\u00e9\u00e9\u00e9\u00e9\u00e9"}}).empty());
  EXPECT_EQ(validate_spec(s, json{{"name", "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"}}).size(), 1u);
}

TEST(StructuralSchemaValidate, PatternOnHugeStringDoesNotExhaustTheStack) {
  auto s = policy_schema();
  std::string huge(300000, 'a');
  EXPECT_TRUE(validate_spec(s, json{{"kai", {{"queue", huge}}}}).empty());
  huge.back() = '_';
  EXPECT_EQ(validate_spec(s, json{{"kai", {{"queue", huge}}}}).size(), 1u);
}

TEST(StructuralSchemaValidate, ItemCounts) {
  auto s = policy_schema();
  EXPECT_EQ(
      single_message(s, R"({"scope": {"namespaceSelector": {"values": []}}})"),
      "spec.scope.namespaceSelector.values: Invalid value: 0: spec.scope.namespaceSelector.values in body "
      "should have at least 1 items");
  auto causes = validate_spec(s, json::parse(R"({"tags": ["a", "b", "c", "d"]})"));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].message, "spec.tags: Too many: 4: must have at most 3 items");
  EXPECT_EQ(causes[0].reason, "FieldValueTooMany");
  EXPECT_EQ(single_message(s, R"({"unique": [1, 2, 1]})"),
            "spec.unique: Invalid value: \"\": spec.unique in body shouldn't contain duplicates");
}

TEST(StructuralSchemaValidate, PropertyCountsAndForbiddenProperties) {
  auto s = policy_schema();
  EXPECT_EQ(single_message(s, R"({"labels": {}})"),
            "spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties");
  EXPECT_EQ(single_message(s, R"({"labels": {"a": "1", "b": "2", "c": "3"}})"),
            "spec.labels: Too many: 3: must have at most 2 items");
  EXPECT_EQ(
      single_message(s, R"({"labels": {"a": 1}})"),
      "spec.labels.a: Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\"");
  EXPECT_EQ(single_message(s, R"({"strict": {"zzz": 1}})"),
            "spec.strict: Invalid value: \"zzz\": spec.strict.zzz in body is a forbidden property");
}

TEST(StructuralSchemaValidate, ListTypeMapAndSetDuplicates) {
  auto s = policy_schema();
  auto causes = validate_spec(
      s, json::parse(R"({"precedence": [{"type": "StaticPolicy"}, {"type": "StaticPolicy", "weight": 2}]})"));
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].message, "spec.precedence[1]: Duplicate value: {\"type\":\"StaticPolicy\"}");
  EXPECT_EQ(causes[0].reason, "FieldValueDuplicate");

  // Each repeated value is reported once, at its first repetition.
  EXPECT_EQ(messages(validate_spec(s, json::parse(R"({"tags": ["a", "b", "a"]})"))),
            (std::vector<std::string>{"spec.tags[2]: Duplicate value: \"a\""}));
  // A non-object in a map list fails both the schema and the list-type check, as in kube-apiserver.
  EXPECT_EQ(
      messages(validate_spec(s, json::parse(R"({"precedence": [{"type": "a"}, "b"]})"))),
      (std::vector<std::string>{
          "spec.precedence[1]: Invalid value: \"string\": spec.precedence[1] in body must be of type object: "
          "\"string\"",
          "spec.precedence[1]: Invalid value: \"b\": must be an object for an array of list-type map",
      }));
}

TEST(StructuralSchemaValidate, NullableAndNonNullableNulls) {
  auto s = policy_schema();
  EXPECT_TRUE(validate_spec(s, json{{"owner", nullptr}}).empty());
  json obj = valid_policy();
  obj["spec"]["kai"] = nullptr;
  EXPECT_EQ(messages(s.validate(obj)),
            (std::vector<std::string>{
                "spec.kai: Invalid value: \"null\": spec.kai in body must be of type object: \"null\""}));
}

TEST(StructuralSchemaValidate, IntegersAcceptIntegralFloatsOnly) {
  auto s = policy_schema();
  EXPECT_TRUE(
      validate_spec(s, json::parse(R"({"metrics": {"compute": {"upsize": {"thresholdPercent": 110.0}}}})"))
          .empty());
  EXPECT_EQ(
      messages(validate_spec(s, json::parse(R"({"step": 1.5})"))),
      (std::vector<std::string>{
          "spec.step: Invalid value: \"number\": spec.step in body must be of type integer: \"number\"",
          "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in spec.step",
          "spec.step: Invalid value: 1.5: spec.step in body should be a multiple of 5",
      }));
  // int32 range.
  EXPECT_EQ(
      single_message(s, R"({"replicas": 3000000000})"),
      "<nil>: Invalid value: \"\": Checked value must be of type integer with format int32 in spec.replicas");
}

TEST(StructuralSchemaValidate, IntOrStringWithPattern) {
  auto s = policy_schema();
  EXPECT_TRUE(validate_spec(s, json::parse(R"({"resources": {"a": 1, "b": "2Gi", "c": "500m"}})")).empty());
  EXPECT_EQ(single_message(s, R"({"resources": {"gpu": "abc"}})"),
            "spec.resources.gpu: Invalid value: \"abc\": spec.resources.gpu in body should match "
            "'^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.["
            "0-9]*)?)|"
            "(\\.[0-9]+))))?$'");
  // A boolean fails the int-or-string type and both anyOf branches; the first branch is the best failure.
  EXPECT_EQ(
      messages(validate_spec(s, json::parse(R"({"resources": {"gpu": true}})"))),
      (std::vector<std::string>{
          "spec.resources.gpu: Invalid value: \"boolean\": spec.resources.gpu in body must be of type "
          "integer,string: \"boolean\"",
          "<nil>: Invalid value: \"\": \"spec.resources.gpu\" must validate at least one schema (anyOf)",
          "spec.resources.gpu: Invalid value: \"boolean\": spec.resources.gpu in body must be of type "
          "integer: "
          "\"boolean\"",
      }));
}

TEST(StructuralSchemaValidate, DateTimeFormat) {
  auto s = policy_schema();
  for (const char* ok : {"2024-01-01T10:00:00Z", "2024-01-01t10:00:00.5z", "2024-02-29T23:59:59-07:00"}) {
    EXPECT_TRUE(validate_spec(s, json{{"lastRun", ok}}).empty()) << ok;
  }
  for (const char* bad : {"2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-01T24:00:00Z",
                          "2024-01-01", "2024-01-01T10:00:00"}) {
    EXPECT_EQ(validate_spec(s, json{{"lastRun", bad}}).size(), 1u) << bad;
  }
  auto causes = validate_spec(s, json{{"lastRun", "yesterday"}});
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].message,
            "spec.lastRun: Invalid value: \"yesterday\": spec.lastRun in body must be of type date-time: "
            "\"yesterday\"");
  EXPECT_EQ(causes[0].reason, "FieldValueTypeInvalid");
}

TEST(StructuralSchemaValidate, AllOfOneOfNot) {
  auto s = policy_schema();
  EXPECT_EQ(
      messages(validate_spec(s, json::parse(R"({"mode": "b"})"))),
      (std::vector<std::string>{"<nil>: Invalid value: \"\": \"spec.mode\" must validate one and only one "
                                "schema (oneOf). Found 2 valid alternatives"}));
  EXPECT_EQ(messages(validate_spec(s, json::parse(R"({"window": {"from": "a", "never": "x"}})"))),
            (std::vector<std::string>{
                "spec.window.to: Required value",
                "<nil>: Invalid value: \"\": \"spec.window\" must validate all the schemas (allOf)",
                "<nil>: Invalid value: \"\": \"spec.window\" must not validate the schema (not)",
            }));
}

TEST(StructuralSchemaValidate, EmbeddedResourceNeedsApiVersionAndKind) {
  auto s = policy_schema();
  EXPECT_EQ(messages(validate_spec(s, json::parse(R"({"podTemplate": {"metadata": {}}})"))),
            (std::vector<std::string>{"spec.podTemplate.apiVersion: Required value",
                                      "spec.podTemplate.kind: Required value"}));
  auto causes =
      validate_spec(s, json::parse(R"({"podTemplate": {"apiVersion": "a/b/c", "kind": "Bad_Kind"}})"));
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_EQ(causes[0].message,
            "spec.podTemplate.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c");
  EXPECT_EQ(
      causes[1].message.rfind("spec.podTemplate.kind: Invalid value: \"Bad_Kind\": may have mixed case, but "
                              "should otherwise match: a DNS-1035 label",
                              0),
      0u)
      << causes[1].message;
}

TEST(StructuralSchemaValidate, ReportsEveryErrorOfOneObject) {
  auto s = policy_schema();
  json obj = valid_policy();
  obj["spec"] = json::parse(R"json({
    "replicas": "string",
    "kai": {"queue": "Bad_Queue"},
    "scope": {"namespaceSelector": {"values": []}},
    "precedence": [{"type": "StaticPolicy"}, {"type": "StaticPolicy"}],
    "x": ""
  })json");
  EXPECT_EQ(messages(s.validate(obj)),
            (std::vector<std::string>{
                "spec.kai.queue: Invalid value: \"Bad_Queue\": spec.kai.queue in body should match "
                "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'",
                "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: "
                "\"string\"",
                "spec.scope.namespaceSelector.values: Invalid value: 0: spec.scope.namespaceSelector.values "
                "in body "
                "should have at least 1 items",
                "spec.x: Invalid value: \"\": spec.x in body should be at least 1 chars long",
                "spec.metrics: Required value",
                "spec.precedence[1]: Duplicate value: {\"type\":\"StaticPolicy\"}",
            }));
}

TEST(StructuralSchemaValidate, RendersValuesLikeGo) {
  auto s = StructuralSchema::compile(json::parse(R"json({
    "type": "object",
    "properties": {
      "s": {"type": "string", "enum": ["a"]},
      "o": {"type": "object", "enum": [{"k": "a&b"}], "properties": {"k": {"type": "string"}}},
      "l": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    }
  })json"));
  ASSERT_TRUE(s) << s.error().str();
  EXPECT_EQ(
      messages(s->validate(json{{"s", "tab\there \"q\" \u00e9\u2028"}})),
      (std::vector<std::string>{"s: Unsupported value: \"tab\\there \\\"q\\\" \u00e9\\u2028\": supported "
                                "values: \"a\""}));
  // json.Marshal escapes HTML characters; strconv.Quote then escapes the backslashes.
  EXPECT_EQ(messages(s->validate(json::parse(R"({"o": {"k": "<x>"}})"))),
            (std::vector<std::string>{"o: Unsupported value: {\"k\":\"\\u003cx\\u003e\"}: supported values: "
                                      "\"{\\\"k\\\":\\\"a\\\\u0026b\\\"}\""}));
  EXPECT_EQ(messages(s->validate(json::parse(R"({"l": ["<b>", "<b>"]})"))),
            (std::vector<std::string>{"l[1]: Duplicate value: \"<b>\""}));
}

// ---------------------------------------------------------------------------------------------------------
// x-kubernetes-validations hook
// ---------------------------------------------------------------------------------------------------------

constexpr const char* kRulesSchema = R"json({
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "x-kubernetes-validations": [{"rule": "self.min <= self.max"}],
      "properties": {
        "min": {"type": "integer"},
        "max": {"type": "integer"},
        "items": {
          "type": "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          "items": {
            "type": "object",
            "required": ["name"],
            "x-kubernetes-validations": [{"rule": "self.size > 0"}],
            "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}
          }
        }
      }
    }
  }
})json";

struct HookCall {
  std::string rule;
  json self;
  json old_self;  // null when none
  std::string path;
};

TEST(StructuralSchemaRules, HookSeesRulesSelfCorrelatedOldSelfAndPath) {
  auto compiled = StructuralSchema::compile(json::parse(kRulesSchema));
  ASSERT_TRUE(compiled) << compiled.error().str();
  StructuralSchema s = *compiled;
  EXPECT_TRUE(s.has_validation_rules());
  std::vector<HookCall> calls;
  s.set_validation_rules_hook([&](const json& rules, const json& self, const json* old_self,
                                  const std::string& path, std::vector<Cause>& out) {
    calls.push_back({rules[0]["rule"].get<std::string>(), self, old_self ? *old_self : json(), path});
    if (path == "spec" && self["min"] > self["max"]) {
      out.push_back(
          {"FieldValueInvalid", "spec", "spec: Invalid value: \"object\": min must not exceed max", ""});
    }
  });
  json old_obj = json::parse(R"({"spec": {"min": 1, "max": 2, "items": [{"name": "b", "size": 9}]}})");
  json obj = json::parse(
      R"({"spec": {"min": 3, "max": 2, "items": [{"name": "a", "size": 1}, {"name": "b", "size": 2}]}})");
  auto causes = s.validate(obj, &old_obj);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].path, "spec");
  EXPECT_EQ(calls[0].rule, "self.min <= self.max");
  EXPECT_EQ(calls[0].self, obj["spec"]);
  EXPECT_EQ(calls[0].old_self, old_obj["spec"]);
  EXPECT_EQ(calls[1].path, "spec.items[0]");
  EXPECT_TRUE(calls[1].old_self.is_null());  // "a" is new
  EXPECT_EQ(calls[2].path, "spec.items[1]");
  EXPECT_EQ(calls[2].old_self, old_obj["spec"]["items"][0]);  // correlated by the map key, not the index
  EXPECT_EQ(messages(causes),
            (std::vector<std::string>{"spec: Invalid value: \"object\": min must not exceed max"}));
}

TEST(StructuralSchemaRules, SchemaErrorsThatBlockRulesSkipTheHook) {
  auto compiled = StructuralSchema::compile(json::parse(kRulesSchema));
  ASSERT_TRUE(compiled);
  StructuralSchema s = *compiled;
  int called = 0;
  s.set_validation_rules_hook(
      [&](const json&, const json&, const json*, const std::string&, std::vector<Cause>&) { ++called; });
  auto causes = s.validate(json::parse(R"({"spec": {"min": "x"}})"));
  EXPECT_EQ(called, 0);
  EXPECT_EQ(messages(causes),
            (std::vector<std::string>{
                "spec.min: Invalid value: \"string\": spec.min in body must be of type integer: \"string\"",
                "<nil>: Invalid value: null: some validation rules were not checked because the object was "
                "invalid; "
                "correct the existing errors to complete validation",
            }));
  // Without a hook, rules are ignored and nothing is added.
  StructuralSchema no_hook = *compiled;
  EXPECT_EQ(no_hook.validate(json::parse(R"({"spec": {"min": "x"}})")).size(), 1u);
}

}  // namespace
}  // namespace kubex::sim
