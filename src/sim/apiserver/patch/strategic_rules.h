// Strategic merge patch metadata, from the patchStrategy/patchMergeKey struct tags of k8s.io/api
// (core/v1, apps/v1, batch/v1, policy/v1) and k8s.io/apimachinery meta/v1. A "type" names the Go
// struct a JSON object decodes to; fields not listed have no tag: their maps merge key by key and
// their lists are replaced whole.
#pragma once

#include <string>
#include <string_view>

namespace kubex::sim::patch {

enum class Strategy {
  kDefault,  // no tag
  kMerge,    // patchStrategy:"merge": lists merge by merge key (maps) or as sets (primitives)
  kReplace,  // patchStrategy:"replace": the map is replaced whole
};

struct FieldRule {
  std::string_view owner;  // type the field belongs to
  std::string_view field;  // JSON name
  Strategy strategy;
  std::string_view merge_key;  // patchMergeKey, lists of objects only
  std::string_view child;      // type of the value (of the elements, for lists); "" = no rules below
  bool retain_keys = false;    // patchStrategy also has retainKeys (only used to generate patches)
};

// The table's type for a kind: kinds are the owners of a "metadata" rule; any other kind only gets
// the ObjectMeta rules ("Object").
std::string_view root_type(const std::string& kind);

// The rule of `field` in `owner`, or nullptr (no tag: maps merge key by key, lists are replaced whole).
const FieldRule* find_rule(std::string_view owner, std::string_view field);

}  // namespace kubex::sim::patch
