// Unknown fields against a CRD's structural schema (VAL-5), as kube-apiserver's strict field validation finds
// them: `kubex validate` refuses them; the engine and the webhook never look (the API server prunes them).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kubex::api {

struct UnknownField {
  std::string path;        // "spec.minPodMetricAge", "spec.rules[0].podEvictions"
  std::string suggestion;  // the one known sibling within two edits ("minPodMetricsAge"), else ""
  // "unknown field" or `unknown field (did you mean "minPodMetricsAge"?)`
  std::string message() const;
};

// Every field of `object` that `schema` (a CRD version's openAPIV3Schema) does not declare (metadata first, then by key).
// Honours `x-kubernetes-preserve-unknown-fields` and `additionalProperties` (maps keyed by container name and
// the like); `metadata` is checked against ObjectMeta's fields, not the CRD's. Values of the wrong type are
// left to the validator. Pure; never throws.
std::vector<UnknownField> unknown_fields(const nlohmann::json& schema, const nlohmann::json& object);

// Levenshtein distance (insertions, deletions, substitutions), for the "did you mean" hint.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace kubex::api
