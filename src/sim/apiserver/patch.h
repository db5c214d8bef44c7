// PATCH engine of the simulated API server (DESIGN §5): JSON Patch (RFC 6902), JSON Merge Patch
// (RFC 7386) and Kubernetes strategic merge patch, with the behaviour and error texts of
// kube-apiserver (evanphx/json-patch v4 and k8s.io/apimachinery strategicpatch).
//
// Server-side apply (`application/apply-patch+yaml`) is not a patch of this engine: is_apply_patch() tells
// the caller to hand the request to server_side_apply.h.
#pragma once

#include <expected>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace kubex::sim {

enum class PatchType { kJson, kMerge, kStrategic };

// "application/json-patch+json" -> kJson, "application/merge-patch+json" -> kMerge,
// "application/strategic-merge-patch+json" -> kStrategic. Parameters (";charset=utf-8") and case are
// ignored. Anything else, including "application/apply-patch+yaml", gives nullopt (the caller answers 415).
std::optional<PatchType> patch_type_from_content_type(std::string_view content_type);
// "application/apply-patch+yaml" (parameters and case ignored): server-side apply.
bool is_apply_patch(std::string_view content_type);

// Which HTTP status a failed patch maps to, as kube-apiserver decides it.
enum class PatchErrorKind {
  kBadRequest,  // 400: the body cannot be decoded as the declared patch type
  kInvalid,     // 422: the body is well formed but cannot be applied to the object
};

// A common::Error (message as kube-apiserver words it, path left empty) plus the status category.
// Converts implicitly to common::Error, so a PatchResult also converts to Result<nlohmann::json>.
struct PatchError : common::Error {
  PatchErrorKind kind = PatchErrorKind::kInvalid;
};

constexpr int http_status(PatchErrorKind kind) {
  return kind == PatchErrorKind::kBadRequest ? 400 : 422;
}

using PatchResult = std::expected<nlohmann::json, PatchError>;

// Applies `patch_body` (the raw request body) to `original` (a JSON object) and returns the patched
// object; `original` is not modified. Never throws. The result is always a JSON object; a patch that
// would turn the object into anything else fails with kInvalid.
//
// `kind` (e.g. "Pod", "Deployment") selects the strategic-merge metadata: which lists merge by which
// key, which are merged sets of primitives, and which maps are replaced whole. Kinds without an
// entry in the table get only the ObjectMeta rules, every other list being replaced atomically.
// Custom resources have no strategic-merge metadata at all: kube-apiserver answers 415 for a
// strategic merge patch on them, and so must the caller, before calling this function (this function
// cannot tell a custom kind from a built-in one it has no table for).
PatchResult apply_patch(const nlohmann::json& original, std::string_view patch_body, PatchType type,
                        const std::string& kind);

}  // namespace kubex::sim
