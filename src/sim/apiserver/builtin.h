// Behaviour of built-in kinds that kube-apiserver implements in its registry strategies:
// defaulting, create/update preparation (status and immutable fields) and validation.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sim/apiserver/api_error.h"
#include "sim/apiserver/resource.h"

namespace kubex::sim::builtin {

// Schema defaults (what a typed decode + SetDefaults_* would add). Also canonicalises resource quantities.
void apply_defaults(const ResourceInfo& r, nlohmann::json& obj);
// Resets status and server-owned fields on create (PrepareForCreate).
void prepare_for_create(const ResourceInfo& r, nlohmann::json& obj);
// Copies fields a main-resource update may not change (status, immutable spec parts) from `old`.
void prepare_for_update(const ResourceInfo& r, nlohmann::json& next, const nlohmann::json& old);
// Field validation of the object (and of the transition when `old` is given).
std::vector<StatusCause> validate(const ResourceInfo& r, const nlohmann::json& obj, const nlohmann::json* old);
// Validates metadata.name for the kind (DNS subdomain for most, DNS label for namespaces and services).
std::vector<StatusCause> validate_name(const ResourceInfo& r, const std::string& name);

// The QoS class of a pod spec (BestEffort, Burstable, Guaranteed).
std::string pod_qos_class(const nlohmann::json& pod);

}  // namespace kubex::sim::builtin
