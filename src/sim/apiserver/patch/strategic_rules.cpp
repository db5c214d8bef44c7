#include "sim/apiserver/patch/strategic_rules.h"

namespace kubex::sim::patch {

namespace {

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
    // Webhook configurations (admissionregistration/v1): webhooks merge by name.
    {"MutatingWebhookConfiguration", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"MutatingWebhookConfiguration", "webhooks", Strategy::kMerge, "name", ""},
    {"ValidatingWebhookConfiguration", "metadata", Strategy::kDefault, "", "ObjectMeta"},
    {"ValidatingWebhookConfiguration", "webhooks", Strategy::kMerge, "name", ""},
};



}  // namespace

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

}  // namespace kubex::sim::patch
