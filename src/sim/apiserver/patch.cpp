// PATCH engine: JSON Patch, JSON Merge Patch and strategic merge patch (see patch.h).
//
// Behaviour follows what kube-apiserver does, not only the RFCs:
// - JSON Patch follows gopkg.in/evanphx/json-patch.v4, which kube-apiserver uses. Notable differences
//   from RFC 6902: `replace` of a missing key in an existing object adds it; `copy` from a missing key
//   in an existing object copies null; negative array indices count from the end; `add` with path ""
//   fails; the first segment of a path without a leading "/" is ignored.
// - JSON Merge Patch follows evanphx MergePatch: nulls inside values that land where there was
//   nothing (or a non-object) are pruned, also inside objects nested in arrays.
// - Strategic merge patch follows k8s.io/apimachinery/pkg/util/strategicpatch (apply side,
//   StrategicMergeMapPatch): directives `$patch` (replace/delete), `$retainKeys`,
//   `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>`, and the order rules for merged lists.
//   Values copied from the patch are cleaned of directives and nulls (kube-apiserver gets the same
//   effect by decoding the result into typed structs).
#include "sim/apiserver/patch.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/apiserver/patch/internal.h"

namespace kubex::sim {

using nlohmann::json;

namespace {

std::string media_type(std::string_view content_type) {
  if (auto semi = content_type.find(';'); semi != std::string_view::npos)
    content_type = content_type.substr(0, semi);
  while (!content_type.empty() && (content_type.front() == ' ' || content_type.front() == '\t')) {
    content_type.remove_prefix(1);
  }
  while (!content_type.empty() && (content_type.back() == ' ' || content_type.back() == '\t')) {
    content_type.remove_suffix(1);
  }
  std::string lower(content_type);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

}  // namespace

bool is_apply_patch(std::string_view content_type) { return media_type(content_type) == "application/apply-patch+yaml"; }

std::optional<PatchType> patch_type_from_content_type(std::string_view content_type) {
  std::string lower = media_type(content_type);
  if (lower == "application/json-patch+json") return PatchType::kJson;
  if (lower == "application/merge-patch+json") return PatchType::kMerge;
  if (lower == "application/strategic-merge-patch+json") return PatchType::kStrategic;
  return std::nullopt;
}

PatchResult apply_patch(const json& original, std::string_view patch_body, PatchType type,
                        const std::string& kind) {
  if (!original.is_object()) return patch::invalid("the object to patch is not a JSON object");
  try {
    switch (type) {
      case PatchType::kJson:
        return patch::apply_json_patch(original, patch_body);
      case PatchType::kMerge:
        return patch::apply_merge_patch(original, patch_body);
      case PatchType::kStrategic:
        return patch::apply_strategic_merge_patch(original, patch_body, kind);
    }
    return patch::invalid("unknown patch type");
  } catch (const std::exception& e) {
    return patch::invalid(std::string("internal error while applying the patch: ") + e.what());
  }
}

}  // namespace kubex::sim
