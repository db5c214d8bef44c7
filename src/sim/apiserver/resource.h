// The kinds kubex-sim serves: a fixed table of built-in Kubernetes resources plus CRD-defined ones.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

namespace kubex::sim {

class StructuralSchema;

struct ResourceInfo {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string plural;    // "pods"
  std::string singular;  // "pod"
  std::string kind;      // "Pod"
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<std::string> verbs;  // discovery verbs of the main resource
  bool has_status = false;
  bool has_scale = false;
  // Subresources beyond status/scale, e.g. {"eviction","policy","v1","Eviction"}.
  struct Subresource {
    std::string name, group, version, kind;
    std::vector<std::string> verbs;
  };
  std::vector<Subresource> extra_subresources;
  // Field selectors this kind supports beyond metadata.name / metadata.namespace.
  std::vector<std::string> selectable_fields;

  // Custom resources only.
  bool is_custom = false;
  std::string crd_name;
  std::shared_ptr<const StructuralSchema> schema;
  std::shared_ptr<const nlohmann::json> crd_version;  // the CRD's spec.versions[] entry (printer columns, schema)
  // For custom scale subresources.
  std::string scale_spec_replicas_path, scale_status_replicas_path, scale_label_selector_path;

  std::string group_version() const { return group.empty() ? version : group + "/" + version; }
  std::string api_version() const { return group_version(); }
  // Identity key "group/version/plural" (core: "/v1/pods").
  std::string id() const { return group + "/" + version + "/" + plural; }
  // "pods", "deployments.apps" — used in error messages like kube-apiserver does.
  std::string qualified_plural() const { return group.empty() ? plural : plural + "." + group; }
  std::string qualified_kind() const { return group.empty() ? kind : kind + "." + group; }
};

using ResourcePtr = std::shared_ptr<const ResourceInfo>;

// Thread-safe registry of served resources.
class Registry {
 public:
  Registry();  // registers the built-in kinds
  ResourcePtr find(const std::string& group, const std::string& version, const std::string& plural) const;
  ResourcePtr find_kind(const std::string& group, const std::string& version, const std::string& kind) const;
  ResourcePtr find_by_id(const std::string& id) const;
  std::vector<ResourcePtr> all() const;
  // Groups in discovery order with their versions (preferred first).
  std::vector<std::pair<std::string, std::vector<std::string>>> groups() const;
  // Registers (or replaces) a resource; returns the previous one, if any.
  ResourcePtr put(ResourcePtr r);
  void remove(const std::string& id);
  // Incremented on every change, for discovery/OpenAPI caches.
  std::uint64_t generation() const;

 private:
  mutable std::shared_mutex mu_;
  std::vector<ResourcePtr> resources_;
  std::uint64_t generation_ = 1;
};

}  // namespace kubex::sim
