#include "sim/cluster/runtime.h"

#include <nlohmann/json.hpp>

#include "sim/cluster/cluster_io.h"

namespace kubex::sim::cluster {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------------------
// Feed

StoreFeed::StoreFeed(Store& store, std::string storage) : store_(store), storage_(std::move(storage)) {}

StoreFeed::~StoreFeed() { stop(); }

void StoreFeed::start() { thread_ = std::thread([this] { run(); }); }

void StoreFeed::stop() {
  stop_ = true;
  store_.wake_all();
  if (thread_.joinable()) thread_.join();
}

void StoreFeed::run() {
  while (!stop_) {
    auto listed = store_.list(storage_, "", "", 0, nullptr);
    for (const auto& item : listed.items) {
      StoreEvent ev{item.rv, EventType::kAdded, item.text, item.index, nullptr};
      deliver(EventType::kAdded, ev);
    }
    delivered_rv_ = listed.rv;
    synced_ = true;
    auto cursor = store_.watch(storage_, listed.rv);
    if (!cursor) continue;  // history compacted between list and watch: relist
    bool gone = false;
    while (!stop_ && !gone) {
      auto events = cursor->next(std::chrono::milliseconds(200), gone);
      for (const auto& ev : events) {
        deliver(ev.type, ev);
      }
      if (!events.empty()) delivered_rv_ = events.back().rv;
    }
    // Fell out of the retained window: relist. Handlers see ADDED for objects they may already know;
    // they must treat ADDED as an upsert. Deletions missed meanwhile are reconciled by the controllers'
    // periodic resyncs.
  }
}

bool StoreFeed::caught_up() const {
  return synced_ && delivered_rv_ >= store_.last_event_rv(storage_);
}

// ---------------------------------------------------------------------------------------------------------
// WorkQueue

void WorkQueue::add(const std::string& key) {
  std::lock_guard lk(mu_);
  if (shutdown_) return;
  if (processing_.count(key)) {
    dirty_.insert(key);
    return;
  }
  if (queued_.insert(key).second) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::add_after(const std::string& key, std::chrono::milliseconds delay) {
  std::lock_guard lk(mu_);
  if (shutdown_) return;
  delayed_.emplace(std::chrono::steady_clock::now() + delay, key);
  cv_.notify_one();
}

bool WorkQueue::get(std::string& key) {
  std::unique_lock lk(mu_);
  while (true) {
    if (shutdown_) return false;
    auto now = std::chrono::steady_clock::now();
    while (!delayed_.empty() && delayed_.begin()->first <= now) {
      std::string k = delayed_.begin()->second;
      delayed_.erase(delayed_.begin());
      if (processing_.count(k)) {
        dirty_.insert(k);
      } else if (queued_.insert(k).second) {
        queue_.push_back(k);
      }
    }
    if (!queue_.empty()) {
      key = queue_.front();
      queue_.pop_front();
      queued_.erase(key);
      processing_.insert(key);
      return true;
    }
    if (delayed_.empty()) {
      cv_.wait(lk);
    } else {
      cv_.wait_until(lk, delayed_.begin()->first);
    }
  }
}

void WorkQueue::done(const std::string& key) {
  std::lock_guard lk(mu_);
  processing_.erase(key);
  if (dirty_.erase(key) && !shutdown_ && queued_.insert(key).second) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::shutdown() {
  std::lock_guard lk(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

bool WorkQueue::idle() const {
  std::lock_guard lk(mu_);
  const bool due = !delayed_.empty() && delayed_.begin()->first <= std::chrono::steady_clock::now();
  return queue_.empty() && processing_.empty() && dirty_.empty() && !due;
}

std::size_t WorkQueue::size() const {
  std::lock_guard lk(mu_);
  return queue_.size();
}

// ---------------------------------------------------------------------------------------------------------
// Controller

Controller::Controller(std::string name, Reconcile reconcile, int workers)
    : name_(std::move(name)), reconcile_(std::move(reconcile)), workers_(workers), log_("kubex-sim." + name_) {}

Controller::~Controller() { stop(); }

void Controller::start() {
  for (int i = 0; i < workers_; ++i) {
    threads_.emplace_back([this] {
      std::string key;
      while (queue_.get(key)) {
        std::optional<std::chrono::milliseconds> again;
        try {
          again = reconcile_(key);
        } catch (const std::exception& e) {
          log_.error("reconcile failed", {{"key", key}, {"error", e.what()}});
          again = std::chrono::milliseconds(1000);
        }
        queue_.done(key);
        if (again) queue_.add_after(key, *again);
      }
    });
  }
}

void Controller::stop() {
  queue_.shutdown();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

// ---------------------------------------------------------------------------------------------------------
// Client

Client::Client(ClusterIo& io, std::string user) : io_(io), user_(std::move(user)) {}

json Client::Response::json() const { return nlohmann::json::parse(body, nullptr, false); }

Client::Response Client::get(const std::string& path) const { return io_.call(user_, "GET", path, "", ""); }

Client::Response Client::create(const std::string& collection_path, const json& obj) const {
  return io_.call(user_, "POST", collection_path, obj.dump(), "application/json");
}

Client::Response Client::update(const std::string& path, const json& obj) const {
  return io_.call(user_, "PUT", path, obj.dump(), "application/json");
}

Client::Response Client::merge_patch(const std::string& path, const json& patch) const {
  return io_.call(user_, "PATCH", path, patch.dump(), "application/merge-patch+json");
}

Client::Response Client::json_patch(const std::string& path, const json& ops) const {
  return io_.call(user_, "PATCH", path, ops.dump(), "application/json-patch+json");
}

Client::Response Client::remove(const std::string& path, const std::string& delete_options) const {
  return io_.call(user_, "DELETE", path, delete_options, "application/json");
}

std::string core_path(const std::string& plural, const std::string& ns, const std::string& name) {
  std::string p = "/api/v1/";
  if (!ns.empty()) p += "namespaces/" + ns + "/";
  p += plural;
  if (!name.empty()) p += "/" + name;
  return p;
}

std::string group_path(const std::string& group_version, const std::string& plural, const std::string& ns,
                       const std::string& name) {
  std::string p = "/apis/" + group_version + "/";
  if (!ns.empty()) p += "namespaces/" + ns + "/";
  p += plural;
  if (!name.empty()) p += "/" + name;
  return p;
}

}  // namespace kubex::sim::cluster
