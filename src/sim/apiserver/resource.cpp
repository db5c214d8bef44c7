#include "sim/apiserver/resource.h"

#include <algorithm>
#include <mutex>

namespace kubex::sim {
namespace {

const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                            "list",   "patch",  "update",           "watch"};

ResourcePtr make(std::string group, std::string version, std::string plural, std::string singular, std::string kind,
                 bool namespaced, std::vector<std::string> short_names, bool status, bool scale,
                 std::vector<std::string> fields = {}, std::vector<std::string> categories = {}) {
  auto r = std::make_shared<ResourceInfo>();
  r->group = std::move(group);
  r->version = std::move(version);
  r->plural = std::move(plural);
  r->singular = std::move(singular);
  r->kind = std::move(kind);
  r->namespaced = namespaced;
  r->short_names = std::move(short_names);
  r->has_status = status;
  r->has_scale = scale;
  r->verbs = kAllVerbs;
  r->selectable_fields = std::move(fields);
  r->categories = std::move(categories);
  return r;
}

}  // namespace

Registry::Registry() {
  std::vector<ResourcePtr> b;
  b.push_back(make("", "v1", "namespaces", "namespace", "Namespace", false, {"ns"}, true, false, {"status.phase"}));
  b.push_back(make("", "v1", "nodes", "node", "Node", false, {"no"}, true, false, {"spec.unschedulable"}));
  {
    auto pods = std::const_pointer_cast<ResourceInfo>(make(
        "", "v1", "pods", "pod", "Pod", true, {"po"}, true, false,
        {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork",
         "status.phase", "status.podIP", "status.nominatedNodeName"},
        {"all"}));
    pods->extra_subresources.push_back({"eviction", "policy", "v1", "Eviction", {"create"}});
    pods->extra_subresources.push_back({"binding", "", "v1", "Binding", {"create"}});
    b.push_back(pods);
  }
  b.push_back(make("", "v1", "configmaps", "configmap", "ConfigMap", true, {"cm"}, false, false));
  b.push_back(make("", "v1", "secrets", "secret", "Secret", true, {}, false, false, {"type"}));
  b.push_back(make("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"}, false, false));
  b.push_back(make("", "v1", "services", "service", "Service", true, {"svc"}, true, false, {}, {"all"}));
  b.push_back(make("", "v1", "events", "event", "Event", true, {"ev"}, false, false,
                   {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
                    "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
                    "reason", "reportingComponent", "source", "type"}));
  b.push_back(make("apps", "v1", "deployments", "deployment", "Deployment", true, {"deploy"}, true, true, {},
                   {"all"}));
  b.push_back(make("apps", "v1", "replicasets", "replicaset", "ReplicaSet", true, {"rs"}, true, true,
                   {"status.replicas"}, {"all"}));
  b.push_back(make("apps", "v1", "statefulsets", "statefulset", "StatefulSet", true, {"sts"}, true, true, {},
                   {"all"}));
  b.push_back(make("apps", "v1", "daemonsets", "daemonset", "DaemonSet", true, {"ds"}, true, false, {}, {"all"}));
  b.push_back(make("batch", "v1", "jobs", "job", "Job", true, {}, true, false, {"status.successful"}, {"all"}));
  b.push_back(make("batch", "v1", "cronjobs", "cronjob", "CronJob", true, {"cj"}, true, false, {}, {"all"}));
  b.push_back(make("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true,
                   {"pdb"}, true, false));
  b.push_back(make("coordination.k8s.io", "v1", "leases", "lease", "Lease", true, {}, false, false));
  b.push_back(make("events.k8s.io", "v1", "events", "event", "Event", true, {"ev"}, false, false,
                   {"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid", "reason", "type",
                    "reportingController"}));
  b.push_back(make("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
                   "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", false, {}, false, false));
  b.push_back(make("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
                   "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", false, {}, false, false));
  b.push_back(make("apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition",
                   "CustomResourceDefinition", false, {"crd", "crds"}, true, false));
  resources_ = std::move(b);
}

ResourcePtr Registry::find(const std::string& group, const std::string& version, const std::string& plural) const {
  std::shared_lock lk(mu_);
  for (const auto& r : resources_) {
    if (r->plural == plural && r->version == version && r->group == group) return r;
  }
  return nullptr;
}

ResourcePtr Registry::find_kind(const std::string& group, const std::string& version, const std::string& kind) const {
  std::shared_lock lk(mu_);
  for (const auto& r : resources_) {
    if (r->kind == kind && r->version == version && r->group == group) return r;
  }
  return nullptr;
}

ResourcePtr Registry::find_by_id(const std::string& id) const {
  std::shared_lock lk(mu_);
  for (const auto& r : resources_) {
    if (r->id() == id) return r;
  }
  return nullptr;
}

std::vector<ResourcePtr> Registry::all() const {
  std::shared_lock lk(mu_);
  return resources_;
}

std::vector<std::pair<std::string, std::vector<std::string>>> Registry::groups() const {
  std::shared_lock lk(mu_);
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& r : resources_) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == r->group; });
    if (it == out.end()) {
      out.push_back({r->group, {r->version}});
    } else if (std::find(it->second.begin(), it->second.end(), r->version) == it->second.end()) {
      it->second.push_back(r->version);
    }
  }
  return out;
}

ResourcePtr Registry::put(ResourcePtr r) {
  std::unique_lock lk(mu_);
  ++generation_;
  for (auto& existing : resources_) {
    if (existing->id() == r->id()) {
      auto prev = existing;
      existing = std::move(r);
      return prev;
    }
  }
  resources_.push_back(std::move(r));
  return nullptr;
}

void Registry::remove(const std::string& id) {
  std::unique_lock lk(mu_);
  ++generation_;
  resources_.erase(std::remove_if(resources_.begin(), resources_.end(), [&](const auto& r) { return r->id() == id; }),
                   resources_.end());
}

std::uint64_t Registry::generation() const {
  std::shared_lock lk(mu_);
  return generation_;
}

}  // namespace kubex::sim
