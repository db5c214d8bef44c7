// RFC 6902 JSON Patch between two values, the same operations in the same order as nlohmann::json::diff
// (so patches, tests and golden files do not change), in one pass: each subtree is compared once rather than
// once per level above it, paths are built in one buffer, and operations are not copied level by level.
// The admission webhook diffs a whole pod per review (decide/admission/pod_mutation.cpp).
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace kubex::common {

// The operations that turn `source` into `target` (a JSON array; empty when they are equal).
nlohmann::json json_diff(const nlohmann::json& source, const nlohmann::json& target);

}  // namespace kubex::common
