// Internals of the PATCH engine (patch.h): the body decoding and error values the three patch types
// share, and their entry points (json_patch.cpp, merge_patch.cpp, strategic_merge.cpp). Only
// src/sim/apiserver/patch.cpp and patch/ include this.
#pragma once

#include <cstddef>
#include <expected>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "sim/apiserver/patch.h"

namespace kubex::sim::patch {

using Status = std::expected<void, PatchError>;

// Go's encoding/json stops at 10000 levels; our merge functions recurse, so stay far below that.
constexpr std::size_t kMaxDepth = 1000;

std::unexpected<PatchError> bad_request(std::string message);  // 400
std::unexpected<PatchError> invalid(std::string message);      // 422

// How encoding/json names a JSON value in "cannot unmarshal X into ..." errors: object, array, string,
// bool, null, number.
std::string json_word(const nlohmann::json& v);

// The body as JSON, with kube-apiserver's "error decoding patch: ..." messages.
std::expected<nlohmann::json, PatchError> decode_body(std::string_view body);

// "the patched object is not a JSON object: json: cannot unmarshal <word> into Go value of type ...".
std::string not_an_object_result(const nlohmann::json& doc);

// JSON Patch (RFC 6902) with evanphx/json-patch v4 semantics and messages.
PatchResult apply_json_patch(const nlohmann::json& original, std::string_view body);
// JSON Merge Patch (RFC 7386), evanphx MergePatch flavour.
PatchResult apply_merge_patch(const nlohmann::json& original, std::string_view body);
// Strategic merge patch with the metadata of `kind` (strategic_rules.h).
PatchResult apply_strategic_merge_patch(const nlohmann::json& original, std::string_view body,
                                        const std::string& kind);

}  // namespace kubex::sim::patch
