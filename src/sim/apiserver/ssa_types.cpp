#include "sim/apiserver/ssa_types.h"

#include "sim/apiserver/managed_fields.h"
#include "sim/apiserver/resource.h"
#include "sim/apiserver/schema.h"

namespace kubex::sim::ssa {

using nlohmann::json;

namespace {

enum class Shape { kStruct, kAtomic, kSet, kMapList };

struct Rule {
  std::string_view owner, field;
  Shape shape;
  std::string_view child;  // type of the value, or of the items of a list
  std::vector<std::string> keys;
};

// x-kubernetes-list-type / -map-type / -list-map-keys of the k8s.io/api types kubex-sim serves. "metadata" is
// an ObjectMeta and "status" a Status (conditions by type) wherever no rule says otherwise.
const std::vector<Rule>& rules() {
  static const std::vector<Rule> kRules = {
      {"ObjectMeta", "finalizers", Shape::kSet, "", {}},
      {"ObjectMeta", "ownerReferences", Shape::kMapList, "", {"uid"}},
      {"ObjectMeta", "managedFields", Shape::kAtomic, "", {}},
      {"Status", "conditions", Shape::kMapList, "", {"type"}},
      // Workloads.
      {"Deployment", "spec", Shape::kStruct, "WorkloadSpec", {}},
      {"ReplicaSet", "spec", Shape::kStruct, "WorkloadSpec", {}},
      {"StatefulSet", "spec", Shape::kStruct, "WorkloadSpec", {}},
      {"DaemonSet", "spec", Shape::kStruct, "WorkloadSpec", {}},
      {"Job", "spec", Shape::kStruct, "WorkloadSpec", {}},
      {"ReplicationController", "spec", Shape::kStruct, "WorkloadSpec", {}},
      {"WorkloadSpec", "selector", Shape::kAtomic, "", {}},
      {"WorkloadSpec", "template", Shape::kStruct, "PodTemplateSpec", {}},
      {"CronJob", "spec", Shape::kStruct, "CronJobSpec", {}},
      {"CronJobSpec", "jobTemplate", Shape::kStruct, "JobTemplateSpec", {}},
      {"JobTemplateSpec", "spec", Shape::kStruct, "WorkloadSpec", {}},
      {"PodTemplate", "template", Shape::kStruct, "PodTemplateSpec", {}},
      {"PodTemplateSpec", "spec", Shape::kStruct, "PodSpec", {}},
      // Pods.
      {"Pod", "spec", Shape::kStruct, "PodSpec", {}},
      {"Pod", "status", Shape::kStruct, "PodStatus", {}},
      {"PodStatus", "conditions", Shape::kMapList, "", {"type"}},
      {"PodStatus", "podIPs", Shape::kMapList, "", {"ip"}},
      {"PodStatus", "hostIPs", Shape::kMapList, "", {"ip"}},
      {"PodSpec", "containers", Shape::kMapList, "Container", {"name"}},
      {"PodSpec", "initContainers", Shape::kMapList, "Container", {"name"}},
      {"PodSpec", "ephemeralContainers", Shape::kMapList, "Container", {"name"}},
      {"PodSpec", "volumes", Shape::kMapList, "", {"name"}},
      {"PodSpec", "imagePullSecrets", Shape::kMapList, "", {"name"}},
      {"PodSpec", "nodeSelector", Shape::kAtomic, "", {}},
      {"PodSpec", "hostAliases", Shape::kMapList, "", {"ip"}},
      {"PodSpec", "topologySpreadConstraints", Shape::kMapList, "", {"topologyKey", "whenUnsatisfiable"}},
      {"PodSpec", "schedulingGates", Shape::kMapList, "", {"name"}},
      {"PodSpec", "resourceClaims", Shape::kMapList, "", {"name"}},
      {"Container", "ports", Shape::kMapList, "", {"containerPort", "protocol"}},
      {"Container", "env", Shape::kMapList, "", {"name"}},
      {"Container", "volumeMounts", Shape::kMapList, "", {"mountPath"}},
      {"Container", "volumeDevices", Shape::kMapList, "", {"devicePath"}},
      // Services.
      {"Service", "spec", Shape::kStruct, "ServiceSpec", {}},
      {"ServiceSpec", "ports", Shape::kMapList, "", {"port", "protocol"}},
      {"ServiceSpec", "selector", Shape::kAtomic, "", {}},
      {"ServiceAccount", "secrets", Shape::kMapList, "", {"name"}},
      // Nodes.
      {"Node", "spec", Shape::kStruct, "NodeSpec", {}},
      {"Node", "status", Shape::kStruct, "NodeStatus", {}},
      {"NodeSpec", "podCIDRs", Shape::kSet, "", {}},
      {"NodeStatus", "conditions", Shape::kMapList, "", {"type"}},
      {"NodeStatus", "addresses", Shape::kMapList, "", {"type"}},
      // Policy.
      {"PodDisruptionBudget", "spec", Shape::kStruct, "PodDisruptionBudgetSpec", {}},
      {"PodDisruptionBudgetSpec", "selector", Shape::kAtomic, "", {}},
      // Admission registration.
      {"MutatingWebhookConfiguration", "webhooks", Shape::kMapList, "Webhook", {"name"}},
      {"ValidatingWebhookConfiguration", "webhooks", Shape::kMapList, "Webhook", {"name"}},
      {"Webhook", "namespaceSelector", Shape::kAtomic, "", {}},
      {"Webhook", "objectSelector", Shape::kAtomic, "", {}},
      {"Webhook", "matchConditions", Shape::kMapList, "", {"name"}},
  };
  return kRules;
}

const Rule* find_rule(std::string_view owner, std::string_view field) {
  for (const auto& r : rules()) {
    if (r.owner == owner && r.field == field) return &r;
  }
  return nullptr;
}

const std::vector<std::string> kNoKeys;

TypePos named(std::string_view name) {
  TypePos t;
  t.builtin = name;
  return t;
}
TypePos deduced() {
  TypePos t;
  t.src = TypePos::Src::kDeduced;
  return t;
}

TypePos from_schema(const json* node) {
  TypePos t;
  t.src = TypePos::Src::kSchema;
  t.schema = node;
  if (!node || !node->is_object()) return deduced();
  std::string type = node->value("type", "");
  if (type == "object") {
    t.atomic = node->value("x-kubernetes-map-type", "") == "atomic";
  } else if (type != "array" && (!type.empty() || node->value("x-kubernetes-int-or-string", false))) {
    t.scalar = true;
  } else if (type.empty() && !node->contains("properties") && !node->contains("additionalProperties")) {
    return deduced();  // x-kubernetes-preserve-unknown-fields without a type
  }
  return t;
}

}  // namespace

TypePos TypePos::field(const std::string& key, bool& declared) const {
  declared = true;
  if (root && key == "metadata") return named("ObjectMeta");
  if (root && (key == "apiVersion" || key == "kind")) return named("");
  switch (src) {
    case Src::kDeduced:
      declared = false;
      return deduced();
    case Src::kBuiltin: {
      const Rule* r = find_rule(builtin, key);
      if (!r && key == "metadata") return named("ObjectMeta");
      if (!r && key == "status") return named("Status");
      if (!r) {
        // Maps of strings and plain structs behave alike for the sets; lists without a rule are atomic.
        if (builtin == "ObjectMeta" && (key == "labels" || key == "annotations")) return named("StringMap");
        if (builtin == "StringMap") declared = false;
        return named("");
      }
      TypePos t = named(r->child);
      t.atomic = r->shape == Shape::kAtomic;
      // A list rule is kept on the list position through its owner/field; store the rule's name pair.
      if (r->shape == Shape::kSet || r->shape == Shape::kMapList) t.list_rule = r;
      return t;
    }
    case Src::kSchema: {
      if (!schema) return deduced();
      if (auto p = schema->find("properties"); p != schema->end() && p->is_object() && p->contains(key)) {
        return from_schema(&(*p)[key]);
      }
      declared = false;
      if (auto a = schema->find("additionalProperties"); a != schema->end() && a->is_object()) return from_schema(&*a);
      return deduced();
    }
  }
  return deduced();
}

ListKind TypePos::list_kind() const {
  if (src == Src::kBuiltin && list_rule) {
    const Rule* r = static_cast<const Rule*>(list_rule);
    return r->shape == Shape::kSet ? ListKind::kSet : ListKind::kMap;
  }
  if (src == Src::kSchema && schema) {
    std::string lt = schema->value("x-kubernetes-list-type", "atomic");
    if (lt == "set") return ListKind::kSet;
    if (lt == "map") return ListKind::kMap;
  }
  return ListKind::kAtomic;
}

const std::vector<std::string>& TypePos::list_keys() const {
  if (src == Src::kBuiltin && list_rule) return static_cast<const Rule*>(list_rule)->keys;
  if (src == Src::kSchema && schema) {
    thread_local std::vector<std::string> keys;
    keys.clear();
    if (auto k = schema->find("x-kubernetes-list-map-keys"); k != schema->end() && k->is_array()) {
      for (const auto& x : *k) {
        if (x.is_string()) keys.push_back(x.get<std::string>());
      }
    }
    return keys;
  }
  return kNoKeys;
}

TypePos TypePos::item() const {
  if (src == Src::kBuiltin && list_rule) return named(static_cast<const Rule*>(list_rule)->child);
  if (src == Src::kSchema && schema) {
    if (auto i = schema->find("items"); i != schema->end() && i->is_object()) return from_schema(&*i);
  }
  if (src == Src::kBuiltin) return named("");
  return deduced();
}

json TypePos::key_default(const std::string& key) const {
  if (src == Src::kBuiltin && key == "protocol") return "TCP";
  if (src == Src::kSchema && schema) {
    if (auto i = schema->find("items"); i != schema->end() && i->is_object()) {
      if (auto p = i->find("properties"); p != i->end() && p->is_object() && p->contains(key)) {
        const json& prop = (*p)[key];
        if (prop.is_object() && prop.contains("default")) return prop["default"];
      }
    }
  }
  return nullptr;
}

TypePos root_type(const ResourceInfo& r) {
  TypePos t = r.is_custom ? (r.schema ? from_schema(&r.schema->raw()) : deduced()) : named("Root");
  if (!r.is_custom) {
    for (const auto& rule : rules()) {
      if (rule.owner == r.kind) t = named(rule.owner);
    }
  }
  t.root = true;
  t.atomic = false;
  return t;
}

std::string item_pe(const TypePos& list, const json& item, std::size_t index) {
  switch (list.list_kind()) {
    case ListKind::kSet:
      return value_pe(item);
    case ListKind::kMap: {
      if (!item.is_object()) return "";
      json key = json::object();
      for (const auto& k : list.list_keys()) {
        if (auto it = item.find(k); it != item.end() && !it->is_null()) {
          key[k] = *it;
        } else if (json d = list.key_default(k); !d.is_null()) {
          key[k] = d;
        }
      }
      return key_pe(key);
    }
    case ListKind::kAtomic:
      break;
  }
  return index_pe(index);
}

}  // namespace kubex::sim::ssa
