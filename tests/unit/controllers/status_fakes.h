// Fakes for the status controllers' unit tests. The "API server" is a map of objects whose /status writes go
// through the same pure merge as act::update_status (act::apply_status_change, previous conditions, the
// generation guard); the "informer cache" is the map's objects run through the engine's own projection and
// validator (api::project_kubex_object), refreshed by sync() the way a watch would; the catalog is built from
// those projections as observe/catalog.cpp builds it; events go through the real EventRecorder into a sink
// that keeps them.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "act/status.h"
#include "api/kinds.h"
#include "api/kubex_views.h"
#include "api/views.h"
#include "common/clock.h"
#include "act/status_writer.h"
#include "observe/catalog_view.h"
#include "decide/policy/catalog.h"
#include "kube/runtime/event_recorder.h"

namespace kubex::controllers::test {

using nlohmann::json;

class FakeApi {
 public:
  std::map<std::string, json> objects;  // object path -> object
  int writes = 0;
  std::optional<kube::ApiStatus> fail;  // every write fails with this while set

  // Adds (or replaces) an object; generation 1, or one more than the replaced one when the spec differs.
  void put(json obj) {
    api::Kind k = *api::kind_from_name(obj["kind"].get<std::string>());
    std::string ns = obj["metadata"].value("namespace", "");
    std::string name = obj["metadata"]["name"];
    std::string path = api::object_path(k, ns, name);
    auto it = objects.find(path);
    std::int64_t gen = 1;
    if (it != objects.end()) {
      gen = it->second["metadata"].value("generation", std::int64_t{1});
      if (it->second.value("spec", json()) != obj.value("spec", json())) ++gen;
      if (it->second.contains("status") && !obj.contains("status")) obj["status"] = it->second["status"];
    }
    obj["metadata"]["generation"] = gen;
    obj["metadata"]["uid"] = "uid-" + name;
    obj["metadata"]["resourceVersion"] = std::to_string(++rv_);
    objects[path] = std::move(obj);
  }
  void erase(api::Kind k, const std::string& ns, const std::string& name) {
    objects.erase(api::object_path(k, ns, name));
  }
  json& at(api::Kind k, const std::string& ns, const std::string& name) {
    return objects.at(api::object_path(k, ns, name));
  }
  json status(api::Kind k, const std::string& ns, const std::string& name) {
    return at(k, ns, name).value("status", json());
  }
  // The condition of `type`, or null.
  json condition(api::Kind k, const std::string& ns, const std::string& name, const std::string& type) {
    json s = status(k, ns, name);
    if (!s.is_object() || !s.contains("conditions")) return nullptr;
    for (const auto& c : s["conditions"]) {
      if (c.value("type", "") == type) return c;
    }
    return nullptr;
  }

 private:
  std::int64_t rv_ = 0;
};

// act::update_status over FakeApi.
class FakeStatusWriter final : public act::StatusWriter {
 public:
  explicit FakeStatusWriter(FakeApi* api) : api_(api) {}
  kube::KResult<act::StatusResult> write(const std::string& path, const act::StatusChange& change,
                                         common::TimePoint now) override {
    if (api_->fail) return std::unexpected(*api_->fail);
    auto it = api_->objects.find(path);
    if (it == api_->objects.end()) return std::unexpected(kube::ApiStatus{404, "NotFound", "not found", 0});
    json& obj = it->second;
    std::int64_t gen = obj["metadata"].value("generation", std::int64_t{0});
    act::StatusResult r;
    if (change.generation && *change.generation != gen) {
      r.stale = true;
      return r;
    }
    json before = obj.contains("status") ? obj["status"] : json();
    json status = before;
    r.previous = act::conditions_of(before);
    r.transitioned = act::apply_status_change(status, change, gen, now);
    if (status == before) return r;
    obj["status"] = status;
    ++api_->writes;
    r.written = true;
    return r;
  }

 private:
  FakeApi* api_;
};

// The informer caches of kubex's kinds, as projections of FakeApi's objects at the last sync().
class FakeCache {
 public:
  explicit FakeCache(FakeApi* api) : api_(api) {}
  void sync() {
    items_.clear();
    for (const auto& [path, obj] : api_->objects) {
      api::Kind k = *api::kind_from_name(obj["kind"].get<std::string>());
      auto p = api::project_kubex_object(k, obj);
      items_[{k, p->key()}] = p;
    }
  }
  common::ObjectPtr get(api::Kind k, const std::string& key) const {
    auto it = items_.find({k, key});
    return it == items_.end() ? nullptr : it->second;
  }
  // As engine::Inventory::catalog() builds it.
  std::shared_ptr<const decide::policy::Catalog> catalog(
      const std::string& global_config_name = "global-config") const {
    std::vector<decide::policy::PolicyInput> policies;
    std::vector<decide::policy::StrategyInput> strategies;
    api::GlobalConfigSpec global;
    api::PolicyEvaluation evaluation;
    for (const auto& [id, o] : items_) {
      if (api::is_strategy(id.first)) {
        strategies.push_back(decide::policy::strategy_input(std::static_pointer_cast<const api::StrategyObject>(o)));
      } else if (api::is_policy(id.first)) {
        policies.push_back(decide::policy::policy_input(std::static_pointer_cast<const api::PolicyObject>(o)));
      } else if (id.first == api::Kind::kGlobalConfiguration && id.second == global_config_name) {
        global = std::static_pointer_cast<const api::GlobalConfigObject>(o)->parsed.value.spec;
      }
    }
    return std::make_shared<const decide::policy::Catalog>(std::move(policies), std::move(strategies),
                                                           std::move(global), std::move(evaluation));
  }

 private:
  FakeApi* api_;
  std::map<std::pair<api::Kind, std::string>, common::ObjectPtr> items_;
};

// FakeCache as the controllers read it (observe::CatalogView).
class FakeCatalogView final : public observe::CatalogView {
 public:
  explicit FakeCatalogView(const FakeCache* cache) : cache_(cache) {}
  std::shared_ptr<const decide::policy::Catalog> catalog() const override { return cache_->catalog(); }

 private:
  const FakeCache* cache_;
};

// FakeCache as the status controllers read single objects (observe::KubexObjects).
class FakeKubexObjects final : public observe::KubexObjects {
 public:
  explicit FakeKubexObjects(const FakeCache* cache) : cache_(cache) {}
  common::ObjectPtr object(api::Kind k, const std::string& key) const override { return cache_->get(k, key); }

 private:
  const FakeCache* cache_;
};

// Keeps the Events the recorder creates.
class FakeEventSink final : public kube::EventSink {
 public:
  explicit FakeEventSink(std::vector<json>* out) : out_(out) {}
  std::string create(const std::string&, const json& event) override {
    out_->push_back(event);
    return "";
  }
  std::string patch(const std::string&, const std::string& name, const json& p, bool& not_found) override {
    not_found = false;
    for (auto& e : *out_) {
      if (e["metadata"]["name"] == name) e["count"] = p.value("count", 1);
    }
    return "";
  }

 private:
  std::vector<json>* out_;
};

// (type, reason, message) of each event, in order.
inline std::vector<std::vector<std::string>> summarize(const std::vector<json>& events) {
  std::vector<std::vector<std::string>> out;
  for (const auto& e : events) out.push_back({e["type"], e["reason"], e["message"]});
  return out;
}

inline json kubex_object(const std::string& kind, const std::string& ns, const std::string& name, json spec) {
  json o = {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
            {"kind", kind},
            {"metadata", {{"name", name}}},
            {"spec", spec}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  return o;
}

// A KAI strategy that passes validation.
inline json kai_strategy_spec() {
  return {{"experimental", {{"gpuKaiContract", "v1alpha1-2026-07"}}},
          {"enablement",
           {{"overrideScheduler", "kai"}, {"gpu", {{"requests", {{"upsize", true}, {"ceiling", "1"}}}}}}}};
}

// The GpuReactivePolicy spec of the user's guide, referencing `strategy`.
inline json reactive_spec(const std::string& strategy, bool cluster = false) {
  json signal = {{"prometheus",
                  {{"metric", "kubex_gpu_container_sm_utilization_percent"},
                   {"namespaceLabel", "namespace"},
                   {"podLabel", "pod"},
                   {"containerLabel", "container"}}}};
  json spec = {{"experimental", {{"gpuKaiContract", "v1alpha1-2026-07"}}},
               {"automationStrategyRef", {{"name", strategy}}},
               {"metrics", {{"compute", signal}, {"memory", signal}}}};
  json scope = {{"labelSelector", {{"matchLabels", {{"nvidia.com/gpu.present", "true"}}}}},
                {"workloadTypes", {"Deployment"}}};
  if (cluster) scope["namespaceSelector"] = {{"operator", "In"}, {"values", {"*"}}};
  spec["scope"] = scope;
  return spec;
}

inline std::shared_ptr<const api::WorkloadView> deployment(const std::string& ns, const std::string& name,
                                                           json labels) {
  return api::project_workload(
      {{"apiVersion", "apps/v1"},
       {"kind", "Deployment"},
       {"metadata", {{"name", name}, {"namespace", ns}, {"uid", "d-" + name}, {"labels", labels}}},
       {"spec", json::object()}});
}

}  // namespace kubex::controllers::test
