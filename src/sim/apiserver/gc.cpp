#include "sim/apiserver/gc.h"

#include <nlohmann/json.hpp>

#include "sim/apiserver/api_server.h"
#include "sim/apiserver/pdb.h"

namespace kubex::sim {

using nlohmann::json;

GarbageCollector::GarbageCollector(ApiServer& server) : server_(server) {}

GarbageCollector::~GarbageCollector() { stop(); }

void GarbageCollector::start() {
  std::lock_guard lk(mu_);
  if (started_) return;
  started_ = true;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
  disruption_thread_ = std::thread([this] { run_disruption(); });
}

void GarbageCollector::stop() {
  {
    std::lock_guard lk(mu_);
    if (!started_) return;
    stop_ = true;
  }
  cv_.notify_all();
  disruption_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (disruption_thread_.joinable()) disruption_thread_.join();
  std::lock_guard lk(mu_);
  started_ = false;
}

void GarbageCollector::enqueue(Task t) {
  {
    std::lock_guard lk(mu_);
    queue_.push_back(std::move(t));
  }
  cv_.notify_all();
}

void GarbageCollector::object_removed(const ResourceInfo&, const json& obj) {
  std::string uid = obj.contains("metadata") ? obj["metadata"].value("uid", "") : "";
  if (!uid.empty()) enqueue({Task::kOwnerGone, uid, "", "", ""});
}

void GarbageCollector::object_deleting(const ResourceInfo& r, const json& obj) {
  const json& m = obj["metadata"];
  if (!m.contains("finalizers") || !m["finalizers"].is_array()) return;
  for (const auto& f : m["finalizers"]) {
    if (f == "orphan" || f == "foregroundDeletion" || f == "customresourcecleanup.apiextensions.k8s.io") {
      enqueue({Task::kFinalize, m.value("uid", ""), r.id(), m.value("namespace", ""), m.value("name", "")});
      return;
    }
  }
}

void GarbageCollector::namespace_created(const std::string& ns) { enqueue({Task::kNamespaceCreated, "", "", ns, ""}); }

void GarbageCollector::namespace_deleting(const std::string& ns) {
  {
    std::lock_guard lk(mu_);
    terminating_namespaces_.insert(ns);
  }
  enqueue({Task::kNamespace, "", "", ns, ""});
}

void GarbageCollector::run() {
  auto next_scan = std::chrono::steady_clock::now();
  while (true) {
    std::deque<Task> batch;
    {
      std::unique_lock lk(mu_);
      cv_.wait_for(lk, std::chrono::milliseconds(500), [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      batch.swap(queue_);
    }
    for (const auto& t : batch) {
      try {
        process(t);
      } catch (const std::exception& e) {
        log_.error("garbage collection task failed", {{"error", e.what()}});
      }
    }
    if (std::chrono::steady_clock::now() >= next_scan) {
      try {
        scan_dangling();
        std::set<std::string> nss;
        {
          std::lock_guard lk(mu_);
          nss = terminating_namespaces_;
        }
        for (const auto& ns : nss) {
          if (drain_namespace(ns)) {
            std::lock_guard lk(mu_);
            terminating_namespaces_.erase(ns);
          }
        }
      } catch (const std::exception& e) {
        log_.error("periodic collection failed", {{"error", e.what()}});
      }
      next_scan = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    }
  }
}

void GarbageCollector::run_disruption() {
  while (true) {
    {
      std::unique_lock lk(mu_);
      disruption_cv_.wait_for(lk, std::chrono::seconds(1), [&] { return stop_; });
      if (stop_) return;
    }
    try {
      pdb::refresh_all(server_);  // an eviction is decided from this status
    } catch (const std::exception& e) {
      log_.error("PodDisruptionBudget status refresh failed", {{"error", e.what()}});
    }
  }
}

void GarbageCollector::sync_once() {
  std::deque<Task> batch;
  {
    std::lock_guard lk(mu_);
    batch.swap(queue_);
  }
  for (const auto& t : batch) process(t);
  scan_dangling();
  pdb::refresh_all(server_);
}

void GarbageCollector::process(const Task& t) {
  switch (t.kind) {
    case Task::kOwnerGone: owner_gone(t.uid); break;
    case Task::kFinalize: finalize(t.resource_id, t.ns, t.name); break;
    case Task::kNamespace:
      if (drain_namespace(t.ns)) {
        std::lock_guard lk(mu_);
        terminating_namespaces_.erase(t.ns);
      }
      break;
    case Task::kNamespaceCreated: {
      json sa = {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "default"}}}};
      server_.call("POST", "/api/v1/namespaces/" + t.ns + "/serviceaccounts", sa.dump());
      break;
    }
  }
}

std::vector<std::tuple<std::string, std::string, std::string>> GarbageCollector::dependents(const std::string& uid) {
  std::vector<std::tuple<std::string, std::string, std::string>> out;
  std::set<std::string> seen;
  for (const auto& r : server_.registry().all()) {
    std::string storage = ApiServer::storage_of(*r);
    if (!seen.insert(storage).second) continue;
    auto l = server_.store().list(storage, "", "", 0, [&](const ObjectIndex& idx) {
      for (const auto& o : idx.owner_uids) {
        if (o == uid) return true;
      }
      return false;
    });
    for (const auto& item : l.items) out.emplace_back(r->id(), item.index->ns, item.index->name);
  }
  return out;
}

bool GarbageCollector::owner_exists(const json& ref, const std::string& ns) {
  std::string api_version = ref.value("apiVersion", "");
  std::string group, version = api_version;
  if (auto slash = api_version.find('/'); slash != std::string::npos) {
    group = api_version.substr(0, slash);
    version = api_version.substr(slash + 1);
  }
  auto r = server_.registry().find_kind(group, version, ref.value("kind", ""));
  if (!r) return false;
  auto owner = server_.read(*r, r->namespaced ? ns : "", ref.value("name", ""));
  return owner && (*owner)["metadata"].value("uid", "") == ref.value("uid", "");
}

void GarbageCollector::owner_gone(const std::string& uid) {
  for (const auto& [rid, ns, name] : dependents(uid)) {
    auto r = server_.registry().find_by_id(rid);
    if (!r) continue;
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto so = server_.store().get(ApiServer::storage_of(*r), object_key(r->namespaced ? ns : "", name));
      if (!so) break;
      json obj = json::parse(*so->text);
      json refs = obj["metadata"].value("ownerReferences", json::array());
      json remaining = json::array();
      bool any_alive = false;
      // Every reference is confirmed with a live read (the uid may come from a stale scan).
      for (const auto& ref : refs) {
        if (owner_exists(ref, ns)) {
          any_alive = true;
          remaining.push_back(ref);
        }
      }
      if (remaining.size() == refs.size()) break;  // nothing dangling after all
      if (!any_alive) {
        ApiServer::DeleteOptions opts;
        opts.propagation = "Background";
        opts.user = UserInfo{"system:serviceaccount:kube-system:generic-garbage-collector", "", {"system:authenticated"}};
        bool removed = false;
        auto res = server_.delete_object(*r, ns, name, opts, removed);
        if (res || res.error().code != 409) break;
        continue;
      }
      json next = obj;
      next["metadata"]["ownerReferences"] = remaining;
      std::vector<std::string> warnings;
      ApiServer::WriteOptions wo;
      wo.field_validation = "Ignore";
      wo.run_admission = false;
      auto res = server_.write_update(*r, ns, name, next, obj, so->rv, wo, warnings);
      if (res || res.error().code != 409) break;
    }
  }
}

void GarbageCollector::finalize(const std::string& resource_id, const std::string& ns, const std::string& name) {
  auto r = server_.registry().find_by_id(resource_id);
  if (!r) return;
  auto obj = server_.read(*r, ns, name);
  if (!obj) return;
  const json& m = (*obj)["metadata"];
  std::string uid = m.value("uid", "");
  json fins = m.value("finalizers", json::array());
  bool has_orphan = false, has_foreground = false, has_crd_cleanup = false;
  for (const auto& f : fins) {
    has_orphan = has_orphan || f == "orphan";
    has_foreground = has_foreground || f == "foregroundDeletion";
    has_crd_cleanup = has_crd_cleanup || f == "customresourcecleanup.apiextensions.k8s.io";
  }
  std::string done;
  if (has_orphan) {
    for (const auto& [rid, dns, dname] : dependents(uid)) {
      auto dr = server_.registry().find_by_id(rid);
      if (!dr) continue;
      auto so = server_.store().get(ApiServer::storage_of(*dr), object_key(dr->namespaced ? dns : "", dname));
      if (!so) continue;
      json dep = json::parse(*so->text);
      json refs = json::array();
      for (const auto& ref : dep["metadata"].value("ownerReferences", json::array())) {
        if (ref.value("uid", "") != uid) refs.push_back(ref);
      }
      json next = dep;
      if (refs.empty()) {
        next["metadata"].erase("ownerReferences");
      } else {
        next["metadata"]["ownerReferences"] = refs;
      }
      std::vector<std::string> warnings;
      ApiServer::WriteOptions wo;
      wo.field_validation = "Ignore";
      wo.run_admission = false;
      (void)server_.write_update(*dr, dns, dname, next, dep, so->rv, wo, warnings);
    }
    done = "orphan";
  } else if (has_foreground) {
    auto deps = dependents(uid);
    if (deps.empty()) {
      done = "foregroundDeletion";
    } else {
      for (const auto& [rid, dns, dname] : deps) {
        auto dr = server_.registry().find_by_id(rid);
        if (!dr) continue;
        ApiServer::DeleteOptions opts;
        opts.propagation = "Foreground";
        bool removed = false;
        (void)server_.delete_object(*dr, dns, dname, opts, removed);
      }
      // Re-check after the dependents' own deletion progresses.
      std::thread([this, resource_id, ns, name] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        enqueue({Task::kFinalize, "", resource_id, ns, name});
      }).detach();
      return;
    }
  } else if (has_crd_cleanup) {
    // Delete every custom resource this CRD defines, then release the CRD.
    for (const auto& cr : server_.registry().all()) {
      if (!cr->is_custom || cr->crd_name != name) continue;
      auto l = server_.store().list(ApiServer::storage_of(*cr), "", "", 0, nullptr);
      for (const auto& item : l.items) {
        bool removed = false;
        ApiServer::DeleteOptions opts;
        (void)server_.delete_object(*cr, item.index->ns, item.index->name, opts, removed);
      }
    }
    done = "customresourcecleanup.apiextensions.k8s.io";
  }
  if (done.empty()) return;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto so = server_.store().get(ApiServer::storage_of(*r), object_key(r->namespaced ? ns : "", name));
    if (!so) return;
    json cur = json::parse(*so->text);
    json kept = json::array();
    for (const auto& f : cur["metadata"].value("finalizers", json::array())) {
      if (f != done) kept.push_back(f);
    }
    json next = cur;
    next["metadata"]["finalizers"] = kept;
    if (kept.empty()) next["metadata"].erase("finalizers");
    std::vector<std::string> warnings;
    ApiServer::WriteOptions wo;
    wo.field_validation = "Ignore";
    wo.run_admission = false;
    auto res = server_.write_update(*r, ns, name, next, cur, so->rv, wo, warnings);
    if (res || res.error().code != 409) return;
  }
}

bool GarbageCollector::drain_namespace(const std::string& ns) {
  // At most this many deletions per scan, so that a namespace of thousands of objects is drained over several
  // scans and the other periodic work (PDB status, dangling owners) keeps its once-a-second pace.
  constexpr int kDeletesPerScan = 200;
  int deletes = 0;
  bool empty = true;
  std::set<std::string> seen;
  for (const auto& r : server_.registry().all()) {
    if (!r->namespaced) continue;
    std::string storage = ApiServer::storage_of(*r);
    if (!seen.insert(storage).second) continue;
    auto l = server_.store().list(storage, ns, "", 0, nullptr);
    for (const auto& item : l.items) {
      empty = false;
      if (item.index->deleting) continue;
      if (deletes++ >= kDeletesPerScan) return false;
      ApiServer::DeleteOptions opts;
      opts.propagation = "Background";
      bool removed = false;
      (void)server_.delete_object(*r, ns, item.index->name, opts, removed);
    }
  }
  if (!empty) return false;
  auto nsr = server_.registry().find("", "v1", "namespaces");
  auto so = server_.store().get("/namespaces", ns);
  if (!so) return true;
  json final_state = json::parse(*so->text);
  auto res = server_.store().remove("/namespaces", ns, so->rv, &final_state);
  if (res.status == Store::WriteStatus::kOk) object_removed(*nsr, final_state);
  return res.status != Store::WriteStatus::kConflict;
}

void GarbageCollector::scan_dangling() {
  std::set<std::string> uids;
  std::vector<std::tuple<ResourcePtr, std::string, std::string>> candidates;
  std::set<std::string> seen;
  for (const auto& r : server_.registry().all()) {
    std::string storage = ApiServer::storage_of(*r);
    if (!seen.insert(storage).second) continue;
    auto l = server_.store().list(storage, "", "", 0, nullptr);
    for (const auto& item : l.items) {
      uids.insert(item.index->uid);
      if (!item.index->owner_uids.empty()) candidates.emplace_back(r, item.index->ns, item.index->name);
    }
  }
  std::set<std::string> gone;
  for (const auto& [r, ns, name] : candidates) {
    auto so = server_.store().get(ApiServer::storage_of(*r), object_key(r->namespaced ? ns : "", name));
    if (!so) continue;
    for (const auto& o : so->index->owner_uids) {
      if (!uids.count(o)) gone.insert(o);
    }
  }
  for (const auto& uid : gone) owner_gone(uid);
}

}  // namespace kubex::sim
