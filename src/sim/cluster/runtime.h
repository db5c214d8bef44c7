// Controller runtime of the simulated cluster: feeds of cluster events, deduplicating work queues, controllers
// with worker threads, and a small JSON client whose calls go through the cluster's whole API pipeline
// (defaulting, admission webhooks, validation), as kube-controller-manager's writes do.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "sim/apiserver/store.h"

namespace kubex::sim::cluster {

// Delivers every event of one storage (e.g. "/pods") in resourceVersion order: first a synthetic ADDED for
// each object present at start, then live events. Handlers run on the feed's thread and must be quick. Two
// implementations (SIM-3): the in-process store's events (StoreFeed, `serve`) and LIST+WATCH of an API server
// (`agent`, sim/agent).
class Feed {
 public:
  using Handler = std::function<void(EventType type, const StoreEvent& ev)>;
  virtual ~Feed() = default;
  void add_handler(Handler h) { handlers_.push_back(std::move(h)); }
  virtual void start() = 0;
  virtual void stop() = 0;
  // True once the initial objects were delivered.
  bool synced() const { return synced_; }
  // True when the handlers have seen every event of the storage known so far.
  virtual bool caught_up() const = 0;

 protected:
  void deliver(EventType type, const StoreEvent& ev) {
    for (auto& h : handlers_) h(type, ev);
  }
  std::atomic<bool> synced_{false};

 private:
  std::vector<Handler> handlers_;
};

// The feed of one storage of the in-process Store.
class StoreFeed final : public Feed {
 public:
  StoreFeed(Store& store, std::string storage);
  ~StoreFeed() override;
  void start() override;
  void stop() override;
  bool caught_up() const override;

 private:
  void run();
  Store& store_;
  std::string storage_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> delivered_rv_{0};
  std::thread thread_;
};

// Deduplicating work queue with delayed adds (like client-go's workqueue, without rate limiting).
class WorkQueue {
 public:
  void add(const std::string& key);
  void add_after(const std::string& key, std::chrono::milliseconds delay);
  // Blocks until a key is ready or the queue is shut down (returns false then).
  bool get(std::string& key);
  // Marks processing finished; a key re-added meanwhile is queued again.
  void done(const std::string& key);
  void shutdown();
  std::size_t size() const;
  // No key is queued, due or being processed (keys delayed into the future do not count).
  bool idle() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> queued_, processing_, dirty_;
  std::multimap<std::chrono::steady_clock::time_point, std::string> delayed_;
  bool shutdown_ = false;
};

// A level-triggered controller: workers call reconcile(key); a returned delay requeues the key.
class Controller {
 public:
  using Reconcile = std::function<std::optional<std::chrono::milliseconds>(const std::string& key)>;
  Controller(std::string name, Reconcile reconcile, int workers = 1);
  ~Controller();
  void enqueue(const std::string& key) { queue_.add(key); }
  void enqueue_after(const std::string& key, std::chrono::milliseconds d) { queue_.add_after(key, d); }
  void start();
  void stop();
  const std::string& name() const { return name_; }
  // Nothing to reconcile now (see WorkQueue::idle).
  bool idle() const { return queue_.idle(); }

 private:
  std::string name_;
  Reconcile reconcile_;
  int workers_;
  WorkQueue queue_;
  std::vector<std::thread> threads_;
  common::Logger log_;
};

class ClusterIo;

// JSON calls to the cluster as a controller identity, through the simulation's ClusterIo (in-process: the full
// API pipeline as `user`; REST: the agent's kubeconfig identity). Errors come back as the Status JSON.
class Client {
 public:
  explicit Client(ClusterIo& io, std::string user = "system:kube-controller-manager");
  struct Response {
    int status = 0;
    std::string body;
    bool ok() const { return status >= 200 && status < 300; }
    nlohmann::json json() const;
  };
  Response get(const std::string& path) const;
  Response create(const std::string& collection_path, const nlohmann::json& obj) const;
  Response update(const std::string& path, const nlohmann::json& obj) const;
  Response merge_patch(const std::string& path, const nlohmann::json& patch) const;
  Response json_patch(const std::string& path, const nlohmann::json& ops) const;
  // `delete_options`: a DeleteOptions JSON body, or "" for none.
  Response remove(const std::string& path, const std::string& delete_options = "") const;

 private:
  ClusterIo& io_;
  std::string user_;
};

// REST paths of the simulation's calls.
std::string core_path(const std::string& plural, const std::string& ns, const std::string& name = "");
std::string group_path(const std::string& group_version, const std::string& plural, const std::string& ns,
                       const std::string& name = "");

}  // namespace kubex::sim::cluster
