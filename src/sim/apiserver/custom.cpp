#include "sim/apiserver/custom.h"

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "sim/apiserver/cel.h"
#include "sim/apiserver/schema.h"

namespace kubex::sim::custom {

using nlohmann::json;

namespace {

StatusCause required(const std::string& field, const std::string& detail = "") {
  return {"FieldValueRequired", field + ": Required value" + (detail.empty() ? "" : ": " + detail), field};
}

StatusCause invalid_value(const std::string& field, const json& v, const std::string& detail) {
  return {"FieldValueInvalid", field + ": Invalid value: " + v.dump() + ": " + detail, field};
}

bool dns_label(const std::string& s) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return s.size() <= 63 && std::regex_match(s, re);
}

bool dns_subdomain(const std::string& s) {
  static const std::regex re("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");
  return s.size() <= 253 && std::regex_match(s, re);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The CEL evaluator is plugged into every compiled schema (x-kubernetes-validations).
ValidationRulesHook rules_hook();
void check_schema_rules(const json& node, const std::string& path, std::vector<StatusCause>& out);

std::shared_ptr<const StructuralSchema> compile_schema(const json& version, const std::string& path,
                                                       std::vector<StatusCause>* errors) {
  if (!version.contains("schema") || !version["schema"].contains("openAPIV3Schema")) return nullptr;
  std::vector<Cause> causes;
  auto compiled = StructuralSchema::compile(version["schema"]["openAPIV3Schema"], path + ".schema.openAPIV3Schema",
                                            &causes);
  if (!compiled) {
    if (errors) {
      if (causes.empty()) {
        errors->push_back({"FieldValueInvalid", compiled.error().str(), compiled.error().path});
      }
      for (const auto& c : causes) errors->push_back({c.reason, c.message, c.field});
    }
    return nullptr;
  }
  auto hook = rules_hook();
  if (hook) compiled->set_validation_rules_hook(hook);
  return std::make_shared<const StructuralSchema>(std::move(*compiled));
}

}  // namespace

// kube-apiserver (apiextensions validation): the root `metadata` schema may hold only `type: object` and the
// `name`/`generateName` properties; anything else (a description included) refuses the CRD.
static void check_root_metadata(const json& root, std::vector<StatusCause>& out) {
  if (!root.is_object() || !root.contains("properties") || !root["properties"].is_object() ||
      !root["properties"].contains("metadata")) {
    return;
  }
  const json& m = root["properties"]["metadata"];
  bool ok = m.is_object();
  for (auto it = ok ? m.begin() : json::const_iterator(); ok && it != m.end(); ++it) {
    if (it.key() == "type") {
      ok = it.value() == "object";
    } else if (it.key() == "properties" && it.value().is_object()) {
      for (auto p = it.value().begin(); ok && p != it.value().end(); ++p)
        ok = p.key() == "name" || p.key() == "generateName";
    } else {
      ok = false;
    }
  }
  if (!ok) {
    const std::string field = "spec.validation.openAPIV3Schema.properties[metadata]";
    out.push_back({"FieldValueForbidden",
                   field + ": Forbidden: must not specify anything other than name and generateName, but metadata "
                           "is implicitly specified",
                   field});
  }
}

std::vector<StatusCause> validate_crd(const json& crd, const json* old) {
  std::vector<StatusCause> out;
  const json empty = json::object();
  const json& spec = crd.contains("spec") && crd["spec"].is_object() ? crd["spec"] : empty;
  std::string group = spec.value("group", "");
  const json names = spec.value("names", json::object());
  std::string plural = names.value("plural", "");
  std::string kind = names.value("kind", "");
  std::string name = crd["metadata"].value("name", "");
  if (group.empty()) {
    out.push_back(required("spec.group"));
  } else if (!dns_subdomain(group) || group.find('.') == std::string::npos) {
    out.push_back(invalid_value("spec.group", group, "should be a domain with at least one dot"));
  }
  if (plural.empty()) {
    out.push_back(required("spec.names.plural"));
  } else if (!dns_label(plural)) {
    out.push_back(invalid_value("spec.names.plural", plural,
                                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"));
  }
  if (kind.empty()) out.push_back(required("spec.names.kind"));
  if (!plural.empty() && !group.empty() && name != plural + "." + group) {
    out.push_back(invalid_value("metadata.name", name, "must be spec.names.plural+\".\"+spec.group"));
  }
  std::string scope = spec.value("scope", "");
  if (scope != "Namespaced" && scope != "Cluster") {
    out.push_back({"FieldValueNotSupported",
                   "spec.scope: Unsupported value: \"" + scope + "\": supported values: \"Cluster\", \"Namespaced\"",
                   "spec.scope"});
  }
  if (old && (*old)["spec"].value("scope", "") != scope) {
    out.push_back(invalid_value("spec.scope", scope, "field is immutable"));
  }
  if (!spec.contains("versions") || !spec["versions"].is_array() || spec["versions"].empty()) {
    out.push_back(required("spec.versions", "must have exactly one version marked as storage version"));
    return out;
  }
  int storage = 0;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < spec["versions"].size(); ++i) {
    const json& v = spec["versions"][i];
    std::string p = "spec.versions[" + std::to_string(i) + "]";
    std::string vn = v.value("name", "");
    if (vn.empty()) out.push_back(required(p + ".name"));
    else if (!dns_label(vn)) out.push_back(invalid_value(p + ".name", vn, "must be a DNS-1035 label"));
    else if (!seen.insert(vn).second) out.push_back({"FieldValueDuplicate", p + ".name: Duplicate value: \"" + vn + "\"", p + ".name"});
    if (v.value("storage", false)) ++storage;
    if (!v.contains("served")) out.push_back(required(p + ".served"));
    if (!v.contains("schema") || !v["schema"].contains("openAPIV3Schema")) {
      out.push_back(required(p + ".schema.openAPIV3Schema", "schemas are required"));
    } else if (compile_schema(v, p, &out)) {
      check_root_metadata(v["schema"]["openAPIV3Schema"], out);
      check_schema_rules(v["schema"]["openAPIV3Schema"], p + ".schema.openAPIV3Schema", out);
    }
  }
  if (storage != 1) {
    out.push_back(invalid_value("spec.versions", spec["versions"].size(),
                                "must have exactly one version marked as storage version"));
  }
  return out;
}

void set_crd_status(json& crd, const std::string& now) {
  json& spec = crd["spec"];
  json names = spec.value("names", json::object());
  std::string kind = names.value("kind", "");
  if (!names.contains("singular")) names["singular"] = lower(kind);
  if (!names.contains("listKind")) names["listKind"] = kind + "List";
  spec["names"] = names;
  json& st = crd["status"];
  if (!st.is_object()) st = json::object();
  std::string prev_time = now;
  if (st.contains("conditions") && st["conditions"].is_array()) {
    for (const auto& c : st["conditions"]) {
      if (c.value("type", "") == "Established") prev_time = c.value("lastTransitionTime", now);
    }
  }
  st["acceptedNames"] = names;
  st["conditions"] = json::array({{{"type", "NamesAccepted"},
                                   {"status", "True"},
                                   {"reason", "NoConflicts"},
                                   {"message", "no conflicts found"},
                                   {"lastTransitionTime", prev_time}},
                                  {{"type", "Established"},
                                   {"status", "True"},
                                   {"reason", "InitialNamesAccepted"},
                                   {"message", "the initial names have been accepted"},
                                   {"lastTransitionTime", prev_time}}});
  json stored = json::array();
  if (spec.contains("versions") && spec["versions"].is_array()) {
    for (const auto& v : spec["versions"]) {
      if (v.value("storage", false)) stored.push_back(v.value("name", ""));
    }
  }
  st["storedVersions"] = stored;
  json& meta = crd["metadata"];
  json fins = meta.value("finalizers", json::array());
  bool has = false;
  for (const auto& f : fins) has = has || f == "customresourcecleanup.apiextensions.k8s.io";
  if (!has && !meta.contains("deletionTimestamp")) {
    fins.push_back("customresourcecleanup.apiextensions.k8s.io");
    meta["finalizers"] = fins;
  }
}

std::vector<ResourcePtr> crd_resources(const json& crd) {
  std::vector<ResourcePtr> out;
  if (!crd.contains("spec") || !crd["spec"].is_object()) return out;
  const json& spec = crd["spec"];
  const json names = spec.value("names", json::object());
  if (!spec.contains("versions") || !spec["versions"].is_array()) return out;
  for (std::size_t i = 0; i < spec["versions"].size(); ++i) {
    const json& v = spec["versions"][i];
    if (!v.value("served", false)) continue;
    auto r = std::make_shared<ResourceInfo>();
    r->group = spec.value("group", "");
    r->version = v.value("name", "");
    r->plural = names.value("plural", "");
    r->kind = names.value("kind", "");
    r->singular = names.value("singular", lower(r->kind));
    r->namespaced = spec.value("scope", "Namespaced") == "Namespaced";
    for (const auto& s : names.value("shortNames", json::array())) r->short_names.push_back(s.get<std::string>());
    for (const auto& c : names.value("categories", json::array())) r->categories.push_back(c.get<std::string>());
    r->verbs = {"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"};
    const json subs = v.value("subresources", json::object());
    r->has_status = subs.contains("status");
    if (subs.contains("scale") && subs["scale"].is_object()) {
      r->has_scale = true;
      r->scale_spec_replicas_path = subs["scale"].value("specReplicasPath", "");
      r->scale_status_replicas_path = subs["scale"].value("statusReplicasPath", "");
      r->scale_label_selector_path = subs["scale"].value("labelSelectorPath", "");
    }
    r->is_custom = true;
    r->crd_name = crd["metadata"].value("name", "");
    r->schema = compile_schema(v, "spec.versions[" + std::to_string(i) + "]", nullptr);
    r->crd_version = std::make_shared<const json>(v);
    out.push_back(r);
  }
  return out;
}

std::vector<std::string> prune(const ResourceInfo& r, json& obj) {
  if (!r.schema) return {};
  return r.schema->prune(obj);
}

void apply_defaults(const ResourceInfo& r, json& obj) {
  if (r.schema) r.schema->apply_defaults(obj);
}

std::vector<StatusCause> validate(const ResourceInfo& r, const json& obj, const json* old) {
  std::vector<StatusCause> out;
  if (!r.schema) return out;
  for (const auto& c : r.schema->validate(obj, old)) out.push_back({c.reason, c.message, c.field});
  return out;
}

namespace {

ValidationRulesHook rules_hook() {
  return [](const json& rules, const json& self, const json* old_self, const std::string& path,
            std::vector<Cause>& out) {
    for (auto& v : cel::apply_rules(rules, self, old_self, path)) {
      out.push_back(Cause{std::move(v.reason), std::move(v.field), std::move(v.message), std::move(v.bad_value)});
    }
  };
}

// kube-apiserver (ValidFieldPath): a rule's fieldPath must name a property the schema declares. Checked here
// for paths of `.name` segments only (the form our CRDs use); other forms get the syntax check alone.
bool field_path_declared(const json& node, const std::string& fp) {
  const json* at = &node;
  std::size_t i = 0;
  while (i < fp.size()) {
    if (fp[i] != '.') return true;  // ['key'] forms: not checked
    std::size_t end = fp.find_first_of(".[", i + 1);
    std::string name = fp.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
    if (name.empty() || name.find_first_of("]'") != std::string::npos) return true;  // syntax: check_rules
    if (auto props = at->find("properties"); props != at->end() && props->is_object() && props->contains(name)) {
      at = &(*props)[name];
    } else if (auto ap = at->find("additionalProperties"); ap != at->end() && ap->is_object()) {
      at = &*ap;
    } else {
      return false;
    }
    if (end == std::string::npos) break;
    i = end;
  }
  return true;
}

// Every x-kubernetes-validations list in a schema, with kube-apiserver's schema path of its node.
void check_schema_rules(const json& node, const std::string& path, std::vector<StatusCause>& out) {
  if (!node.is_object()) return;
  if (auto it = node.find("x-kubernetes-validations"); it != node.end()) {
    for (const auto& v : cel::check_rules(*it, path)) out.push_back({v.reason, v.message, v.field});
    for (std::size_t i = 0; it->is_array() && i < it->size(); ++i) {
      const json& r = (*it)[i];
      if (!r.is_object() || !r.contains("fieldPath") || !r["fieldPath"].is_string()) continue;
      const std::string fp = r["fieldPath"].get<std::string>();
      if (field_path_declared(node, fp)) continue;
      const std::string field = path + ".x-kubernetes-validations[" + std::to_string(i) + "].fieldPath";
      out.push_back({"FieldValueInvalid", field + ": Invalid value: " + json(fp).dump() + ": must be a valid path",
                     field});
    }
  }
  if (auto it = node.find("properties"); it != node.end() && it->is_object()) {
    for (auto p = it->begin(); p != it->end(); ++p) check_schema_rules(p.value(), path + ".properties[" + p.key() + "]", out);
  }
  if (auto it = node.find("items"); it != node.end()) check_schema_rules(*it, path + ".items", out);
  if (auto it = node.find("additionalProperties"); it != node.end()) {
    check_schema_rules(*it, path + ".additionalProperties", out);
  }
}

}  // namespace

}  // namespace kubex::sim::custom
