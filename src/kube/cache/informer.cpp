#include "kube/cache/informer.h"

#include "kube/cache/discovery.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

namespace kubex::kube {

using nlohmann::json;

namespace {

// FNV-1a, fed piecewise so that an object's (ns, name) hashes like its "ns/name" key.
struct Fnv {
  std::size_t h = 14695981039346656037ull;
  void add(std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  }
};

}  // namespace

std::size_t Informer::KeyHash::operator()(std::string_view key) const {
  Fnv f;
  f.add(key);
  return f.h;
}

std::size_t Informer::KeyHash::operator()(const ObjectPtr& obj) const {
  Fnv f;
  if (!obj->ns.empty()) {
    f.add(obj->ns.view());
    f.add("/");
  }
  f.add(obj->name);
  return f.h;
}

bool Informer::KeyEq::operator()(const ObjectPtr& a, const ObjectPtr& b) const {
  return a->ns == b->ns && a->name == b->name;
}

bool Informer::KeyEq::operator()(std::string_view key, const ObjectPtr& obj) const {
  if (obj->ns.empty()) return key == obj->name;
  std::string_view ns = obj->ns.view();
  return key.size() == ns.size() + 1 + obj->name.size() && key.substr(0, ns.size()) == ns &&
         key[ns.size()] == '/' && key.substr(ns.size() + 1) == obj->name;
}

Informer::Informer(std::shared_ptr<Client> client, std::string list_path, Projector project,
                   InformerOptions options)
    : client_(std::move(client)),
      path_(std::move(list_path)),
      project_(std::move(project)),
      options_(options) {
  log_ = common::Logger("informer" + path_);
}

Informer::~Informer() {
  stop();
}

void Informer::add_handlers(InformerHandlers handlers) {
  handlers_.push_back(std::move(handlers));
}

void Informer::add_index(const std::string& name, IndexFunc fn) {
  index_fns_[name] = std::move(fn);
}

void Informer::start() {
  stop_ = false;
  thread_ = std::thread([this] { run(); });
  if (options_.resync.count() > 0) resync_thread_ = std::thread([this] { resync_loop(); });
}

void Informer::stop() {
  stop_ = true;
  sync_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (resync_thread_.joinable()) resync_thread_.join();
}

bool Informer::wait_synced(std::chrono::milliseconds timeout) const {
  std::unique_lock lk(sync_mu_);
  return sync_cv_.wait_for(lk, timeout, [&] { return synced_.load() || stop_.load(); }) && synced_;
}

ObjectPtr Informer::get(const std::string& key) const {
  std::shared_lock lk(mu_);
  auto it = items_.find(std::string_view(key));
  return it == items_.end() ? nullptr : *it;
}

std::vector<ObjectPtr> Informer::list() const {
  std::shared_lock lk(mu_);
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& v : items_) out.push_back(v);
  return out;
}

std::vector<ObjectPtr> Informer::by_index(const std::string& index, std::string_view value) const {
  std::shared_lock lk(mu_);
  std::vector<ObjectPtr> out;
  auto it = indexes_.find(index);
  if (it == indexes_.end()) return out;
  auto [first, last] = it->second.equal_range(value);
  for (auto jt = first; jt != last; ++jt) out.push_back(jt->second);
  return out;
}

std::size_t Informer::size() const {
  std::shared_lock lk(mu_);
  return items_.size();
}

Informer::Stats Informer::stats() const {
  std::lock_guard lk(stats_mu_);
  return stats_;
}

namespace {

// An object's keys in one index, each once (two owner references with one uid make one entry).
std::vector<std::string_view> distinct_keys(const IndexFunc& fn, const CachedObject& obj) {
  std::vector<std::string_view> keys = fn(obj);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace

// Called only for an object not in the store (apply() removes the old version first), so no entry is a duplicate.
void Informer::index_add(const ObjectPtr& obj) {
  for (const auto& [name, fn] : index_fns_) {
    auto& idx = indexes_[name];
    for (std::string_view v : distinct_keys(fn, *obj)) idx.emplace(v, obj);
  }
}

void Informer::index_remove(const ObjectPtr& obj) {
  for (const auto& [name, fn] : index_fns_) {
    auto& idx = indexes_[name];
    for (std::string_view v : distinct_keys(fn, *obj)) {
      auto [first, last] = idx.equal_range(v);
      for (auto it = first; it != last; ++it) {
        if (it->second == obj) {
          idx.erase(it);
          break;
        }
      }
    }
  }
}

// Applies one change to the store and calls the handlers (on the reflector thread, in order).
void Informer::apply(const std::string& type, ObjectPtr obj, const std::string& deleted_key) {
  ObjectPtr old;
  if (type == "DELETED") {
    std::string key = obj ? obj->key() : deleted_key;
    {
      std::unique_lock lk(mu_);
      auto it = items_.find(std::string_view(key));
      if (it == items_.end()) return;
      old = *it;
      index_remove(old);
      items_.erase(it);
    }
    for (auto& h : handlers_) {
      if (h.on_delete) h.on_delete(old);
    }
    return;
  }
  if (!obj) return;
  {
    std::unique_lock lk(mu_);
    auto it = items_.find(obj);
    if (it != items_.end()) {
      old = *it;
      index_remove(old);
      items_.erase(it);
    }
    items_.insert(obj);
    index_add(obj);
  }
  for (auto& h : handlers_) {
    if (old) {
      if (h.on_update) h.on_update(old, obj);
    } else if (h.on_add) {
      h.on_add(obj);
    }
  }
}

Informer::ListOutcome Informer::relist() {
  std::unordered_set<ObjectPtr, KeyHash, KeyEq> fresh;
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.page_size = options_.page_size;
  lo.on_restart = [&] {  // ENG-4: an expired continue token; the list starts again from scratch
    fresh.clear();
    std::lock_guard lk(stats_mu_);
    ++stats_.list_restarts;
  };
  auto rv = client_->list(path_, lo, [&](json&& item) {
    try {
      if (auto p = project_(item)) fresh.insert(std::move(p));
    } catch (const std::exception& e) {
      log_.warn("cannot project object", {{"error", e.what()}});
    }
  });
  {
    std::lock_guard lk(stats_mu_);
    ++stats_.lists;
    if (!rv) ++stats_.errors;
  }
  bool absent = !rv && options_.absent_ok && rv.error().not_found();
  if (!rv && !absent) {
    log_.warn("list failed", {{"path", path_}, {"error", rv.error().str()}});
    return ListOutcome::kFailed;
  }
  if (absent) {
    if (!absent_) log_.info("resource not served; waiting for it to appear", {{"path", path_}});
    fresh.clear();  // the objects of a resource that went away are gone
  } else if (absent_) {
    log_.info("resource served again", {{"path", path_}});
  }
  absent_ = absent;
  // Deliver the difference: objects gone while we were not watching, then new or changed ones.
  std::vector<std::string> gone;
  {
    std::shared_lock lk(mu_);
    for (const auto& v : items_) {
      if (!fresh.count(v)) gone.push_back(v->key());
    }
  }
  for (const auto& k : gone) apply("DELETED", nullptr, k);
  for (const auto& v : fresh) {
    ObjectPtr cur;
    {
      std::shared_lock lk(mu_);
      auto it = items_.find(v);
      if (it != items_.end()) cur = *it;
    }
    if (cur && cur->resource_version == v->resource_version) continue;
    apply("ADDED", v, "");
  }
  if (!absent) {
    std::unique_lock lk(mu_);
    rv_ = *rv;
  }
  if (!synced_) {
    std::lock_guard lk(sync_mu_);
    synced_ = true;
    sync_cv_.notify_all();
  }
  return absent ? ListOutcome::kAbsent : ListOutcome::kListed;
}

void Informer::run() {
  std::mt19937 rng(std::random_device{}());
  int failures = 0;
  bool need_list = true;
  auto backoff = [&]() {
    auto base =
        std::min<long>(options_.backoff_cap.count(), options_.backoff_base.count() << std::min(failures, 10));
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<long>(base * jitter(rng)));
    while (!stop_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ++failures;
  };
  while (!stop_) {
    if (need_list) {
      ListOutcome listed = relist();
      if (listed == ListOutcome::kFailed) {
        backoff();
        continue;
      }
      if (listed == ListOutcome::kAbsent) {
        failures = 0;
        if (options_.discovery) {
          options_.discovery->wait_served(path_, stop_);
          continue;
        }
        auto until = std::chrono::steady_clock::now() + options_.absent_poll;
        while (!stop_ && std::chrono::steady_clock::now() < until) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        continue;
      }
      need_list = false;
      failures = 0;
    }
    WatchOptions wo;
    wo.label_selector = options_.label_selector;
    wo.field_selector = options_.field_selector;
    wo.timeout_seconds = options_.watch_timeout_seconds;
    {
      std::shared_lock lk(mu_);
      wo.resource_version = rv_;
    }
    {
      std::lock_guard lk(stats_mu_);
      ++stats_.watches;
    }
    auto res = client_->watch(
        path_, wo,
        [&](WatchEvent&& ev) {
          failures = 0;
          {
            std::lock_guard lk(stats_mu_);
            ++stats_.events;
          }
          std::string rv = (*ev.object)["metadata"].value("resourceVersion", "");
          if (ev.type == "BOOKMARK") {
            std::unique_lock lk(mu_);
            if (!rv.empty()) rv_ = rv;
            return true;
          }
          ObjectPtr obj;
          try {
            obj = project_(*ev.object);
          } catch (const std::exception& e) {
            log_.warn("cannot project object", {{"error", e.what()}});
          }
          std::string key;
          if (!obj) {
            CachedObject meta;
            fill_meta(meta, *ev.object);
            key = meta.key();
          }
          apply(ev.type == "DELETED" ? "DELETED" : "UPSERT", obj, key);
          std::unique_lock lk(mu_);
          if (!rv.empty()) rv_ = rv;
          return true;
        },
        &stop_);
    if (stop_) break;
    if (!res) {
      if (res.error().gone()) {
        std::lock_guard lk(stats_mu_);
        ++stats_.relists_after_gone;
        need_list = true;
        log_.info("watch expired, relisting", {{"path", path_}});
        continue;
      }
      {
        std::lock_guard lk(stats_mu_);
        ++stats_.errors;
      }
      log_.warn("watch failed, retrying", {{"path", path_}, {"error", res.error().str()}});
      backoff();
    }
  }
}

void Informer::resync_loop() {
  auto next = std::chrono::steady_clock::now() + options_.resync;
  while (!stop_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (std::chrono::steady_clock::now() < next || !synced_) continue;
    next = std::chrono::steady_clock::now() + options_.resync;
    for (const auto& obj : list()) {
      for (auto& h : handlers_) {
        if (h.on_update) h.on_update(obj, obj);
      }
    }
  }
}

}  // namespace kubex::kube
