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
#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/apiserver/go_format.h"

namespace kubex::sim {
namespace {

using nlohmann::json;
using Status = std::expected<void, PatchError>;

// Go's encoding/json stops at 10000 levels; our merge functions recurse, so stay far below that.
constexpr std::size_t kMaxDepth = 1000;

std::unexpected<PatchError> bad_request(std::string message) {
  PatchError e;
  e.message = std::move(message);
  e.kind = PatchErrorKind::kBadRequest;
  return std::unexpected<PatchError>(std::move(e));
}

std::unexpected<PatchError> invalid(std::string message) {
  PatchError e;
  e.message = std::move(message);
  e.kind = PatchErrorKind::kInvalid;
  return std::unexpected<PatchError>(std::move(e));
}

// How encoding/json names a JSON value in "cannot unmarshal X into ..." errors.
std::string json_word(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::null:
      return "null";
    default:
      return "number";
  }
}

// ---------------------------------------------------------------------------------------------------
// Body decoding.

bool deeper_than(const json& root, std::size_t limit) {
  std::vector<std::pair<const json*, std::size_t>> stack{{&root, 1}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth > limit) return true;
    if (node->is_structured()) {
      for (const auto& child : *node) stack.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

std::expected<json, PatchError> decode_body(std::string_view body) {
  json parsed;
  try {
    parsed = json::parse(body);
  } catch (const json::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
    if (!what.empty() && what.front() == '[') {
      auto close = what.find("] ");
      if (close != std::string::npos) what.erase(0, close + 2);
    }
    return bad_request("error decoding patch: " + what);
  }
  if (deeper_than(parsed, kMaxDepth)) {
    return bad_request("error decoding patch: exceeded max depth of " + std::to_string(kMaxDepth));
  }
  return parsed;
}

std::string not_an_object_result(const json& doc) {
  return "the patched object is not a JSON object: json: cannot unmarshal " + json_word(doc) +
         " into Go value of type map[string]interface {}";
}

// ---------------------------------------------------------------------------------------------------
// JSON Patch (RFC 6902) with evanphx/json-patch v4 semantics and messages.

constexpr std::string_view kMissingValue = ": missing value";

// strconv.Atoi, including its error texts.
std::expected<long long, std::string> go_atoi(std::string_view s) {
  std::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  const bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(),
                                                         [](char c) { return c >= '0' && c <= '9'; });
  if (!all_digits) return std::unexpected("strconv.Atoi: parsing " + go_quote(s) + ": invalid syntax");
  unsigned long long magnitude = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  const unsigned long long limit = negative ? 9223372036854775808ULL : 9223372036854775807ULL;
  if (ec != std::errc() || ptr != digits.data() + digits.size() || magnitude > limit) {
    return std::unexpected("strconv.Atoi: parsing " + go_quote(s) + ": value out of range");
  }
  if (negative) return magnitude == limit ? INT64_MIN : -static_cast<long long>(magnitude);
  return static_cast<long long>(magnitude);
}

std::string invalid_index(long long idx) {
  return "Unable to access invalid index: " + std::to_string(idx) + ": invalid index referenced";
}

// RFC 6901 token unescaping: "~1" -> "/", then "~0" -> "~" (single left-to-right pass).
std::string decode_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '1' || token[i + 1] == '0')) {
      out += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += token[i];
    }
  }
  return out;
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(path.substr(start));
      return parts;
    }
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

// Index of an existing array element (negative counts from the end).
std::expected<std::size_t, std::string> existing_index(const json& array, const std::string& key) {
  auto idx = go_atoi(key);
  if (!idx) return std::unexpected(idx.error());
  long long i = *idx;
  const auto n = static_cast<long long>(array.size());
  if (i < 0) {
    if (i < -n) return std::unexpected(invalid_index(i));
    i += n;
  }
  if (i >= n) return std::unexpected(invalid_index(i));
  return static_cast<std::size_t>(i);
}

struct Location {
  json* container;  // an object or an array
  std::string key;  // decoded last token
};

// evanphx findObject: walks every token but the last; fails on anything missing, null or scalar.
std::optional<Location> find_object(json& doc, std::string_view path) {
  auto parts = split_path(path);
  if (parts.size() < 2) return std::nullopt;
  json* cur = &doc;
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    const std::string token = decode_token(parts[i]);
    json* next = nullptr;
    if (cur->is_object()) {
      auto it = cur->find(token);
      if (it != cur->end()) next = &*it;
    } else if (cur->is_array()) {
      auto idx = existing_index(*cur, token);
      if (idx) next = &(*cur)[*idx];
    }
    if (next == nullptr || !next->is_structured()) return std::nullopt;
    cur = next;
  }
  if (!cur->is_structured()) return std::nullopt;
  return Location{cur, decode_token(parts.back())};
}

// Returns the member/element, nullptr for a missing object member.
std::expected<json*, std::string> container_get(json& c, const std::string& key) {
  if (c.is_object()) {
    auto it = c.find(key);
    return it == c.end() ? nullptr : &*it;
  }
  auto idx = existing_index(c, key);
  if (!idx) return std::unexpected(idx.error());
  return &c[*idx];
}

std::expected<void, std::string> container_add(json& c, const std::string& key, json value) {
  if (c.is_object()) {
    c[key] = std::move(value);
    return {};
  }
  if (key == "-") {
    c.push_back(std::move(value));
    return {};
  }
  auto idx = go_atoi(key);
  if (!idx) return std::unexpected("value was not a proper array index: '" + key + "': " + idx.error());
  long long i = *idx;
  const auto size = static_cast<long long>(c.size()) + 1;
  if (i >= size) return std::unexpected(invalid_index(i));
  if (i < 0) {
    if (i < -size) return std::unexpected(invalid_index(i));
    i += size;
  }
  c.insert(c.begin() + static_cast<std::ptrdiff_t>(i), std::move(value));
  return {};
}

std::expected<void, std::string> container_set(json& c, const std::string& key, json value) {
  if (c.is_object()) {
    c[key] = std::move(value);
    return {};
  }
  auto idx = existing_index(c, key);
  if (!idx) return std::unexpected(idx.error());
  c[*idx] = std::move(value);
  return {};
}

std::expected<void, std::string> container_remove(json& c, const std::string& key) {
  if (c.is_object()) {
    if (!c.contains(key))
      return std::unexpected("Unable to remove nonexistent key: " + key + ": missing value");
    c.erase(key);
    return {};
  }
  auto idx = go_atoi(key);
  if (!idx) return std::unexpected(idx.error());
  long long i = *idx;
  const auto n = static_cast<long long>(c.size());
  if (i >= n) return std::unexpected(invalid_index(i));
  if (i < 0) {
    if (i < -n) return std::unexpected(invalid_index(i));
    i += n;
  }
  c.erase(static_cast<std::size_t>(i));
  return {};
}

// "path"/"from" of an operation; absent or null is an error with the given text.
std::expected<std::string, std::string> op_field(const json& op, const char* name, const char* missing) {
  auto it = op.find(name);
  if (it == op.end() || it->is_null()) return std::unexpected(std::string(missing));
  return it->get<std::string>();  // type-checked by validate_json_patch
}

json op_value(const json& op) {
  auto it = op.find("value");
  return it == op.end() ? json(nullptr) : *it;
}

constexpr const char* kMissingPath = "operation missing path field: missing value";
constexpr const char* kMissingFrom = "operation, missing from field: missing value";

Status op_add(json& doc, const json& op) {
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("add operation failed to decode path: missing value");
  auto loc = find_object(doc, *path);
  if (!loc)
    return invalid("add operation does not apply: doc is missing path: \"" + *path + "\"" +
                   std::string(kMissingValue));
  if (auto r = container_add(*loc->container, loc->key, op_value(op)); !r) {
    return invalid("error in add for path: '" + *path + "': " + r.error());
  }
  return {};
}

Status op_remove(json& doc, const json& op) {
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("remove operation failed to decode path: missing value");
  auto loc = find_object(doc, *path);
  if (!loc)
    return invalid("remove operation does not apply: doc is missing path: \"" + *path + "\"" +
                   std::string(kMissingValue));
  if (auto r = container_remove(*loc->container, loc->key); !r) {
    return invalid("error in remove for path: '" + *path + "': " + r.error());
  }
  return {};
}

Status op_replace(json& doc, const json& op) {
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("replace operation failed to decode path: " + path.error());
  if (path->empty()) {
    json value = op_value(op);
    if (!value.is_structured()) return invalid("replace operation value must be object or array");
    doc = std::move(value);
    return {};
  }
  auto loc = find_object(doc, *path);
  if (!loc)
    return invalid("replace operation does not apply: doc is missing path: " + *path +
                   std::string(kMissingValue));
  if (auto got = container_get(*loc->container, loc->key); !got) {
    return invalid("replace operation does not apply: doc is missing key: " + *path +
                   std::string(kMissingValue));
  }
  if (auto r = container_set(*loc->container, loc->key, op_value(op)); !r) {
    return invalid("error in remove for path: '" + *path + "': " + r.error());
  }
  return {};
}

Status op_move(json& doc, const json& op) {
  auto from = op_field(op, "from", kMissingFrom);
  if (!from) return invalid("move operation failed to decode from: " + from.error());
  auto src = find_object(doc, *from);
  if (!src)
    return invalid("move operation does not apply: doc is missing from path: " + *from +
                   std::string(kMissingValue));
  auto got = container_get(*src->container, src->key);
  if (!got) return invalid("error in move for path: '" + src->key + "': " + got.error());
  json value = *got == nullptr ? json(nullptr) : **got;
  if (auto r = container_remove(*src->container, src->key); !r) {
    return invalid("error in move for path: '" + src->key + "': " + r.error());
  }
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("move operation failed to decode path: " + path.error());
  auto dst = find_object(doc, *path);
  if (!dst) {
    return invalid("move operation does not apply: doc is missing destination path: " + *path +
                   std::string(kMissingValue));
  }
  if (auto r = container_add(*dst->container, dst->key, std::move(value)); !r) {
    return invalid("error in move for path: '" + *path + "': " + r.error());
  }
  return {};
}

Status op_test(json& doc, const json& op) {
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("test operation failed to decode path: " + path.error());
  const json expected = op_value(op);
  if (path->empty()) {
    if (doc == expected) return {};
    return invalid("testing value  failed: test failed");
  }
  auto loc = find_object(doc, *path);
  if (!loc)
    return invalid("test operation does not apply: is missing path: " + *path + std::string(kMissingValue));
  auto got = container_get(*loc->container, loc->key);
  if (!got) return invalid("error in test for path: '" + *path + "': " + got.error());
  const json actual = *got == nullptr ? json(nullptr) : **got;
  if (actual == expected) return {};
  return invalid("testing value " + *path + " failed: test failed");
}

Status op_copy(json& doc, const json& op) {
  auto from = op_field(op, "from", kMissingFrom);
  if (!from) return invalid("copy operation failed to decode from: " + from.error());
  auto src = find_object(doc, *from);
  if (!src)
    return invalid("copy operation does not apply: doc is missing from path: " + *from +
                   std::string(kMissingValue));
  auto got = container_get(*src->container, src->key);
  if (!got) return invalid("error in copy for from: '" + *from + "': " + got.error());
  json value = *got == nullptr ? json(nullptr) : **got;
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("copy operation failed to decode path: missing value");
  auto dst = find_object(doc, *path);
  if (!dst) {
    return invalid("copy operation does not apply: doc is missing destination path: " + *path +
                   std::string(kMissingValue));
  }
  if (auto r = container_add(*dst->container, dst->key, std::move(value)); !r) {
    return invalid("error while adding value during copy: " + r.error());
  }
  return {};
}

// What kube-apiserver's strict decoding into []jsonPatchOp rejects with 400.
Status validate_json_patch(const json& patch) {
  if (!patch.is_array()) {
    return bad_request("error decoding patch: json: cannot unmarshal " + json_word(patch) +
                       " into Go value of type []handlers.jsonPatchOp");
  }
  for (const auto& op : patch) {
    if (op.is_null()) continue;
    if (!op.is_object()) {
      return bad_request("error decoding patch: json: cannot unmarshal " + json_word(op) +
                         " into Go value of type handlers.jsonPatchOp");
    }
    for (const char* field : {"op", "path", "from"}) {
      auto it = op.find(field);
      if (it != op.end() && !it->is_null() && !it->is_string()) {
        return bad_request("error decoding patch: json: cannot unmarshal " + json_word(*it) +
                           " into Go struct field jsonPatchOp." + field + " of type string");
      }
    }
  }
  return {};
}

PatchResult apply_json_patch(const json& original, std::string_view body) {
  auto patch = decode_body(body);
  if (!patch) return std::unexpected(patch.error());
  if (auto v = validate_json_patch(*patch); !v) return std::unexpected(v.error());
  json doc = original;
  for (const auto& raw_op : *patch) {
    const json op = raw_op.is_null() ? json::object() : raw_op;
    auto kind_it = op.find("op");
    const std::string kind =
        kind_it != op.end() && kind_it->is_string() ? kind_it->get<std::string>() : "unknown";
    Status s;
    if (kind == "add") {
      s = op_add(doc, op);
    } else if (kind == "remove") {
      s = op_remove(doc, op);
    } else if (kind == "replace") {
      s = op_replace(doc, op);
    } else if (kind == "move") {
      s = op_move(doc, op);
    } else if (kind == "test") {
      s = op_test(doc, op);
    } else if (kind == "copy") {
      s = op_copy(doc, op);
    } else {
      s = invalid("Unexpected kind: " + kind);
    }
    if (!s) return std::unexpected(s.error());
  }
  if (!doc.is_object()) return invalid(not_an_object_result(doc));
  return doc;
}

// ---------------------------------------------------------------------------------------------------
// JSON Merge Patch (RFC 7386), evanphx MergePatch flavour.

void prune_nulls(json& v) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      if (it->is_null()) {
        it = v.erase(it);
      } else {
        prune_nulls(*it);
        ++it;
      }
    }
  } else if (v.is_array()) {
    for (auto& e : v) {
      if (!e.is_null()) prune_nulls(e);
    }
  }
}

void merge_docs(json& doc, json& patch);

void merge_value(json& cur, json& patch) {
  if (!cur.is_object()) {
    prune_nulls(patch);
    cur = std::move(patch);
  } else if (!patch.is_object()) {
    cur = std::move(patch);
  } else {
    merge_docs(cur, patch);
  }
}

void merge_docs(json& doc, json& patch) {
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it->is_null()) {
      doc.erase(it.key());
      continue;
    }
    auto cur = doc.find(it.key());
    if (cur == doc.end() || cur->is_null()) {
      prune_nulls(*it);
      doc[it.key()] = std::move(*it);
    } else {
      merge_value(*cur, *it);
    }
  }
}

PatchResult apply_merge_patch(const json& original, std::string_view body) {
  auto patch = decode_body(body);
  if (!patch) return std::unexpected(patch.error());
  if (patch->is_null()) return bad_request("Invalid JSON Patch");
  if (!patch->is_object()) {
    return bad_request("error decoding patch: json: cannot unmarshal " + json_word(*patch) +
                       " into Go value of type map[string]interface {}");
  }
  json doc = original;
  merge_docs(doc, *patch);
  return doc;
}

// ---------------------------------------------------------------------------------------------------
// Strategic merge patch metadata, from the patchStrategy/patchMergeKey struct tags of k8s.io/api
// (core/v1, apps/v1, batch/v1, policy/v1) and k8s.io/apimachinery meta/v1. A "type" names the Go
// struct a JSON object decodes to; fields not listed have no tag: their maps merge key by key and
// their lists are replaced whole.

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

constexpr FieldRule kRules[] = {
    // ObjectMeta (apimachinery meta/v1 types.go).
    {"ObjectMeta", "ownerReferences", Strategy::kMerge, "uid", ""},
    {"ObjectMeta", "finalizers", Strategy::kMerge, "", ""},
    // Kinds whose table has nothing beyond ObjectMeta.
    {"Object", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"ConfigMap", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    // Pod, PodTemplate, PodTemplateSpec (core/v1).
    {"Pod", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"Pod", "spec", Strategy::kDefault, "", "PodSpec"},
    {"Pod", "status", Strategy::kDefault, "", "PodStatus"},
    {"PodTemplate", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"PodTemplate", "template", Strategy::kDefault, "", "PodTemplateSpec"},
    {"PodTemplateSpec", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"PodTemplateSpec", "spec", Strategy::kDefault, "", "PodSpec"},
    {"PodSpec", "volumes", Strategy::kMerge, "name", "", true},
    {"PodSpec", "initContainers", Strategy::kMerge, "name", "Container"},
    {"PodSpec", "containers", Strategy::kMerge, "name", "Container"},
    {"PodSpec", "ephemeralContainers", Strategy::kMerge, "name", "Container"},
    {"PodSpec", "imagePullSecrets", Strategy::kMerge, "name", ""},
    {"PodSpec", "hostAliases", Strategy::kMerge, "ip", ""},
    {"PodSpec", "topologySpreadConstraints", Strategy::kMerge, "topologyKey", ""},
    {"PodSpec", "schedulingGates", Strategy::kMerge, "name", ""},
    {"PodSpec", "resourceClaims", Strategy::kMerge, "name", "", true},
    // Container and EphemeralContainerCommon carry the same tags.
    {"Container", "ports", Strategy::kMerge, "containerPort", ""},
    {"Container", "env", Strategy::kMerge, "name", ""},
    {"Container", "volumeMounts", Strategy::kMerge, "mountPath", ""},
    {"Container", "volumeDevices", Strategy::kMerge, "devicePath", ""},
    {"PodStatus", "conditions", Strategy::kMerge, "type", ""},
    {"PodStatus", "hostIPs", Strategy::kMerge, "ip", ""},
    {"PodStatus", "podIPs", Strategy::kMerge, "ip", ""},
    {"PodStatus", "resourceClaimStatuses", Strategy::kMerge, "name", "", true},
    // Status structs whose only tagged field is conditions merged by type.
    {"ConditionsStatus", "conditions", Strategy::kMerge, "type", ""},
    // Workloads: spec.template is a PodTemplateSpec.
    {"TemplateSpec", "template", Strategy::kDefault, "", "PodTemplateSpec"},
    {"Deployment", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"Deployment", "spec", Strategy::kDefault, "", "DeploymentSpec"},
    {"Deployment", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"DeploymentSpec", "template", Strategy::kDefault, "", "PodTemplateSpec"},
    {"DeploymentSpec", "strategy", Strategy::kDefault, "", "", true},
    {"ReplicaSet", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"ReplicaSet", "spec", Strategy::kDefault, "", "TemplateSpec"},
    {"ReplicaSet", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"StatefulSet", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"StatefulSet", "spec", Strategy::kDefault, "", "TemplateSpec"},
    {"StatefulSet", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"DaemonSet", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"DaemonSet", "spec", Strategy::kDefault, "", "TemplateSpec"},
    {"DaemonSet", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"ReplicationController", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"ReplicationController", "spec", Strategy::kDefault, "", "TemplateSpec"},
    {"ReplicationController", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"Job", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"Job", "spec", Strategy::kDefault, "", "TemplateSpec"},
    {"Job", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"CronJob", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"CronJob", "spec", Strategy::kDefault, "", "CronJobSpec"},
    {"CronJobSpec", "jobTemplate", Strategy::kDefault, "", "JobTemplateSpec"},
    {"JobTemplateSpec", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"JobTemplateSpec", "spec", Strategy::kDefault, "", "TemplateSpec"},
    // Service (core/v1).
    {"Service", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"Service", "spec", Strategy::kDefault, "", "ServiceSpec"},
    {"Service", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"ServiceSpec", "ports", Strategy::kMerge, "port", ""},
    // Node (core/v1): spec.taints has no tag (atomic).
    {"Node", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"Node", "spec", Strategy::kDefault, "", "NodeSpec"},
    {"Node", "status", Strategy::kDefault, "", "NodeStatus"},
    {"NodeSpec", "podCIDRs", Strategy::kMerge, "", ""},
    {"NodeStatus", "conditions", Strategy::kMerge, "type", ""},
    {"NodeStatus", "addresses", Strategy::kMerge, "type", ""},
    // Namespace (core/v1): spec.finalizers has no tag (atomic), unlike metadata.finalizers.
    {"Namespace", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"Namespace", "status", Strategy::kDefault, "", "ConditionsStatus"},
    // PersistentVolumeClaim, ServiceAccount (core/v1).
    {"PersistentVolumeClaim", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"PersistentVolumeClaim", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"ServiceAccount", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"ServiceAccount", "secrets", Strategy::kMerge, "name", ""},
    // PodDisruptionBudget (policy/v1).
    {"PodDisruptionBudget", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"PodDisruptionBudget", "spec", Strategy::kDefault, "", "PodDisruptionBudgetSpec"},
    {"PodDisruptionBudget", "status", Strategy::kDefault, "", "ConditionsStatus"},
    {"PodDisruptionBudgetSpec", "selector", Strategy::kReplace, "", ""},
};

// The table's type for a kind: kinds are the owners of a "metadata" rule; any other kind only gets
// the ObjectMeta rules.
std::string_view root_type(const std::string& kind) {
  for (const auto& rule : kRules) {
    if (rule.owner == kind && rule.field == "metadata") return rule.owner;
  }
  return "Object";
}

const FieldRule* find_rule(std::string_view owner, std::string_view field) {
  if (owner.empty()) return nullptr;
  for (const auto& rule : kRules) {
    if (rule.owner == owner && rule.field == field) return &rule;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------------
// Strategic merge patch.

constexpr std::string_view kDirectiveMarker = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList";
constexpr std::string_view kSetElementOrder = "$setElementOrder";

bool is_directive_key(std::string_view key) {
  return key == kDirectiveMarker || key == kRetainKeys || key.starts_with("$setElementOrder/") ||
         key.starts_with("$deleteFromPrimitiveList/");
}

// Cleans a value taken from the patch as is: drops objects carrying `$patch`, other directive keys
// and null members. Returns false when `v` itself must be dropped.
bool sanitize(json& v) {
  if (v.is_object()) {
    if (v.contains(kDirectiveMarker)) return false;
    for (auto it = v.begin(); it != v.end();) {
      if (it->is_null() || is_directive_key(it.key()) || !sanitize(*it)) {
        it = v.erase(it);
      } else {
        ++it;
      }
    }
  } else if (v.is_array()) {
    json kept = json::array();
    for (auto& e : v) {
      if (sanitize(e)) kept.push_back(std::move(e));
    }
    v = std::move(kept);
  }
  return true;
}

std::unexpected<PatchError> no_merge_key(const json& item, std::string_view merge_key) {
  return invalid("map: " + go_print(item) +
                 " does not contain declared merge key: " + std::string(merge_key));
}

std::unexpected<PatchError> bad_arg_type(std::string_view expected, const json& actual) {
  return invalid("expected a " + std::string(expected) + ", but received a " + go_type(actual));
}

std::unexpected<PatchError> unknown_patch_type(const json& directive, const json& in_map) {
  return invalid("unknown patch type: " + go_print(directive) + " in map: " + go_print(in_map));
}

// "$prefix/field" -> "field".
std::optional<std::string> extract_key(std::string_view key, std::string_view prefix) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos || key.substr(0, slash) != prefix) return std::nullopt;
  return std::string(key.substr(slash + 1));
}

enum class ElemKind { kNone, kNull, kBool, kInt, kFloat, kString, kArray, kObject };

ElemKind elem_kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return ElemKind::kNull;
    case json::value_t::boolean:
      return ElemKind::kBool;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return ElemKind::kInt;
    case json::value_t::number_float:
      return ElemKind::kFloat;
    case json::value_t::string:
      return ElemKind::kString;
    case json::value_t::array:
      return ElemKind::kArray;
    default:
      return ElemKind::kObject;
  }
}

// The common element type of two lists (kNone when both are empty).
std::expected<ElemKind, PatchError> slice_element_kind(const json& a, const json& b) {
  ElemKind kind = ElemKind::kNone;
  for (const json* list : {&a, &b}) {
    for (const auto& e : *list) {
      const ElemKind k = elem_kind(e);
      if (kind == ElemKind::kNone) {
        kind = k;
        if (kind == ElemKind::kArray) return invalid("lists of lists are not supported");
      } else if (k != kind) {
        return invalid("list element types are not identical: " + go_print(json::array({a, b})));
      }
    }
  }
  return kind;
}

// The value an item is identified by: its merge key for lists of objects, itself otherwise.
const json& identity(const json& item, std::string_view merge_key, bool is_map) {
  static const json kNull;
  if (!is_map || merge_key.empty()) return item;
  if (!item.is_object()) return kNull;
  auto it = item.find(merge_key);
  return it == item.end() ? kNull : *it;
}

long index_of(const json& list, const json& item, std::string_view merge_key, bool is_map) {
  const json& id = identity(item, merge_key, is_map);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (identity(list[i], merge_key, is_map) == id) return static_cast<long>(i);
  }
  return -1;
}

Status validate_merge_key(const json& list, std::string_view merge_key) {
  for (const auto& item : list) {
    if (!item.is_object()) return bad_arg_type("map[string]interface {}", item);
    if (!item.contains(merge_key)) return no_merge_key(item, merge_key);
  }
  return {};
}

bool is_delete_item(const json& item) {
  if (!item.is_object()) return false;
  auto it = item.find(kDirectiveMarker);
  return it != item.end() && *it == "delete";
}

// Stable-sorts `to_sort` by position in `order` (items missing from `order` go last); objects
// carrying `$patch: delete` are moved to the end.
std::expected<json, PatchError> normalize_slice_order(json to_sort, const json& order,
                                                      std::string_view merge_key, bool is_map) {
  json deletions = json::array();
  if (is_map && !merge_key.empty()) {
    if (auto s = validate_merge_key(to_sort, merge_key); !s) return std::unexpected(s.error());
    if (auto s = validate_merge_key(order, merge_key); !s) return std::unexpected(s.error());
    json kept = json::array();
    for (auto& item : to_sort) {
      (is_delete_item(item) ? deletions : kept).push_back(std::move(item));
    }
    to_sort = std::move(kept);
  }
  std::vector<std::pair<long, std::size_t>> keys;
  keys.reserve(to_sort.size());
  for (std::size_t i = 0; i < to_sort.size(); ++i) {
    const long idx = index_of(order, to_sort[i], merge_key, is_map);
    keys.emplace_back(idx < 0 ? static_cast<long>(order.size()) : idx, i);
  }
  std::stable_sort(keys.begin(), keys.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  json sorted = json::array();
  for (const auto& [key, i] : keys) sorted.push_back(std::move(to_sort[i]));
  for (auto& item : deletions) sorted.push_back(std::move(item));
  return sorted;
}

// Interleaves server-only items (`left`) into patch items (`right`), keeping both relative orders:
// a server-only item goes first only when both are in the live list and it came first there.
json merge_sorted_slice(json& left, json& right, const json& server_order, std::string_view merge_key,
                        bool is_map) {
  json out = json::array();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < left.size() || j < right.size()) {
    if (i >= left.size()) {
      out.push_back(std::move(right[j++]));
    } else if (j >= right.size()) {
      out.push_back(std::move(left[i++]));
    } else {
      const long li = index_of(server_order, left[i], merge_key, is_map);
      const long ri = index_of(server_order, right[j], merge_key, is_map);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push_back(std::move(left[i++]));
      } else {
        out.push_back(std::move(right[j++]));
      }
    }
  }
  return out;
}

std::expected<json, PatchError> normalize_element_order(json patch_items, json server_only,
                                                        const json& patch_order, const json& server_order,
                                                        std::string_view merge_key, bool is_map) {
  auto patch_sorted = normalize_slice_order(std::move(patch_items), patch_order, merge_key, is_map);
  if (!patch_sorted) return patch_sorted;
  auto server_sorted = normalize_slice_order(std::move(server_only), server_order, merge_key, is_map);
  if (!server_sorted) return server_sorted;
  return merge_sorted_slice(*server_sorted, *patch_sorted, server_order, merge_key, is_map);
}

// Splits `merged` into the items that `by` mentions and the others, both in their order in `merged`.
std::expected<std::pair<json, json>, PatchError> partition(json merged, const json& by,
                                                           std::string_view merge_key, bool is_map) {
  json present = json::array();
  json others = json::array();
  const bool by_key = is_map && !merge_key.empty();
  for (auto& item : merged) {
    bool found = false;
    if (by_key) {
      if (!item.is_object()) return bad_arg_type("map[string]interface {}", item);
      auto key = item.find(merge_key);
      if (key == item.end()) return no_merge_key(item, merge_key);
      for (std::size_t i = 0; i < by.size() && !found; ++i) {
        if (!by[i].is_object()) return invalid("value for key " + std::to_string(i) + " is not a map");
        auto other = by[i].find(merge_key);
        found = other != by[i].end() && *other == *key;
      }
    } else {
      found = std::find(by.begin(), by.end(), item) != by.end();
    }
    (found ? present : others).push_back(std::move(item));
  }
  return std::make_pair(std::move(present), std::move(others));
}

Status merge_map(json& original, json& patch, std::string_view type);

// Merges two lists of a field with merge strategy (or a `$deleteFromPrimitiveList` list).
Status merge_slice(json& original, json& patch, std::string_view field, std::string_view child,
                   std::string_view merge_key, bool is_delete_list) {
  if (original.empty() && patch.empty()) return {};
  auto kind = slice_element_kind(original, patch);
  if (!kind) return std::unexpected(kind.error());
  const bool is_map = *kind == ElemKind::kObject;

  json merged;
  json patch_list;
  if (!is_map) {
    if (is_delete_list) {
      json kept = json::array();
      for (auto& v : original) {
        if (std::find(patch.begin(), patch.end(), v) == patch.end()) kept.push_back(std::move(v));
      }
      original = std::move(kept);
      return {};
    }
    merged = json::array();
    for (const json* list : {&original, &patch}) {
      for (const auto& v : *list) {
        if (std::find(merged.begin(), merged.end(), v) == merged.end()) merged.push_back(v);
      }
    }
    patch_list = std::move(patch);
  } else {
    if (merge_key.empty()) return invalid("cannot merge lists without merge key for " + std::string(field));
    patch_list = json::array();
    bool replace = false;
    for (auto& item : patch) {
      auto directive = item.find(kDirectiveMarker);
      if (directive == item.end()) {
        patch_list.push_back(std::move(item));
      } else if (*directive == "delete") {
        auto key = item.find(merge_key);
        if (key == item.end()) return no_merge_key(item, merge_key);
        json kept = json::array();
        for (auto& existing : original) {
          auto existing_key = existing.find(merge_key);
          if (existing_key == existing.end() || *existing_key != *key) kept.push_back(std::move(existing));
        }
        original = std::move(kept);
      } else if (*directive == "replace") {
        replace = true;
      } else if (*directive == "merge") {
        return invalid("merging lists cannot yet be specified in the patch");
      } else {
        return unknown_patch_type(*directive, item);
      }
    }
    if (replace) {
      original = std::move(patch_list);
      sanitize(original);
      patch_list = json::array();
    }
    merged = original;
    for (const auto& item : patch_list) {
      auto key = item.find(merge_key);
      if (key == item.end()) return no_merge_key(item, merge_key);
      auto existing = std::find_if(merged.begin(), merged.end(), [&](const json& e) {
        auto k = e.find(merge_key);
        return k != e.end() && *k == *key;
      });
      json patch_item = item;
      if (existing != merged.end()) {
        if (auto s = merge_map(*existing, patch_item, child); !s) return s;
      } else if (sanitize(patch_item)) {
        merged.push_back(std::move(patch_item));
      }
    }
  }

  auto parts = partition(std::move(merged), patch_list, merge_key, is_map);
  if (!parts) return std::unexpected(parts.error());
  auto ordered = normalize_element_order(std::move(parts->first), std::move(parts->second), patch_list,
                                         original, merge_key, is_map);
  if (!ordered) return std::unexpected(ordered.error());
  original = std::move(*ordered);
  return {};
}

// Merges a list field according to its strategy: merge lists merge, other lists are replaced.
Status merge_list_field(json& original, json& patch, std::string_view field, const FieldRule* rule,
                        bool is_delete_list) {
  if ((rule != nullptr && rule->strategy == Strategy::kMerge) || is_delete_list) {
    return merge_slice(original, patch, field, rule != nullptr ? rule->child : "",
                       rule != nullptr ? rule->merge_key : "", is_delete_list);
  }
  sanitize(patch);
  original = std::move(patch);
  return {};
}

Status apply_retain_keys(json& original, json& patch) {
  auto it = patch.find(kRetainKeys);
  if (it == patch.end()) return {};
  json retain = std::move(*it);
  patch.erase(it);
  if (!retain.is_array()) return bad_request("invalid patch format of retainKeys");
  auto retained = [&](const std::string& key) {
    return std::find(retain.begin(), retain.end(), key) != retain.end();
  };
  for (auto p = patch.begin(); p != patch.end(); ++p) {
    if (p->is_null() || p.key().starts_with(kDeleteFromPrimitiveList) ||
        p.key().starts_with(kSetElementOrder)) {
      continue;
    }
    if (!retained(p.key())) return bad_request("invalid patch format of retainKeys");
  }
  for (auto o = original.begin(); o != original.end();) {
    if (retained(o.key())) {
      ++o;
    } else {
      o = original.erase(o);
    }
  }
  return {};
}

// The relative order of the patch list's items must agree with the `$setElementOrder` list.
Status validate_patch_with_set_order(const json& patch_list, const json& set_order,
                                     std::string_view merge_key) {
  if (patch_list.empty() || set_order.empty()) return {};
  json non_delete = json::array();
  for (const auto& item : patch_list) {
    if (!merge_key.empty()) {
      if (!item.is_object()) return bad_arg_type("map[string]interface {}", item);
      if (is_delete_item(item)) continue;
    }
    non_delete.push_back(item);
  }
  std::size_t p = 0;
  std::size_t s = 0;
  while (p < non_delete.size() && s < set_order.size()) {
    const json& item = non_delete[p];
    if (item.is_object() && item.contains(kDirectiveMarker)) {
      ++p;
      continue;
    }
    bool equal = false;
    if (merge_key.empty()) {
      equal = item == set_order[s];
    } else {
      const json& order_item = set_order[s];
      if (!order_item.is_object()) return bad_arg_type("map[string]interface {}", order_item);
      auto l = item.find(merge_key);
      if (l == item.end()) return no_merge_key(item, merge_key);
      auto r = order_item.find(merge_key);
      if (r == order_item.end()) return no_merge_key(order_item, merge_key);
      equal = *l == *r;
    }
    if (equal) ++p;
    ++s;
  }
  if (p < non_delete.size() && s >= set_order.size()) {
    return invalid("The order in patch list:\n" + go_print(patch_list) +
                   "\n doesn't match $setElementOrder list:\n" + go_print(set_order) + "\n");
  }
  return {};
}

// Handles every `$setElementOrder/<field>` of `patch`, together with the patch list for <field>; both
// are removed from `patch`. Order precedence: `$setElementOrder`, then the patch list, then the live list.
Status merge_set_element_order(json& original, json& patch, std::string_view type) {
  std::vector<std::string> directives;
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it.key().starts_with(kSetElementOrder)) directives.push_back(it.key());
  }
  for (const auto& directive : directives) {
    json set_order = std::move(patch[directive]);
    patch.erase(directive);
    if (!set_order.is_array()) return bad_arg_type("[]interface {}", set_order);
    auto field = extract_key(directive, kSetElementOrder);
    if (!field) return bad_request("invalid patch format of setElementOrder list");

    auto original_it = original.find(*field);
    auto patch_it = patch.find(*field);
    const bool found_original = original_it != original.end();
    const bool found_patch = patch_it != patch.end();
    if (found_original && !original_it->is_array()) return bad_arg_type("[]interface {}", *original_it);
    if (found_patch && !patch_it->is_array()) return bad_arg_type("[]interface {}", *patch_it);
    if (!found_original && !found_patch) continue;
    const json original_list = found_original ? *original_it : json::array();
    const json patch_list = found_patch ? *patch_it : json::array();

    const FieldRule* rule = find_rule(type, *field);
    const std::string_view merge_key = rule != nullptr ? rule->merge_key : "";
    if (auto s = validate_patch_with_set_order(patch_list, set_order, merge_key); !s) return s;

    json merged = original_list;
    if (!found_original) {
      merged = patch_list;
      sanitize(merged);
    } else if (found_patch) {
      json p = patch_list;
      if (auto s = merge_list_field(merged, p, *field, rule, false); !s) return s;
    }

    auto kind = slice_element_kind(original_list, patch_list);
    if (!kind) return std::unexpected(kind.error());
    const bool is_map = *kind == ElemKind::kObject;
    auto parts = partition(std::move(merged), set_order, merge_key, is_map);
    if (!parts) return std::unexpected(parts.error());
    auto ordered = normalize_element_order(std::move(parts->first), std::move(parts->second), set_order,
                                           original_list, merge_key, is_map);
    if (!ordered) return std::unexpected(ordered.error());
    original[*field] = std::move(*ordered);
    patch.erase(*field);
  }
  return {};
}

Status merge_field(json& original, const std::string& patch_key, json& value, std::string_view type) {
  std::string key = patch_key;
  const bool is_delete_list = patch_key.starts_with(kDeleteFromPrimitiveList);
  if (is_delete_list) {
    auto field = extract_key(patch_key, kDeleteFromPrimitiveList);
    if (!field) return bad_request("invalid patch format of primitive list");
    key = *field;
  }
  if (value.is_null()) {
    original.erase(key);
    return {};
  }
  auto existing = original.find(key);
  if (existing == original.end()) {
    if (!is_delete_list && sanitize(value)) original[key] = std::move(value);
    return {};
  }
  const FieldRule* rule = find_rule(type, key);
  if (existing->is_object() && value.is_object()) {
    if (rule != nullptr && rule->strategy == Strategy::kReplace) {
      if (!sanitize(value)) value = json::object();
      *existing = std::move(value);
      return {};
    }
    return merge_map(*existing, value, rule != nullptr ? rule->child : "");
  }
  if (existing->is_array() && value.is_array())
    return merge_list_field(*existing, value, key, rule, is_delete_list);
  if (is_delete_list) return {};
  if (sanitize(value)) {
    *existing = std::move(value);
  } else {
    original.erase(existing);
  }
  return {};
}

// Merges `patch` into `original` (both objects; a null original counts as empty). `patch` is consumed.
Status merge_map(json& original, json& patch, std::string_view type) {
  if (auto directive = patch.find(kDirectiveMarker); directive != patch.end()) {
    if (*directive == "replace") {
      patch.erase(directive);
      sanitize(patch);
      original = std::move(patch);
      return {};
    }
    if (*directive == "delete") {
      original = json::object();
      return {};
    }
    return unknown_patch_type(*directive, patch);
  }
  if (!original.is_object()) original = json::object();
  if (auto s = apply_retain_keys(original, patch); !s) return s;
  if (auto s = merge_set_element_order(original, patch, type); !s) return s;

  // Deletions from primitive lists run after the additions to the same list.
  std::vector<std::string> keys;
  std::vector<std::string> delete_lists;
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    (it.key().starts_with(kDeleteFromPrimitiveList) ? delete_lists : keys).push_back(it.key());
  }
  keys.insert(keys.end(), delete_lists.begin(), delete_lists.end());
  for (const auto& key : keys) {
    if (auto s = merge_field(original, key, patch[key], type); !s) return s;
  }
  return {};
}

PatchResult apply_strategic_merge_patch(const json& original, std::string_view body,
                                        const std::string& kind) {
  auto patch = decode_body(body);
  if (!patch) return std::unexpected(patch.error());
  if (patch->is_null()) *patch = json::object();
  if (!patch->is_object()) {
    return bad_request("error decoding patch: json: cannot unmarshal " + json_word(*patch) +
                       " into Go value of type map[string]interface {}");
  }
  json doc = original;
  if (auto s = merge_map(doc, *patch, root_type(kind)); !s) return std::unexpected(s.error());
  return doc;
}

}  // namespace

std::optional<PatchType> patch_type_from_content_type(std::string_view content_type) {
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
  if (lower == "application/json-patch+json") return PatchType::kJson;
  if (lower == "application/merge-patch+json") return PatchType::kMerge;
  if (lower == "application/strategic-merge-patch+json") return PatchType::kStrategic;
  return std::nullopt;
}

PatchResult apply_patch(const json& original, std::string_view patch_body, PatchType type,
                        const std::string& kind) {
  if (!original.is_object()) return invalid("the object to patch is not a JSON object");
  try {
    switch (type) {
      case PatchType::kJson:
        return apply_json_patch(original, patch_body);
      case PatchType::kMerge:
        return apply_merge_patch(original, patch_body);
      case PatchType::kStrategic:
        return apply_strategic_merge_patch(original, patch_body, kind);
    }
    return invalid("unknown patch type");
  } catch (const std::exception& e) {
    return invalid(std::string("internal error while applying the patch: ") + e.what());
  }
}

}  // namespace kubex::sim
