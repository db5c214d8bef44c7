#include "sim/cluster/context.h"

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "common/time_format.h"
#include "sim/cluster/cluster_io.h"

namespace kubex::sim::cluster {

using nlohmann::json;

ObjectRef pod_ref(const SimPod& p) { return {"v1", "Pod", p.ns, p.name, p.uid}; }

ClusterContext::ClusterContext(ClusterIo& io, ClusterConfig config)
    : io_(io), client_(io), config_(std::move(config)), clock_(io.clock()) {
  // Every subsystem reads pods and nodes through these caches.
  feed("/pods").add_handler([this](EventType type, const StoreEvent& ev) {
    if (type == EventType::kDeleted) {
      pods_.remove(ev.index->ns + "/" + ev.index->name);
      return;
    }
    auto obj = json::parse(*ev.text, nullptr, false);
    if (obj.is_discarded()) return;
    pods_.upsert(std::make_shared<const SimPod>(parse_pod(obj)));
  });
  feed("/nodes").add_handler([this](EventType type, const StoreEvent& ev) {
    if (type == EventType::kDeleted) {
      nodes_.remove(ev.index->name);
      return;
    }
    auto obj = json::parse(*ev.text, nullptr, false);
    if (obj.is_discarded()) return;
    nodes_.upsert(std::make_shared<const SimNode>(parse_node(obj)));
  });
}

ClusterContext::~ClusterContext() { stop_feeds(); }

Feed& ClusterContext::feed(const std::string& storage) {
  std::lock_guard lk(feeds_mu_);
  auto& f = feeds_[storage];
  if (!f) f = io_.make_feed(storage);
  return *f;
}

void ClusterContext::start_feeds() {
  std::lock_guard lk(feeds_mu_);
  for (auto& [k, f] : feeds_) f->start();
}

void ClusterContext::stop_feeds() {
  std::lock_guard lk(feeds_mu_);
  for (auto& [k, f] : feeds_) f->stop();
}

bool ClusterContext::feeds_caught_up() const {
  auto* self = const_cast<ClusterContext*>(this);
  std::lock_guard lk(self->feeds_mu_);
  for (const auto& [k, f] : feeds_) {
    if (!f->caught_up()) return false;
  }
  return true;
}

bool ClusterContext::feeds_synced() const {
  auto* self = const_cast<ClusterContext*>(this);
  std::lock_guard lk(self->feeds_mu_);
  for (const auto& [k, f] : feeds_) {
    if (!f->synced()) return false;
  }
  return true;
}

void ClusterContext::record_event(const ObjectRef& ref, const std::string& type, const std::string& reason,
                                  const std::string& message, const std::string& component) {
  std::string ns = ref.ns.empty() ? "default" : ref.ns;
  std::string key = ref.uid + "|" + type + "|" + reason + "|" + message;
  std::string ts = common::format_rfc3339(now());
  std::string name;
  int count = 1;
  {
    std::lock_guard lk(events_mu_);
    if (event_names_.size() > 20000) event_names_.clear();  // bound the aggregation memory
    auto it = event_names_.find(key);
    if (it != event_names_.end()) {
      name = it->second.first;
      count = ++it->second.second;
    } else {
      name = ref.name + "." + common::random_hex(8);
      event_names_[key] = {name, 1};
    }
  }
  if (count > 1) {
    auto r = client_.merge_patch(core_path("events", ns, name), {{"count", count}, {"lastTimestamp", ts}});
    if (r.ok()) return;
  }
  json ev = {{"apiVersion", "v1"},
             {"kind", "Event"},
             {"metadata", {{"name", name}, {"namespace", ns}}},
             {"involvedObject",
              {{"apiVersion", ref.api_version}, {"kind", ref.kind}, {"namespace", ref.ns}, {"name", ref.name},
               {"uid", ref.uid}}},
             {"reason", reason},
             {"message", message},
             {"type", type},
             {"source", {{"component", component}}},
             {"firstTimestamp", ts},
             {"lastTimestamp", ts},
             {"count", count},
             {"reportingComponent", component},
             {"reportingInstance", component}};
  client_.create(core_path("events", ns), ev);
}

}  // namespace kubex::sim::cluster
