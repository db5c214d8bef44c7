// Descriptor tables of the kinds decode_k8s_protobuf understands. Field numbers are those of the
// generated.proto files of k8s.io/api and k8s.io/apimachinery (v0.32); presence follows the Go field:
//   O = kOmitEmpty (value with omitempty), P = kOptional (pointer with omitempty),
//   A = kAlways (struct, or value without omitempty), N = kNullable (pointer without omitempty).
// Fields not listed (managedFields, affinity, lifecycle, topologySpreadConstraints, most volume sources,
// most status conditions, ...) are skipped like unknown fields.
#include <algorithm>
#include <iterator>

#include "sim/apiserver/protobuf.h"

namespace kubex::sim {
namespace {

using enum ProtoType;
constexpr auto O = ProtoPresence::kOmitEmpty;
constexpr auto P = ProtoPresence::kOptional;
constexpr auto A = ProtoPresence::kAlways;
constexpr auto N = ProtoPresence::kNullable;

constexpr ProtoField str(std::uint32_t n, std::string_view name, ProtoPresence p = O) {
  return {n, name, kString, p, false, nullptr};
}
constexpr ProtoField strs(std::uint32_t n, std::string_view name, ProtoPresence p = O) {
  return {n, name, kString, p, true, nullptr};
}
constexpr ProtoField i32(std::uint32_t n, std::string_view name, ProtoPresence p = O) {
  return {n, name, kInt32, p, false, nullptr};
}
constexpr ProtoField i64(std::uint32_t n, std::string_view name, ProtoPresence p = O) {
  return {n, name, kInt64, p, false, nullptr};
}
constexpr ProtoField flag(std::uint32_t n, std::string_view name, ProtoPresence p = O) {
  return {n, name, kBool, p, false, nullptr};
}
constexpr ProtoField msg(std::uint32_t n, std::string_view name, const ProtoMessage& m, ProtoPresence p = A) {
  return {n, name, kMessage, p, false, &m};
}
constexpr ProtoField msgs(std::uint32_t n, std::string_view name, const ProtoMessage& m,
                          ProtoPresence p = O) {
  return {n, name, kMessage, p, true, &m};
}
constexpr ProtoField inline_msg(std::uint32_t n, const ProtoMessage& m) {
  return {n, {}, kInline, A, false, &m};
}
constexpr ProtoField string_map(std::uint32_t n, std::string_view name) {
  return {n, name, kStringMap, O, false, nullptr};
}
constexpr ProtoField bytes_map(std::uint32_t n, std::string_view name) {
  return {n, name, kBytesMap, O, false, nullptr};
}
constexpr ProtoField resource_list(std::uint32_t n, std::string_view name) {
  return {n, name, kQuantityMap, O, false, nullptr};
}
constexpr ProtoField quantity(std::uint32_t n, std::string_view name, ProtoPresence p = A) {
  return {n, name, kQuantity, p, false, nullptr};
}
constexpr ProtoField int_or_string(std::uint32_t n, std::string_view name, ProtoPresence p = A) {
  return {n, name, kIntOrString, p, false, nullptr};
}
constexpr ProtoField timestamp(std::uint32_t n, std::string_view name, ProtoPresence p = A) {
  return {n, name, kTime, p, false, nullptr};
}

// KUBEX_PROTO_MESSAGE(kFoo, "group/version.Foo", fields...) defines the field list and the message.
#define KUBEX_PROTO_MESSAGE(var, go_name, ...)         \
  constexpr ProtoField var##_fields[] = {__VA_ARGS__}; \
  constexpr ProtoMessage var{go_name, var##_fields};

// ---- meta/v1 ----

KUBEX_PROTO_MESSAGE(kOwnerReference, "meta/v1.OwnerReference", str(5, "apiVersion", A), str(1, "kind", A),
                    str(3, "name", A), str(4, "uid", A), flag(6, "controller", P),
                    flag(7, "blockOwnerDeletion", P))
KUBEX_PROTO_MESSAGE(kObjectMeta, "meta/v1.ObjectMeta", str(1, "name"), str(2, "generateName"),
                    str(3, "namespace"), str(4, "selfLink"), str(5, "uid"), str(6, "resourceVersion"),
                    i64(7, "generation"), timestamp(8, "creationTimestamp"),
                    timestamp(9, "deletionTimestamp", P), i64(10, "deletionGracePeriodSeconds", P),
                    string_map(11, "labels"), string_map(12, "annotations"),
                    msgs(13, "ownerReferences", kOwnerReference), strs(14, "finalizers"))
KUBEX_PROTO_MESSAGE(kLabelSelectorRequirement, "meta/v1.LabelSelectorRequirement", str(1, "key", A),
                    str(2, "operator", A), strs(3, "values"))
KUBEX_PROTO_MESSAGE(kLabelSelector, "meta/v1.LabelSelector", string_map(1, "matchLabels"),
                    msgs(2, "matchExpressions", kLabelSelectorRequirement))
KUBEX_PROTO_MESSAGE(kCondition, "meta/v1.Condition", str(1, "type", A), str(2, "status", A),
                    i64(3, "observedGeneration"), timestamp(4, "lastTransitionTime"), str(5, "reason", A),
                    str(6, "message", A))
KUBEX_PROTO_MESSAGE(kPreconditions, "meta/v1.Preconditions", str(1, "uid", P), str(2, "resourceVersion", P))
KUBEX_PROTO_MESSAGE(kDeleteOptions, "meta/v1.DeleteOptions", i64(1, "gracePeriodSeconds", P),
                    msg(2, "preconditions", kPreconditions, P), flag(3, "orphanDependents", P),
                    str(4, "propagationPolicy", P), strs(5, "dryRun"),
                    flag(6, "ignoreStoreReadErrorWithClusterBreakingPotential", P))

// ---- core/v1: small kinds ----

KUBEX_PROTO_MESSAGE(kNamespaceSpec, "core/v1.NamespaceSpec", strs(1, "finalizers"))
KUBEX_PROTO_MESSAGE(kNamespaceStatus, "core/v1.NamespaceStatus", str(1, "phase"))
KUBEX_PROTO_MESSAGE(kNamespace, "core/v1.Namespace", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kNamespaceSpec), msg(3, "status", kNamespaceStatus))
KUBEX_PROTO_MESSAGE(kConfigMap, "core/v1.ConfigMap", msg(1, "metadata", kObjectMeta), flag(4, "immutable", P),
                    string_map(2, "data"), bytes_map(3, "binaryData"))
KUBEX_PROTO_MESSAGE(kSecret, "core/v1.Secret", msg(1, "metadata", kObjectMeta), flag(5, "immutable", P),
                    bytes_map(2, "data"), string_map(4, "stringData"), str(3, "type"))
KUBEX_PROTO_MESSAGE(kObjectReference, "core/v1.ObjectReference", str(1, "kind"), str(2, "namespace"),
                    str(3, "name"), str(4, "uid"), str(5, "apiVersion"), str(6, "resourceVersion"),
                    str(7, "fieldPath"))
KUBEX_PROTO_MESSAGE(kLocalObjectReference, "core/v1.LocalObjectReference", str(1, "name"))
KUBEX_PROTO_MESSAGE(kTypedLocalObjectReference, "core/v1.TypedLocalObjectReference", str(1, "apiGroup", N),
                    str(2, "kind", A), str(3, "name", A))
KUBEX_PROTO_MESSAGE(kTypedObjectReference, "core/v1.TypedObjectReference", str(1, "apiGroup", N),
                    str(2, "kind", A), str(3, "name", A), str(4, "namespace", P))
KUBEX_PROTO_MESSAGE(kServiceAccount, "core/v1.ServiceAccount", msg(1, "metadata", kObjectMeta),
                    msgs(2, "secrets", kObjectReference), msgs(3, "imagePullSecrets", kLocalObjectReference),
                    flag(4, "automountServiceAccountToken", P))

// Service
KUBEX_PROTO_MESSAGE(kServicePort, "core/v1.ServicePort", str(1, "name"), str(2, "protocol"),
                    str(6, "appProtocol", P), i32(3, "port", A), int_or_string(4, "targetPort"),
                    i32(5, "nodePort"))
KUBEX_PROTO_MESSAGE(kClientIPConfig, "core/v1.ClientIPConfig", i32(1, "timeoutSeconds", P))
KUBEX_PROTO_MESSAGE(kSessionAffinityConfig, "core/v1.SessionAffinityConfig",
                    msg(1, "clientIP", kClientIPConfig, P))
KUBEX_PROTO_MESSAGE(kServiceSpec, "core/v1.ServiceSpec", msgs(1, "ports", kServicePort),
                    string_map(2, "selector"), str(3, "clusterIP"), strs(18, "clusterIPs"), str(4, "type"),
                    strs(5, "externalIPs"), str(7, "sessionAffinity"), str(8, "loadBalancerIP"),
                    strs(9, "loadBalancerSourceRanges"), str(10, "externalName"),
                    str(11, "externalTrafficPolicy"), i32(12, "healthCheckNodePort"),
                    flag(13, "publishNotReadyAddresses"),
                    msg(14, "sessionAffinityConfig", kSessionAffinityConfig, P), strs(19, "ipFamilies"),
                    str(17, "ipFamilyPolicy", P), flag(20, "allocateLoadBalancerNodePorts", P),
                    str(21, "loadBalancerClass", P), str(22, "internalTrafficPolicy", P),
                    str(23, "trafficDistribution", P))
KUBEX_PROTO_MESSAGE(kPortStatus, "core/v1.PortStatus", i32(1, "port", A), str(2, "protocol", A),
                    str(3, "error", P))
KUBEX_PROTO_MESSAGE(kLoadBalancerIngress, "core/v1.LoadBalancerIngress", str(1, "ip"), str(2, "hostname"),
                    str(3, "ipMode", P), msgs(4, "ports", kPortStatus))
KUBEX_PROTO_MESSAGE(kLoadBalancerStatus, "core/v1.LoadBalancerStatus",
                    msgs(1, "ingress", kLoadBalancerIngress))
KUBEX_PROTO_MESSAGE(kServiceStatus, "core/v1.ServiceStatus", msg(1, "loadBalancer", kLoadBalancerStatus),
                    msgs(2, "conditions", kCondition))
KUBEX_PROTO_MESSAGE(kService, "core/v1.Service", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kServiceSpec), msg(3, "status", kServiceStatus))

// ResourceQuota
KUBEX_PROTO_MESSAGE(kScopedResourceSelectorRequirement, "core/v1.ScopedResourceSelectorRequirement",
                    str(1, "scopeName", A), str(2, "operator", A), strs(3, "values"))
KUBEX_PROTO_MESSAGE(kScopeSelector, "core/v1.ScopeSelector",
                    msgs(1, "matchExpressions", kScopedResourceSelectorRequirement))
KUBEX_PROTO_MESSAGE(kResourceQuotaSpec, "core/v1.ResourceQuotaSpec", resource_list(1, "hard"),
                    strs(2, "scopes"), msg(3, "scopeSelector", kScopeSelector, P))
KUBEX_PROTO_MESSAGE(kResourceQuotaStatus, "core/v1.ResourceQuotaStatus", resource_list(1, "hard"),
                    resource_list(2, "used"))
KUBEX_PROTO_MESSAGE(kResourceQuota, "core/v1.ResourceQuota", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kResourceQuotaSpec), msg(3, "status", kResourceQuotaStatus))

// PersistentVolumeClaim (also StatefulSet volumeClaimTemplates)
KUBEX_PROTO_MESSAGE(kVolumeResourceRequirements, "core/v1.VolumeResourceRequirements",
                    resource_list(1, "limits"), resource_list(2, "requests"))
KUBEX_PROTO_MESSAGE(kPersistentVolumeClaimSpec, "core/v1.PersistentVolumeClaimSpec", strs(1, "accessModes"),
                    msg(4, "selector", kLabelSelector, P), msg(2, "resources", kVolumeResourceRequirements),
                    str(3, "volumeName"), str(5, "storageClassName", P), str(6, "volumeMode", P),
                    msg(7, "dataSource", kTypedLocalObjectReference, P),
                    msg(8, "dataSourceRef", kTypedObjectReference, P), str(9, "volumeAttributesClassName", P))
KUBEX_PROTO_MESSAGE(kPersistentVolumeClaimStatus, "core/v1.PersistentVolumeClaimStatus", str(1, "phase"),
                    strs(2, "accessModes"), resource_list(3, "capacity"),
                    resource_list(5, "allocatedResources"))
KUBEX_PROTO_MESSAGE(kPersistentVolumeClaim, "core/v1.PersistentVolumeClaim", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kPersistentVolumeClaimSpec),
                    msg(3, "status", kPersistentVolumeClaimStatus))

// ---- core/v1: pods ----

KUBEX_PROTO_MESSAGE(kKeyToPath, "core/v1.KeyToPath", str(1, "key", A), str(2, "path", A), i32(3, "mode", P))
KUBEX_PROTO_MESSAGE(kHostPathVolumeSource, "core/v1.HostPathVolumeSource", str(1, "path", A),
                    str(2, "type", P))
KUBEX_PROTO_MESSAGE(kEmptyDirVolumeSource, "core/v1.EmptyDirVolumeSource", str(1, "medium"),
                    quantity(2, "sizeLimit", P))
KUBEX_PROTO_MESSAGE(kSecretVolumeSource, "core/v1.SecretVolumeSource", str(1, "secretName"),
                    msgs(2, "items", kKeyToPath), i32(3, "defaultMode", P), flag(4, "optional", P))
KUBEX_PROTO_MESSAGE(kConfigMapVolumeSource, "core/v1.ConfigMapVolumeSource",
                    inline_msg(1, kLocalObjectReference), msgs(2, "items", kKeyToPath),
                    i32(3, "defaultMode", P), flag(4, "optional", P))
KUBEX_PROTO_MESSAGE(kPersistentVolumeClaimVolumeSource, "core/v1.PersistentVolumeClaimVolumeSource",
                    str(1, "claimName", A), flag(2, "readOnly"))
KUBEX_PROTO_MESSAGE(kVolumeSource, "core/v1.VolumeSource", msg(1, "hostPath", kHostPathVolumeSource, P),
                    msg(2, "emptyDir", kEmptyDirVolumeSource, P), msg(6, "secret", kSecretVolumeSource, P),
                    msg(10, "persistentVolumeClaim", kPersistentVolumeClaimVolumeSource, P),
                    msg(19, "configMap", kConfigMapVolumeSource, P))
KUBEX_PROTO_MESSAGE(kVolume, "core/v1.Volume", str(1, "name", A), inline_msg(2, kVolumeSource))

KUBEX_PROTO_MESSAGE(kContainerPort, "core/v1.ContainerPort", str(1, "name"), i32(2, "hostPort"),
                    i32(3, "containerPort", A), str(4, "protocol"), str(5, "hostIP"))
KUBEX_PROTO_MESSAGE(kObjectFieldSelector, "core/v1.ObjectFieldSelector", str(1, "apiVersion"),
                    str(2, "fieldPath", A))
KUBEX_PROTO_MESSAGE(kResourceFieldSelector, "core/v1.ResourceFieldSelector", str(1, "containerName"),
                    str(2, "resource", A), quantity(3, "divisor"))
KUBEX_PROTO_MESSAGE(kConfigMapKeySelector, "core/v1.ConfigMapKeySelector",
                    inline_msg(1, kLocalObjectReference), str(2, "key", A), flag(3, "optional", P))
KUBEX_PROTO_MESSAGE(kSecretKeySelector, "core/v1.SecretKeySelector", inline_msg(1, kLocalObjectReference),
                    str(2, "key", A), flag(3, "optional", P))
KUBEX_PROTO_MESSAGE(kEnvVarSource, "core/v1.EnvVarSource", msg(1, "fieldRef", kObjectFieldSelector, P),
                    msg(2, "resourceFieldRef", kResourceFieldSelector, P),
                    msg(3, "configMapKeyRef", kConfigMapKeySelector, P),
                    msg(4, "secretKeyRef", kSecretKeySelector, P))
KUBEX_PROTO_MESSAGE(kEnvVar, "core/v1.EnvVar", str(1, "name", A), str(2, "value"),
                    msg(3, "valueFrom", kEnvVarSource, P))
KUBEX_PROTO_MESSAGE(kConfigMapEnvSource, "core/v1.ConfigMapEnvSource", inline_msg(1, kLocalObjectReference),
                    flag(2, "optional", P))
KUBEX_PROTO_MESSAGE(kSecretEnvSource, "core/v1.SecretEnvSource", inline_msg(1, kLocalObjectReference),
                    flag(2, "optional", P))
KUBEX_PROTO_MESSAGE(kEnvFromSource, "core/v1.EnvFromSource", str(1, "prefix"),
                    msg(2, "configMapRef", kConfigMapEnvSource, P), msg(3, "secretRef", kSecretEnvSource, P))
KUBEX_PROTO_MESSAGE(kResourceClaim, "core/v1.ResourceClaim", str(1, "name", A), str(2, "request"))
KUBEX_PROTO_MESSAGE(kResourceRequirements, "core/v1.ResourceRequirements", resource_list(1, "limits"),
                    resource_list(2, "requests"), msgs(3, "claims", kResourceClaim))
KUBEX_PROTO_MESSAGE(kVolumeMount, "core/v1.VolumeMount", str(1, "name", A), flag(2, "readOnly"),
                    str(7, "recursiveReadOnly", P), str(3, "mountPath", A), str(4, "subPath"),
                    str(5, "mountPropagation", P), str(6, "subPathExpr"))

KUBEX_PROTO_MESSAGE(kExecAction, "core/v1.ExecAction", strs(1, "command"))
KUBEX_PROTO_MESSAGE(kHTTPHeader, "core/v1.HTTPHeader", str(1, "name", A), str(2, "value", A))
KUBEX_PROTO_MESSAGE(kHTTPGetAction, "core/v1.HTTPGetAction", str(1, "path"), int_or_string(2, "port"),
                    str(3, "host"), str(4, "scheme"), msgs(5, "httpHeaders", kHTTPHeader))
KUBEX_PROTO_MESSAGE(kTCPSocketAction, "core/v1.TCPSocketAction", int_or_string(1, "port"), str(2, "host"))
KUBEX_PROTO_MESSAGE(kGRPCAction, "core/v1.GRPCAction", i32(1, "port", A), str(2, "service", N))
KUBEX_PROTO_MESSAGE(kProbeHandler, "core/v1.ProbeHandler", msg(1, "exec", kExecAction, P),
                    msg(2, "httpGet", kHTTPGetAction, P), msg(3, "tcpSocket", kTCPSocketAction, P),
                    msg(4, "grpc", kGRPCAction, P))
KUBEX_PROTO_MESSAGE(kProbe, "core/v1.Probe", inline_msg(1, kProbeHandler), i32(2, "initialDelaySeconds"),
                    i32(3, "timeoutSeconds"), i32(4, "periodSeconds"), i32(5, "successThreshold"),
                    i32(6, "failureThreshold"), i64(7, "terminationGracePeriodSeconds", P))

KUBEX_PROTO_MESSAGE(kCapabilities, "core/v1.Capabilities", strs(1, "add"), strs(2, "drop"))
KUBEX_PROTO_MESSAGE(kSeccompProfile, "core/v1.SeccompProfile", str(1, "type", A),
                    str(2, "localhostProfile", P))
KUBEX_PROTO_MESSAGE(kSecurityContext, "core/v1.SecurityContext", msg(1, "capabilities", kCapabilities, P),
                    flag(2, "privileged", P), i64(4, "runAsUser", P), i64(8, "runAsGroup", P),
                    flag(5, "runAsNonRoot", P), flag(6, "readOnlyRootFilesystem", P),
                    flag(7, "allowPrivilegeEscalation", P), str(9, "procMount", P),
                    msg(11, "seccompProfile", kSeccompProfile, P))
KUBEX_PROTO_MESSAGE(kPodSecurityContext, "core/v1.PodSecurityContext", i64(2, "runAsUser", P),
                    i64(6, "runAsGroup", P), flag(3, "runAsNonRoot", P),
                    ProtoField{4, "supplementalGroups", kInt64, O, true, nullptr}, i64(5, "fsGroup", P),
                    str(9, "fsGroupChangePolicy", P), msg(10, "seccompProfile", kSeccompProfile, P))

KUBEX_PROTO_MESSAGE(kContainer, "core/v1.Container", str(1, "name", A), str(2, "image"), strs(3, "command"),
                    strs(4, "args"), str(5, "workingDir"), msgs(6, "ports", kContainerPort),
                    msgs(19, "envFrom", kEnvFromSource), msgs(7, "env", kEnvVar),
                    msg(8, "resources", kResourceRequirements), str(24, "restartPolicy", P),
                    msgs(9, "volumeMounts", kVolumeMount), msg(10, "livenessProbe", kProbe, P),
                    msg(11, "readinessProbe", kProbe, P), msg(22, "startupProbe", kProbe, P),
                    str(13, "terminationMessagePath"), str(20, "terminationMessagePolicy"),
                    str(14, "imagePullPolicy"), msg(15, "securityContext", kSecurityContext, P),
                    flag(16, "stdin"), flag(17, "stdinOnce"), flag(18, "tty"))
KUBEX_PROTO_MESSAGE(kToleration, "core/v1.Toleration", str(1, "key"), str(2, "operator"), str(3, "value"),
                    str(4, "effect"), i64(5, "tolerationSeconds", P))
KUBEX_PROTO_MESSAGE(kPodSpec, "core/v1.PodSpec", msgs(1, "volumes", kVolume),
                    msgs(20, "initContainers", kContainer), msgs(2, "containers", kContainer, A),
                    str(3, "restartPolicy"), i64(4, "terminationGracePeriodSeconds", P),
                    i64(5, "activeDeadlineSeconds", P), str(6, "dnsPolicy"), string_map(7, "nodeSelector"),
                    str(8, "serviceAccountName"), str(9, "serviceAccount"),
                    flag(21, "automountServiceAccountToken", P), str(10, "nodeName"), flag(11, "hostNetwork"),
                    flag(12, "hostPID"), flag(13, "hostIPC"), flag(27, "shareProcessNamespace", P),
                    msg(14, "securityContext", kPodSecurityContext, P),
                    msgs(15, "imagePullSecrets", kLocalObjectReference), str(16, "hostname"),
                    str(17, "subdomain"), str(19, "schedulerName"), msgs(22, "tolerations", kToleration),
                    str(24, "priorityClassName"), i32(25, "priority", P), str(29, "runtimeClassName", P),
                    flag(30, "enableServiceLinks", P), str(31, "preemptionPolicy", P),
                    resource_list(32, "overhead"), flag(35, "setHostnameAsFQDN", P), flag(37, "hostUsers", P))
KUBEX_PROTO_MESSAGE(kPodTemplateSpec, "core/v1.PodTemplateSpec", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kPodSpec))
KUBEX_PROTO_MESSAGE(kPodStatus, "core/v1.PodStatus", str(1, "phase"), str(3, "message"), str(4, "reason"),
                    str(11, "nominatedNodeName"), str(5, "hostIP"), str(6, "podIP"),
                    timestamp(7, "startTime", P), str(9, "qosClass"))
KUBEX_PROTO_MESSAGE(kPod, "core/v1.Pod", msg(1, "metadata", kObjectMeta), msg(2, "spec", kPodSpec),
                    msg(3, "status", kPodStatus))

// ---- apps/v1 ----

KUBEX_PROTO_MESSAGE(kRollingUpdateDeployment, "apps/v1.RollingUpdateDeployment",
                    int_or_string(1, "maxUnavailable", P), int_or_string(2, "maxSurge", P))
KUBEX_PROTO_MESSAGE(kDeploymentStrategy, "apps/v1.DeploymentStrategy", str(1, "type"),
                    msg(2, "rollingUpdate", kRollingUpdateDeployment, P))
KUBEX_PROTO_MESSAGE(kDeploymentSpec, "apps/v1.DeploymentSpec", i32(1, "replicas", P),
                    msg(2, "selector", kLabelSelector, N), msg(3, "template", kPodTemplateSpec),
                    msg(4, "strategy", kDeploymentStrategy), i32(5, "minReadySeconds"),
                    i32(6, "revisionHistoryLimit", P), flag(7, "paused"),
                    i32(9, "progressDeadlineSeconds", P))
KUBEX_PROTO_MESSAGE(kDeploymentStatus, "apps/v1.DeploymentStatus", i64(1, "observedGeneration"),
                    i32(2, "replicas"), i32(3, "updatedReplicas"), i32(7, "readyReplicas"),
                    i32(4, "availableReplicas"), i32(5, "unavailableReplicas"), i32(8, "collisionCount", P))
KUBEX_PROTO_MESSAGE(kDeployment, "apps/v1.Deployment", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kDeploymentSpec), msg(3, "status", kDeploymentStatus))

KUBEX_PROTO_MESSAGE(kReplicaSetSpec, "apps/v1.ReplicaSetSpec", i32(1, "replicas", P),
                    i32(4, "minReadySeconds"), msg(2, "selector", kLabelSelector, N),
                    msg(3, "template", kPodTemplateSpec))
KUBEX_PROTO_MESSAGE(kReplicaSetStatus, "apps/v1.ReplicaSetStatus", i32(1, "replicas", A),
                    i32(2, "fullyLabeledReplicas"), i32(4, "readyReplicas"), i32(5, "availableReplicas"),
                    i64(3, "observedGeneration"))
KUBEX_PROTO_MESSAGE(kReplicaSet, "apps/v1.ReplicaSet", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kReplicaSetSpec), msg(3, "status", kReplicaSetStatus))

KUBEX_PROTO_MESSAGE(kRollingUpdateStatefulSetStrategy, "apps/v1.RollingUpdateStatefulSetStrategy",
                    i32(1, "partition", P), int_or_string(2, "maxUnavailable", P))
KUBEX_PROTO_MESSAGE(kStatefulSetUpdateStrategy, "apps/v1.StatefulSetUpdateStrategy", str(1, "type"),
                    msg(2, "rollingUpdate", kRollingUpdateStatefulSetStrategy, P))
KUBEX_PROTO_MESSAGE(kStatefulSetPersistentVolumeClaimRetentionPolicy,
                    "apps/v1.StatefulSetPersistentVolumeClaimRetentionPolicy", str(1, "whenDeleted"),
                    str(2, "whenScaled"))
KUBEX_PROTO_MESSAGE(kStatefulSetOrdinals, "apps/v1.StatefulSetOrdinals", i32(1, "start", A))
KUBEX_PROTO_MESSAGE(kStatefulSetSpec, "apps/v1.StatefulSetSpec", i32(1, "replicas", P),
                    msg(2, "selector", kLabelSelector, N), msg(3, "template", kPodTemplateSpec),
                    msgs(4, "volumeClaimTemplates", kPersistentVolumeClaim), str(5, "serviceName", A),
                    str(6, "podManagementPolicy"), msg(7, "updateStrategy", kStatefulSetUpdateStrategy),
                    i32(8, "revisionHistoryLimit", P), i32(9, "minReadySeconds"),
                    msg(10, "persistentVolumeClaimRetentionPolicy",
                        kStatefulSetPersistentVolumeClaimRetentionPolicy, P),
                    msg(11, "ordinals", kStatefulSetOrdinals, P))
KUBEX_PROTO_MESSAGE(kStatefulSetStatus, "apps/v1.StatefulSetStatus", i64(1, "observedGeneration"),
                    i32(2, "replicas", A), i32(3, "readyReplicas"), i32(4, "currentReplicas"),
                    i32(5, "updatedReplicas"), str(6, "currentRevision"), str(7, "updateRevision"),
                    i32(9, "collisionCount", P), i32(11, "availableReplicas", A))
KUBEX_PROTO_MESSAGE(kStatefulSet, "apps/v1.StatefulSet", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kStatefulSetSpec), msg(3, "status", kStatefulSetStatus))

KUBEX_PROTO_MESSAGE(kRollingUpdateDaemonSet, "apps/v1.RollingUpdateDaemonSet",
                    int_or_string(1, "maxUnavailable", P), int_or_string(2, "maxSurge", P))
KUBEX_PROTO_MESSAGE(kDaemonSetUpdateStrategy, "apps/v1.DaemonSetUpdateStrategy", str(1, "type"),
                    msg(2, "rollingUpdate", kRollingUpdateDaemonSet, P))
KUBEX_PROTO_MESSAGE(kDaemonSetSpec, "apps/v1.DaemonSetSpec", msg(1, "selector", kLabelSelector, N),
                    msg(2, "template", kPodTemplateSpec), msg(3, "updateStrategy", kDaemonSetUpdateStrategy),
                    i32(4, "minReadySeconds"), i32(6, "revisionHistoryLimit", P))
KUBEX_PROTO_MESSAGE(kDaemonSetStatus, "apps/v1.DaemonSetStatus", i32(1, "currentNumberScheduled", A),
                    i32(2, "numberMisscheduled", A), i32(3, "desiredNumberScheduled", A),
                    i32(4, "numberReady", A), i64(5, "observedGeneration"), i32(6, "updatedNumberScheduled"),
                    i32(7, "numberAvailable"), i32(8, "numberUnavailable"), i32(9, "collisionCount", P))
KUBEX_PROTO_MESSAGE(kDaemonSet, "apps/v1.DaemonSet", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kDaemonSetSpec), msg(3, "status", kDaemonSetStatus))

// ---- batch/v1 ----

KUBEX_PROTO_MESSAGE(kPodFailurePolicyOnExitCodesRequirement,
                    "batch/v1.PodFailurePolicyOnExitCodesRequirement", str(1, "containerName", P),
                    str(2, "operator", A), ProtoField{3, "values", kInt32, A, true, nullptr})
KUBEX_PROTO_MESSAGE(kPodFailurePolicyOnPodConditionsPattern,
                    "batch/v1.PodFailurePolicyOnPodConditionsPattern", str(1, "type", A), str(2, "status", A))
KUBEX_PROTO_MESSAGE(kPodFailurePolicyRule, "batch/v1.PodFailurePolicyRule", str(1, "action", A),
                    msg(2, "onExitCodes", kPodFailurePolicyOnExitCodesRequirement, P),
                    msgs(3, "onPodConditions", kPodFailurePolicyOnPodConditionsPattern))
KUBEX_PROTO_MESSAGE(kPodFailurePolicy, "batch/v1.PodFailurePolicy",
                    msgs(1, "rules", kPodFailurePolicyRule, A))
KUBEX_PROTO_MESSAGE(kSuccessPolicyRule, "batch/v1.SuccessPolicyRule", str(1, "succeededIndexes", P),
                    i32(2, "succeededCount", P))
KUBEX_PROTO_MESSAGE(kSuccessPolicy, "batch/v1.SuccessPolicy", msgs(1, "rules", kSuccessPolicyRule, A))
KUBEX_PROTO_MESSAGE(kJobSpec, "batch/v1.JobSpec", i32(1, "parallelism", P), i32(2, "completions", P),
                    i64(3, "activeDeadlineSeconds", P), msg(11, "podFailurePolicy", kPodFailurePolicy, P),
                    msg(16, "successPolicy", kSuccessPolicy, P), i32(7, "backoffLimit", P),
                    i32(12, "backoffLimitPerIndex", P), i32(13, "maxFailedIndexes", P),
                    msg(4, "selector", kLabelSelector, P), flag(5, "manualSelector", P),
                    msg(6, "template", kPodTemplateSpec), i32(8, "ttlSecondsAfterFinished", P),
                    str(9, "completionMode", P), flag(10, "suspend", P), str(14, "podReplacementPolicy", P),
                    str(15, "managedBy", P))
KUBEX_PROTO_MESSAGE(kUncountedTerminatedPods, "batch/v1.UncountedTerminatedPods", strs(1, "succeeded"),
                    strs(2, "failed"))
KUBEX_PROTO_MESSAGE(kJobStatus, "batch/v1.JobStatus", timestamp(2, "startTime", P),
                    timestamp(3, "completionTime", P), i32(4, "active"), i32(5, "succeeded"),
                    i32(6, "failed"), i32(11, "terminating", P), str(7, "completedIndexes"),
                    str(10, "failedIndexes", P),
                    msg(8, "uncountedTerminatedPods", kUncountedTerminatedPods, P), i32(9, "ready", P))
KUBEX_PROTO_MESSAGE(kJob, "batch/v1.Job", msg(1, "metadata", kObjectMeta), msg(2, "spec", kJobSpec),
                    msg(3, "status", kJobStatus))
KUBEX_PROTO_MESSAGE(kJobTemplateSpec, "batch/v1.JobTemplateSpec", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kJobSpec))
KUBEX_PROTO_MESSAGE(kCronJobSpec, "batch/v1.CronJobSpec", str(1, "schedule", A), str(8, "timeZone", P),
                    i64(2, "startingDeadlineSeconds", P), str(3, "concurrencyPolicy"), flag(4, "suspend", P),
                    msg(5, "jobTemplate", kJobTemplateSpec), i32(6, "successfulJobsHistoryLimit", P),
                    i32(7, "failedJobsHistoryLimit", P))
KUBEX_PROTO_MESSAGE(kCronJobStatus, "batch/v1.CronJobStatus", msgs(1, "active", kObjectReference),
                    timestamp(4, "lastScheduleTime", P), timestamp(5, "lastSuccessfulTime", P))
KUBEX_PROTO_MESSAGE(kCronJob, "batch/v1.CronJob", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kCronJobSpec), msg(3, "status", kCronJobStatus))

// ---- policy/v1 ----

KUBEX_PROTO_MESSAGE(kPodDisruptionBudgetSpec, "policy/v1.PodDisruptionBudgetSpec",
                    int_or_string(1, "minAvailable", P), msg(2, "selector", kLabelSelector, P),
                    int_or_string(3, "maxUnavailable", P), str(4, "unhealthyPodEvictionPolicy", P))
KUBEX_PROTO_MESSAGE(kPodDisruptionBudgetStatus, "policy/v1.PodDisruptionBudgetStatus",
                    i64(1, "observedGeneration"), i32(3, "disruptionsAllowed", A),
                    i32(4, "currentHealthy", A), i32(5, "desiredHealthy", A), i32(6, "expectedPods", A),
                    msgs(7, "conditions", kCondition))
KUBEX_PROTO_MESSAGE(kPodDisruptionBudget, "policy/v1.PodDisruptionBudget", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kPodDisruptionBudgetSpec), msg(3, "status", kPodDisruptionBudgetStatus))
KUBEX_PROTO_MESSAGE(kEviction, "policy/v1.Eviction", msg(1, "metadata", kObjectMeta),
                    msg(2, "deleteOptions", kDeleteOptions, P))

// ---- scheduling.k8s.io/v1 ----

KUBEX_PROTO_MESSAGE(kPriorityClass, "scheduling/v1.PriorityClass", msg(1, "metadata", kObjectMeta),
                    i32(2, "value", A), flag(3, "globalDefault"), str(4, "description"),
                    str(5, "preemptionPolicy", P))

// ---- rbac.authorization.k8s.io/v1 ----

KUBEX_PROTO_MESSAGE(kPolicyRule, "rbac/v1.PolicyRule", strs(1, "verbs", A), strs(2, "apiGroups"),
                    strs(3, "resources"), strs(4, "resourceNames"), strs(5, "nonResourceURLs"))
KUBEX_PROTO_MESSAGE(kSubject, "rbac/v1.Subject", str(1, "kind", A), str(2, "apiGroup"), str(3, "name", A),
                    str(4, "namespace"))
KUBEX_PROTO_MESSAGE(kRoleRef, "rbac/v1.RoleRef", str(1, "apiGroup", A), str(2, "kind", A), str(3, "name", A))
KUBEX_PROTO_MESSAGE(kAggregationRule, "rbac/v1.AggregationRule",
                    msgs(1, "clusterRoleSelectors", kLabelSelector))
KUBEX_PROTO_MESSAGE(kRole, "rbac/v1.Role", msg(1, "metadata", kObjectMeta), msgs(2, "rules", kPolicyRule, A))
KUBEX_PROTO_MESSAGE(kClusterRole, "rbac/v1.ClusterRole", msg(1, "metadata", kObjectMeta),
                    msgs(2, "rules", kPolicyRule, A), msg(3, "aggregationRule", kAggregationRule, P))
KUBEX_PROTO_MESSAGE(kRoleBinding, "rbac/v1.RoleBinding", msg(1, "metadata", kObjectMeta),
                    msgs(2, "subjects", kSubject), msg(3, "roleRef", kRoleRef))

// ---- networking.k8s.io/v1 ----

KUBEX_PROTO_MESSAGE(kServiceBackendPort, "networking/v1.ServiceBackendPort", str(1, "name"), i32(2, "number"))
KUBEX_PROTO_MESSAGE(kIngressServiceBackend, "networking/v1.IngressServiceBackend", str(1, "name", A),
                    msg(2, "port", kServiceBackendPort))
KUBEX_PROTO_MESSAGE(kIngressBackend, "networking/v1.IngressBackend",
                    msg(4, "service", kIngressServiceBackend, P),
                    msg(3, "resource", kTypedLocalObjectReference, P))
KUBEX_PROTO_MESSAGE(kHTTPIngressPath, "networking/v1.HTTPIngressPath", str(1, "path"), str(3, "pathType", N),
                    msg(2, "backend", kIngressBackend))
KUBEX_PROTO_MESSAGE(kHTTPIngressRuleValue, "networking/v1.HTTPIngressRuleValue",
                    msgs(1, "paths", kHTTPIngressPath, A))
KUBEX_PROTO_MESSAGE(kIngressRuleValue, "networking/v1.IngressRuleValue",
                    msg(1, "http", kHTTPIngressRuleValue, P))
KUBEX_PROTO_MESSAGE(kIngressRule, "networking/v1.IngressRule", str(1, "host"),
                    inline_msg(2, kIngressRuleValue))
KUBEX_PROTO_MESSAGE(kIngressTLS, "networking/v1.IngressTLS", strs(1, "hosts"), str(2, "secretName"))
KUBEX_PROTO_MESSAGE(kIngressSpec, "networking/v1.IngressSpec", str(4, "ingressClassName", P),
                    msg(1, "defaultBackend", kIngressBackend, P), msgs(2, "tls", kIngressTLS),
                    msgs(3, "rules", kIngressRule))
KUBEX_PROTO_MESSAGE(kIngressPortStatus, "networking/v1.IngressPortStatus", i32(1, "port", A),
                    str(2, "protocol", A), str(3, "error", P))
KUBEX_PROTO_MESSAGE(kIngressLoadBalancerIngress, "networking/v1.IngressLoadBalancerIngress", str(1, "ip"),
                    str(2, "hostname"), msgs(4, "ports", kIngressPortStatus))
KUBEX_PROTO_MESSAGE(kIngressLoadBalancerStatus, "networking/v1.IngressLoadBalancerStatus",
                    msgs(1, "ingress", kIngressLoadBalancerIngress))
KUBEX_PROTO_MESSAGE(kIngressStatus, "networking/v1.IngressStatus",
                    msg(1, "loadBalancer", kIngressLoadBalancerStatus))
KUBEX_PROTO_MESSAGE(kIngress, "networking/v1.Ingress", msg(1, "metadata", kObjectMeta),
                    msg(2, "spec", kIngressSpec), msg(3, "status", kIngressStatus))

// ---- autoscaling/v1 (kubectl autoscale) ----

KUBEX_PROTO_MESSAGE(kCrossVersionObjectReference, "autoscaling/v1.CrossVersionObjectReference",
                    str(1, "kind", A), str(2, "name", A), str(3, "apiVersion"))
KUBEX_PROTO_MESSAGE(kHorizontalPodAutoscalerSpec, "autoscaling/v1.HorizontalPodAutoscalerSpec",
                    msg(1, "scaleTargetRef", kCrossVersionObjectReference), i32(2, "minReplicas", P),
                    i32(3, "maxReplicas", A), i32(4, "targetCPUUtilizationPercentage", P))
KUBEX_PROTO_MESSAGE(kHorizontalPodAutoscalerStatus, "autoscaling/v1.HorizontalPodAutoscalerStatus",
                    i64(1, "observedGeneration", P), timestamp(2, "lastScaleTime", P),
                    i32(3, "currentReplicas", A), i32(4, "desiredReplicas", A),
                    i32(5, "currentCPUUtilizationPercentage", P))
KUBEX_PROTO_MESSAGE(kHorizontalPodAutoscaler, "autoscaling/v1.HorizontalPodAutoscaler",
                    msg(1, "metadata", kObjectMeta), msg(2, "spec", kHorizontalPodAutoscalerSpec),
                    msg(3, "status", kHorizontalPodAutoscalerStatus))

// ---- authorization.k8s.io/v1, authentication.k8s.io/v1 (kubectl auth can-i, kubectl auth whoami) ----

KUBEX_PROTO_MESSAGE(kFieldSelectorRequirement, "meta/v1.FieldSelectorRequirement", str(1, "key", A),
                    str(2, "operator", A), strs(3, "values"))
KUBEX_PROTO_MESSAGE(kFieldSelectorAttributes, "authorization/v1.FieldSelectorAttributes",
                    str(1, "rawSelector"), msgs(2, "requirements", kFieldSelectorRequirement))
KUBEX_PROTO_MESSAGE(kLabelSelectorAttributes, "authorization/v1.LabelSelectorAttributes",
                    str(1, "rawSelector"), msgs(2, "requirements", kLabelSelectorRequirement))
KUBEX_PROTO_MESSAGE(kResourceAttributes, "authorization/v1.ResourceAttributes", str(1, "namespace"),
                    str(2, "verb"), str(3, "group"), str(4, "version"), str(5, "resource"),
                    str(6, "subresource"), str(7, "name"),
                    msg(8, "fieldSelector", kFieldSelectorAttributes, P),
                    msg(9, "labelSelector", kLabelSelectorAttributes, P))
KUBEX_PROTO_MESSAGE(kNonResourceAttributes, "authorization/v1.NonResourceAttributes", str(1, "path"),
                    str(2, "verb"))
KUBEX_PROTO_MESSAGE(kSelfSubjectAccessReviewSpec, "authorization/v1.SelfSubjectAccessReviewSpec",
                    msg(1, "resourceAttributes", kResourceAttributes, P),
                    msg(2, "nonResourceAttributes", kNonResourceAttributes, P))
KUBEX_PROTO_MESSAGE(kSubjectAccessReviewStatus, "authorization/v1.SubjectAccessReviewStatus",
                    flag(1, "allowed", A), flag(4, "denied"), str(2, "reason"), str(3, "evaluationError"))
KUBEX_PROTO_MESSAGE(kSelfSubjectAccessReview, "authorization/v1.SelfSubjectAccessReview",
                    msg(1, "metadata", kObjectMeta), msg(2, "spec", kSelfSubjectAccessReviewSpec),
                    msg(3, "status", kSubjectAccessReviewStatus))
KUBEX_PROTO_MESSAGE(kUserInfo, "authentication/v1.UserInfo", str(1, "username"), str(2, "uid"),
                    strs(3, "groups"))
KUBEX_PROTO_MESSAGE(kSelfSubjectReviewStatus, "authentication/v1.SelfSubjectReviewStatus",
                    msg(1, "userInfo", kUserInfo))
KUBEX_PROTO_MESSAGE(kSelfSubjectReview, "authentication/v1.SelfSubjectReview",
                    msg(1, "metadata", kObjectMeta), msg(2, "status", kSelfSubjectReviewStatus))

#undef KUBEX_PROTO_MESSAGE

constexpr ProtoKind kKinds[] = {
    {"v1", "Namespace", &kNamespace},
    {"v1", "ConfigMap", &kConfigMap},
    {"v1", "Secret", &kSecret},
    {"v1", "ServiceAccount", &kServiceAccount},
    {"v1", "Service", &kService},
    {"v1", "ResourceQuota", &kResourceQuota},
    {"v1", "PersistentVolumeClaim", &kPersistentVolumeClaim},
    {"v1", "Pod", &kPod},
    {"apps/v1", "Deployment", &kDeployment},
    {"apps/v1", "ReplicaSet", &kReplicaSet},
    {"apps/v1", "StatefulSet", &kStatefulSet},
    {"apps/v1", "DaemonSet", &kDaemonSet},
    {"batch/v1", "Job", &kJob},
    {"batch/v1", "CronJob", &kCronJob},
    {"policy/v1", "PodDisruptionBudget", &kPodDisruptionBudget},
    {"policy/v1", "Eviction", &kEviction},
    // The body of a DELETE from client-go's typed clients (helm uninstall purging its release Secret).
    {"v1", "DeleteOptions", &kDeleteOptions},
    {"meta.k8s.io/v1", "DeleteOptions", &kDeleteOptions},
    {"scheduling.k8s.io/v1", "PriorityClass", &kPriorityClass},
    {"rbac.authorization.k8s.io/v1", "Role", &kRole},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", &kClusterRole},
    {"rbac.authorization.k8s.io/v1", "RoleBinding", &kRoleBinding},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", &kRoleBinding},  // same fields
    {"networking.k8s.io/v1", "Ingress", &kIngress},
    {"autoscaling/v1", "HorizontalPodAutoscaler", &kHorizontalPodAutoscaler},
    {"authorization.k8s.io/v1", "SelfSubjectAccessReview", &kSelfSubjectAccessReview},
    {"authentication.k8s.io/v1", "SelfSubjectReview", &kSelfSubjectReview},
};

}  // namespace

std::span<const ProtoKind> protobuf_kinds() {
  return kKinds;
}

const ProtoMessage* find_protobuf_kind(std::string_view api_version, std::string_view kind) {
  const auto* it = std::find_if(std::begin(kKinds), std::end(kKinds), [&](const ProtoKind& k) {
    return k.api_version == api_version && k.kind == kind;
  });
  return it == std::end(kKinds) ? nullptr : it->message;
}

}  // namespace kubex::sim
