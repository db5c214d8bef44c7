// Informers (DESIGN §2.3, §3 kube/cache): a reflector (paginated LIST, then WATCH from its resourceVersion
// with bookmarks; reconnect with back-off; 410 Gone -> relist and deliver the difference as events) feeding
// a store of compact projections with secondary indexes, and event handlers.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/cached_object.h"
#include "common/log.h"
#include "kube/client/client.h"

namespace kubex::kube {

using common::CachedObject;
using common::fill_meta;
using common::ObjectPtr;

// Turns a JSON object into its projection (or nullptr to ignore the object).
using Projector = std::function<ObjectPtr(const nlohmann::json& obj)>;

struct InformerHandlers {
  std::function<void(const ObjectPtr& obj)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  std::function<void(const ObjectPtr& obj)> on_delete;
};

// Values of a secondary index for one object (e.g. its namespace, owner UIDs, node name). The views must point
// into the object itself (its fields or interned strings): the index keeps them as its keys for as long as the
// store holds the object, so an entry costs one node and no copy of its key.
using IndexFunc = std::function<std::vector<std::string_view>(const CachedObject& obj)>;

class ApiDiscovery;

struct InformerOptions {
  std::string label_selector, field_selector;
  int page_size = 500;
  int watch_timeout_seconds = 300;
  std::chrono::milliseconds resync{0};  // 0 = no periodic resync; otherwise on_update(obj, obj) for all
  std::chrono::milliseconds backoff_base{250};
  std::chrono::milliseconds backoff_cap{30000};
  // An API that may not be installed (optional owner kinds, CRDs applied after the engine starts): a LIST
  // answered 404 counts as an empty, synced list, and the informer lists again every `absent_poll` until
  // the resource appears.
  bool absent_ok = false;
  std::chrono::milliseconds absent_poll{10000};
  // With absent_ok: instead of listing again every absent_poll, wait until API discovery (shared by the informers
  // of one process) says the resource is served, then list (issue 34 item 9: no 404 polling per informer).
  std::shared_ptr<ApiDiscovery> discovery;
};

class Informer {
 public:
  // `list_path`: the collection, e.g. "/api/v1/pods" (all namespaces) or "/apis/apps/v1/deployments".
  Informer(std::shared_ptr<Client> client, std::string list_path, Projector project,
           InformerOptions options = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Registration happens before start().
  void add_handlers(InformerHandlers handlers);
  void add_index(const std::string& name, IndexFunc fn);

  void start();
  void stop();
  bool synced() const { return synced_; }
  // The last LIST found the resource not served (only with InformerOptions::absent_ok).
  bool absent() const { return absent_; }
  bool wait_synced(std::chrono::milliseconds timeout) const;

  ObjectPtr get(const std::string& key) const;
  std::vector<ObjectPtr> list() const;
  std::vector<ObjectPtr> by_index(const std::string& index, std::string_view value) const;
  std::size_t size() const;
  const std::string& path() const { return path_; }

  struct Stats {
    std::uint64_t lists = 0, watches = 0, events = 0, relists_after_gone = 0, errors = 0;
    std::uint64_t list_restarts = 0;  // LISTs started again after their continue token expired (ENG-4)
  };
  Stats stats() const;

 private:
  void run();
  void resync_loop();
  enum class ListOutcome { kListed, kFailed, kAbsent };
  ListOutcome relist();
  void apply(const std::string& type, ObjectPtr obj, const std::string& deleted_key);
  void index_add(const ObjectPtr& obj);
  void index_remove(const ObjectPtr& obj);

  std::shared_ptr<Client> client_;
  std::string path_;
  Projector project_;
  InformerOptions options_;
  std::vector<InformerHandlers> handlers_;
  std::map<std::string, IndexFunc> index_fns_;

  mutable std::shared_mutex mu_;
  // The store holds each object once: items are found by their "ns/name" key without storing it (the hash and
  // equality read the object's own ns and name), and index entries point at the objects.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const;
    std::size_t operator()(const ObjectPtr& obj) const;
  };
  struct KeyEq {
    using is_transparent = void;
    bool operator()(const ObjectPtr& a, const ObjectPtr& b) const;
    bool operator()(std::string_view key, const ObjectPtr& obj) const;
    bool operator()(const ObjectPtr& obj, std::string_view key) const { return (*this)(key, obj); }
  };
  std::unordered_set<ObjectPtr, KeyHash, KeyEq> items_;
  // One flat multimap per index, keyed by views into the objects (IndexFunc): a set per key cost ~4x as much.
  std::map<std::string, std::unordered_multimap<std::string_view, ObjectPtr>> indexes_;
  std::string rv_;

  std::atomic<bool> stop_{false}, synced_{false}, absent_{false};
  mutable std::mutex sync_mu_;
  mutable std::condition_variable sync_cv_;
  std::thread thread_, resync_thread_;
  mutable std::mutex stats_mu_;
  Stats stats_;
  common::Logger log_{"informer"};
};

// Typed access to an informer's projections.
template <class T>
std::shared_ptr<const T> as(const ObjectPtr& p) {
  return std::static_pointer_cast<const T>(p);
}

}  // namespace kubex::kube
