// Event predicates (controller-runtime's predicate package): what an informer update changed, for the
// handlers that decide whether an update is work, and the edge an owned object's event (a pod's, a
// ReplicaSet's) follows to its owner. Written once here for every controller.
//
// kube/ does not know the projections (api::ObjectMeta, api::WorkloadView, api::PodView, api::OwnerRef), so
// the predicates are templates over what a type has: `generation`, `labels`, `annotations`, and owner
// references with `kind`, `name`, `uid` and `controller`.
#pragma once

#include <concepts>
#include <string>
#include <string_view>
#include <vector>

namespace kubex::kube {

template <class T>
concept HasGeneration = requires(const T& t) {
  { t.generation } -> std::convertible_to<long long>;
};
template <class T>
concept HasLabels = requires(const T& t) {
  { t.labels == t.labels } -> std::convertible_to<bool>;
};
template <class T>
concept HasAnnotations = requires(const T& t) {
  { t.annotations == t.annotations } -> std::convertible_to<bool>;
};
template <class R>
concept OwnerReference = requires(const R& r) {
  { r.controller } -> std::convertible_to<bool>;
  { r.kind == r.kind } -> std::convertible_to<bool>;
  { r.name == r.name } -> std::convertible_to<bool>;
  { r.uid } -> std::convertible_to<const std::string&>;
};

// metadata.generation moved: the spec changed. Writes to the status subresource leave it alone, so a
// controller that writes status never sees its own writes come back as work. A missing side (an add, a
// delete, an object whose metadata could not be read) counts as a change.
template <HasGeneration M>
bool generation_changed(const M* before, const M* after) {
  return !before || !after || before->generation != after->generation;
}

// metadata.labels differ (a missing side counts as a change).
template <HasLabels M>
bool labels_changed(const M* before, const M* after) {
  return !before || !after || before->labels != after->labels;
}

// metadata.annotations differ, as far as the projection keeps them (a missing side counts as a change).
template <HasAnnotations M>
bool annotations_changed(const M* before, const M* after) {
  return !before || !after || before->annotations != after->annotations;
}

// The pod → owner edge: the ownerReferences entry with `controller: true` (the API server allows at most
// one); nullptr for a bare object. Owner chains (SEL-1) follow it one object at a time.
template <OwnerReference R>
const R* controller_of(const std::vector<R>& owners) {
  for (const auto& o : owners) {
    if (o.controller) return &o;
  }
  return nullptr;
}

// The controller reference points at another owner (kind or name), or appeared or went away: an adoption or
// an orphaning moves the object to another workload.
template <OwnerReference R>
bool controller_changed(const std::vector<R>& before, const std::vector<R>& after) {
  const R* x = controller_of(before);
  const R* y = controller_of(after);
  if (!x || !y) return (x == nullptr) != (y == nullptr);
  return x->kind != y->kind || x->name != y->name;
}

// The keys of an owner-uid index (owner → the objects it owns, e.g. a workload's pods): the uid of every
// owner reference that has one, as views into `owners`.
template <OwnerReference R>
std::vector<std::string_view> owner_uids(const std::vector<R>& owners) {
  std::vector<std::string_view> out;
  for (const auto& r : owners) {
    const std::string& uid = r.uid;
    if (!uid.empty()) out.push_back(uid);
  }
  return out;
}

}  // namespace kubex::kube
