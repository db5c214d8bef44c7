#include "sim/apiserver/discovery.h"

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "sim/apiserver/schema.h"

namespace kubex::sim {

using nlohmann::json;

json discovery_core_versions(const std::string& server_address) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}};
}

namespace {

json group_entry(const std::string& name, const std::vector<std::string>& versions) {
  json vs = json::array();
  for (const auto& v : versions) vs.push_back({{"groupVersion", name + "/" + v}, {"version", v}});
  return {{"name", name}, {"versions", vs}, {"preferredVersion", vs.front()}};
}

}  // namespace

json discovery_group_list(const Registry& registry) {
  json groups = json::array();
  for (const auto& [name, versions] : registry.groups()) {
    if (name.empty()) continue;
    groups.push_back(group_entry(name, versions));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}};
}

json discovery_group(const Registry& registry, const std::string& group) {
  for (const auto& [name, versions] : registry.groups()) {
    if (name == group && !name.empty()) {
      json g = group_entry(name, versions);
      g["kind"] = "APIGroup";
      g["apiVersion"] = "v1";
      return g;
    }
  }
  return nullptr;
}

json discovery_resource_list(const Registry& registry, const std::string& group, const std::string& version) {
  json resources = json::array();
  bool found = false;
  for (const auto& r : registry.all()) {
    if (r->group != group || r->version != version) continue;
    found = true;
    json e = {{"name", r->plural},
              {"singularName", r->singular},
              {"namespaced", r->namespaced},
              {"kind", r->kind},
              {"verbs", r->verbs},
              {"storageVersionHash", common::sha256_hex(r->id()).substr(0, 11)}};
    if (!r->short_names.empty()) e["shortNames"] = r->short_names;
    if (!r->categories.empty()) e["categories"] = r->categories;
    resources.push_back(e);
    if (r->has_status) {
      resources.push_back({{"name", r->plural + "/status"},
                           {"singularName", ""},
                           {"namespaced", r->namespaced},
                           {"kind", r->kind},
                           {"verbs", {"get", "patch", "update"}}});
    }
    if (r->has_scale) {
      resources.push_back({{"name", r->plural + "/scale"},
                           {"singularName", ""},
                           {"namespaced", r->namespaced},
                           {"group", "autoscaling"},
                           {"version", "v1"},
                           {"kind", "Scale"},
                           {"verbs", {"get", "patch", "update"}}});
    }
    for (const auto& s : r->extra_subresources) {
      json se = {{"name", r->plural + "/" + s.name},
                 {"singularName", ""},
                 {"namespaced", r->namespaced},
                 {"kind", s.kind},
                 {"verbs", s.verbs}};
      if (!s.group.empty()) se["group"] = s.group;
      se["version"] = s.version;
      resources.push_back(se);
    }
  }
  if (!found) return nullptr;
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group.empty() ? version : group + "/" + version},
          {"resources", resources}};
}

json version_info(const std::string& minor) {
  return {{"major", "1"},
          {"minor", minor},
          {"gitVersion", "v1." + minor + ".0-kubex-sim"},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-11-01T00:00:00Z"},
          {"goVersion", "go1.23.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

// ------------------------------------------------------------------------------------------------
// OpenAPI

namespace {

std::string reverse_group(const std::string& group) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    auto dot = group.find('.', start);
    parts.push_back(group.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out += ".";
    out += *it;
  }
  return out;
}

std::string schema_name(const ResourceInfo& r) {
  if (r.is_custom) return reverse_group(r.group) + "." + r.version + "." + r.kind;
  std::string g = r.group.empty() ? "core" : r.group;
  if (auto dot = g.find(".k8s.io"); dot != std::string::npos) g = g.substr(0, dot);
  return "io.k8s.api." + g + "." + r.version + "." + r.kind;
}

const char* kObjectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

json object_meta_schema() {
  auto str = [](const char* d) { return json{{"type", "string"}, {"description", d}}; };
  return {{"type", "object"},
          {"description", "ObjectMeta is metadata that all persisted resources must have, which includes all objects "
                          "users must create."},
          {"properties",
           {{"name", str("Name must be unique within a namespace.")},
            {"generateName", str("GenerateName is an optional prefix, used by the server, to generate a unique name "
                                 "ONLY IF the Name field has not been provided.")},
            {"namespace", str("Namespace defines the space within which each name must be unique.")},
            {"uid", str("UID is the unique in time and space value for this object.")},
            {"resourceVersion", str("An opaque value that represents the internal version of this object.")},
            {"generation", {{"type", "integer"}, {"format", "int64"}, {"description", "A sequence number representing a specific generation of the desired state."}}},
            {"creationTimestamp", {{"type", "string"}, {"format", "date-time"}, {"description", "Time when this object was created."}}},
            {"deletionTimestamp", {{"type", "string"}, {"format", "date-time"}, {"description", "Time at which this resource will be deleted."}}},
            {"labels", {{"type", "object"}, {"additionalProperties", {{"type", "string"}, {"default", ""}}}, {"description", "Map of string keys and values that can be used to organize and categorize objects."}}},
            {"annotations", {{"type", "object"}, {"additionalProperties", {{"type", "string"}, {"default", ""}}}, {"description", "Annotations is an unstructured key value map stored with a resource."}}},
            {"finalizers", {{"type", "array"}, {"items", {{"type", "string"}, {"default", ""}}}, {"description", "Must be empty before the object is deleted from the registry."}}},
            {"ownerReferences", {{"type", "array"}, {"items", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}, {"description", "List of objects depended by this object."}}}}}};
}

json kind_schema(const ResourceInfo& r) {
  json gvk = json::array({{{"group", r.group}, {"kind", r.kind}, {"version", r.version}}});
  json base;
  if (r.is_custom && r.schema) {
    base = r.schema->raw();
  } else {
    base = {{"type", "object"},
            {"description", r.kind + " (served by kubex-sim; fields are not itemised for built-in kinds)."},
            {"properties",
             {{"spec", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}, {"description", "Spec of the " + r.kind + "."}}},
              {"status", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}, {"description", "Most recently observed status of the " + r.kind + "."}}}}}};
  }
  if (!base.is_object()) base = json::object();
  base["x-kubernetes-group-version-kind"] = gvk;
  auto& props = base["properties"];
  if (!props.is_object()) props = json::object();
  props["apiVersion"] = {{"type", "string"},
                         {"description", "APIVersion defines the versioned schema of this representation of an object."}};
  props["kind"] = {{"type", "string"},
                   {"description", "Kind is a string value representing the REST resource this object represents."}};
  props["metadata"] = {{"allOf", json::array({{{"$ref", std::string("#/components/schemas/") + kObjectMeta}}})},
                       {"default", json::object()},
                       {"description", "Standard object's metadata."}};
  return base;
}

json param(const char* name, const char* desc) {
  return {{"name", name}, {"in", "query"}, {"description", desc}, {"schema", {{"type", "string"}}}, {"uniqueItems", true}};
}

json operation(const ResourceInfo& r, const std::string& action, const std::string& id, bool with_body,
               const std::vector<std::string>& body_types) {
  json ref = {{"$ref", "#/components/schemas/" + schema_name(r)}};
  json op = {{"operationId", id},
             {"tags", {r.group.empty() ? "core_" + r.version : r.group + "_" + r.version}},
             {"description", action + " " + r.kind},
             {"x-kubernetes-action", action},
             {"x-kubernetes-group-version-kind", {{"group", r.group}, {"kind", r.kind}, {"version", r.version}}},
             {"responses", {{"200", {{"description", "OK"}, {"content", {{"application/json", {{"schema", ref}}}}}}}}}};
  json params = json::array({param("dryRun", "When present, indicates that modifications should not be persisted.")});
  if (action != "delete" && action != "get" && action != "list") {
    params.push_back(param("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."));
    params.push_back(param("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields."));
  }
  op["parameters"] = params;
  if (with_body) {
    json content = json::object();
    for (const auto& t : body_types) content[t] = {{"schema", ref}};
    op["requestBody"] = {{"content", content}, {"required", true}};
  }
  return op;
}

}  // namespace

json openapi_v3_document(const Registry& registry, const std::string& gv_path) {
  std::string group, version;
  if (gv_path.rfind("api/", 0) == 0) {
    version = gv_path.substr(4);
  } else if (gv_path.rfind("apis/", 0) == 0) {
    std::string rest = gv_path.substr(5);
    auto slash = rest.find('/');
    if (slash == std::string::npos) return nullptr;
    group = rest.substr(0, slash);
    version = rest.substr(slash + 1);
  } else {
    return nullptr;
  }
  json paths = json::object();
  json schemas = json::object();
  bool found = false;
  for (const auto& r : registry.all()) {
    if (r->group != group || r->version != version) continue;
    found = true;
    schemas[schema_name(*r)] = kind_schema(*r);
    std::string prefix = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
    std::string coll = r->namespaced ? prefix + "/namespaces/{namespace}/" + r->plural : prefix + "/" + r->plural;
    std::string item = coll + "/{name}";
    std::string id_kind = (r->namespaced ? "Namespaced" : "") + r->kind;
    // Built-in kinds do not advertise strategic merge patch here: kubectl then computes apply patches from
    // its compiled type metadata, which is complete (this document does not itemise built-in fields).
    std::vector<std::string> patch_types = {"application/json-patch+json", "application/merge-patch+json",
                                            "application/apply-patch+yaml"};
    paths[item] = {{"get", operation(*r, "get", "read" + id_kind, false, {})},
                   {"put", operation(*r, "put", "replace" + id_kind, true, {"application/json", "application/yaml"})},
                   {"patch", operation(*r, "patch", "patch" + id_kind, true, patch_types)},
                   {"delete", operation(*r, "delete", "delete" + id_kind, false, {})}};
    paths[coll] = {{"get", operation(*r, "list", "list" + id_kind, false, {})},
                   {"post", operation(*r, "post", "create" + id_kind, true, {"application/json", "application/yaml"})}};
    if (r->has_status) {
      paths[item + "/status"] = {{"get", operation(*r, "get", "read" + id_kind + "Status", false, {})},
                                 {"put", operation(*r, "put", "replace" + id_kind + "Status", true, {"application/json"})},
                                 {"patch", operation(*r, "patch", "patch" + id_kind + "Status", true, patch_types)}};
    }
  }
  if (!found) return nullptr;
  schemas[kObjectMeta] = object_meta_schema();
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0-kubex-sim"}}},
          {"paths", paths},
          {"components", {{"schemas", schemas}}}};
}

json openapi_v3_root(const Registry& registry, const std::function<std::string(const std::string&)>& hash_of) {
  json paths = json::object();
  for (const auto& [group, versions] : registry.groups()) {
    for (const auto& v : versions) {
      std::string key = group.empty() ? "api/" + v : "apis/" + group + "/" + v;
      paths[key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + hash_of(key)}};
    }
  }
  return {{"paths", paths}};
}

json openapi_v2_document(const Registry& registry) {
  json definitions = json::object();
  for (const auto& r : registry.all()) {
    json s = kind_schema(*r);
    s["properties"]["metadata"] = {{"$ref", std::string("#/definitions/") + kObjectMeta}};
    definitions[schema_name(*r)] = s;
  }
  definitions[kObjectMeta] = object_meta_schema();
  return {{"swagger", "2.0"},
          {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0-kubex-sim"}}},
          {"paths", json::object()},
          {"definitions", definitions}};
}

namespace {
// Protobuf wire format: a length-delimited field (wire type 2) holding `payload`.
std::string pb_bytes(int field, const std::string& payload) {
  std::string out;
  out += static_cast<char>((field << 3) | 2);
  std::size_t n = payload.size();
  do {
    unsigned char b = n & 0x7f;
    n >>= 7;
    if (n) b |= 0x80;
    out += static_cast<char>(b);
  } while (n);
  return out + payload;
}
}  // namespace

std::string openapi_v2_protobuf_minimal() {
  // openapi.v2.Document { swagger = 1; info = 2 (Info { title = 1; version = 2 }) }
  std::string info = pb_bytes(1, "Kubernetes") + pb_bytes(2, "v1.32.0-kubex-sim");
  return pb_bytes(1, "2.0") + pb_bytes(2, info);
}

}  // namespace kubex::sim
