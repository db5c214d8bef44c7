// In-memory object storage with a global resourceVersion and a bounded per-resource event history
// for WATCH (like etcd + kube-apiserver's watch cache). Objects are kept as compact JSON text plus a
// small index (namespace, name, labels, selectable fields, owners), so LIST is a concatenation and
// memory stays proportional to the serialized size.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kubex::sim {

struct ObjectIndex {
  std::string ns;
  std::string name;
  std::string uid;
  std::vector<std::pair<std::string, std::string>> labels;  // sorted by key
  std::vector<std::pair<std::string, std::string>> fields;  // selectable field values
  std::vector<std::string> owner_uids;
  bool deleting = false;  // metadata.deletionTimestamp set
  const std::string* label(const std::string& key) const;
  const std::string* field(const std::string& key) const;
};

using TextPtr = std::shared_ptr<const std::string>;
using IndexPtr = std::shared_ptr<const ObjectIndex>;

struct StoredObject {
  TextPtr text;
  IndexPtr index;
  std::uint64_t rv = 0;
};

enum class EventType { kAdded, kModified, kDeleted, kBookmark };
const char* event_type_name(EventType t);

struct StoreEvent {
  std::uint64_t rv = 0;
  EventType type = EventType::kAdded;
  TextPtr text;    // the object after the change (for deletions: its last state)
  IndexPtr index;  // index of `text`
  IndexPtr prev;   // index before a modification (null otherwise)
};

// Key of an object inside one resource: "ns/name" or "name" for cluster-scoped kinds.
std::string object_key(const std::string& ns, const std::string& name);

// Builds the index of an object; `fields` lists the selectable field paths to extract ("spec.nodeName").
IndexPtr build_index(const nlohmann::json& obj, const std::vector<std::string>& fields);

class Store {
 public:
  explicit Store(std::size_t watch_window = 10000);

  std::uint64_t current_rv() const;

  std::optional<StoredObject> get(const std::string& storage, const std::string& key) const;

  // Snapshot of all objects of a storage whose key starts after `after_key` (exclusive), in key order,
  // filtered by `ns` (empty = all). `filter` may reject items. Stops after `limit` matches (0 = no limit)
  // and reports whether more remain.
  struct ListResult {
    std::vector<StoredObject> items;
    std::uint64_t rv = 0;
    bool more = false;
    std::string last_key;
    std::int64_t remaining = -1;  // items after this page; only counted for unfiltered lists (else -1)
  };
  ListResult list(const std::string& storage, const std::string& ns, const std::string& after_key,
                  std::size_t limit, const std::function<bool(const ObjectIndex&)>& filter) const;

  // Writes. `mutate_rv` receives the new resourceVersion so the caller can stamp it into the object before
  // it is serialized (the callback runs under the store lock and must not call back into the store).
  // Preconditions are checked atomically: for update/remove, `expected_rv` (0 = any) must match.
  enum class WriteStatus { kOk, kExists, kNotFound, kConflict };
  struct WriteResult {
    WriteStatus status = WriteStatus::kOk;
    std::uint64_t rv = 0;
    TextPtr text;
    std::optional<StoredObject> current;  // on conflict/exists: what is stored now
  };
  WriteResult create(const std::string& storage, const std::string& key, nlohmann::json& obj,
                     const std::vector<std::string>& fields);
  WriteResult update(const std::string& storage, const std::string& key, nlohmann::json& obj,
                     std::uint64_t expected_rv, const std::vector<std::string>& fields);
  WriteResult remove(const std::string& storage, const std::string& key, std::uint64_t expected_rv,
                     nlohmann::json* final_state);

  // --- watch ---
  // Oldest resourceVersion a watch of `storage` may start from (older ones get 410 Gone).
  std::uint64_t compacted_rv(const std::string& storage) const;
  // resourceVersion of the newest retained event of `storage` (0 when none is retained).
  std::uint64_t last_event_rv(const std::string& storage) const;
  // Drops all retained history of every storage (tests use this to force 410 Gone).
  void compact_all();
  // Starts the watch window at the current resourceVersion, as kube-apiserver's watch cache begins at the
  // version of the list it is initialised from at start-up: a later watch from an older version (e.g.
  // resourceVersion=1 on a fresh server) is answered 410 Gone, reason Expired. Events after now are kept.
  void begin_watch_window();

  class Cursor {
   public:
    // Waits up to `timeout` for events after the cursor position; returns them (possibly empty on timeout).
    // `gone` is set when the position fell out of the retained window.
    std::vector<StoreEvent> next(std::chrono::milliseconds timeout, bool& gone);
    std::uint64_t position() const { return position_; }

   private:
    friend class Store;
    Cursor(const Store* store, std::string storage, std::uint64_t from) : store_(store), storage_(std::move(storage)), position_(from) {}
    const Store* store_;
    std::string storage_;
    std::uint64_t position_;
  };
  // A cursor delivering events with rv > from_rv; nullopt (410) when from_rv is older than the window.
  std::optional<Cursor> watch(const std::string& storage, std::uint64_t from_rv) const;
  // Wakes every waiting cursor (used at shutdown).
  void wake_all() const;

  // Total number of stored objects of a storage (for metrics and tests).
  std::size_t count(const std::string& storage) const;
  std::vector<std::string> storages() const;

  // Persistence hook: called under the lock for every committed change, in rv order.
  using CommitHook = std::function<void(const std::string& storage, const std::string& key, const StoreEvent&)>;
  void set_commit_hook(CommitHook hook);
  // Loads an object during recovery (no event is produced). Sets the rv counter to at least `rv`.
  void restore(const std::string& storage, const std::string& key, const std::string& text, std::uint64_t rv,
               const std::vector<std::string>& fields);
  // After recovery: continue the rv counter at `rv`; watches from older versions get 410 Gone.
  void finish_restore(std::uint64_t rv);

 private:
  struct Bucket {
    std::map<std::string, StoredObject> objects;
    std::deque<StoreEvent> history;
    std::uint64_t compacted = 0;
  };
  Bucket& bucket(const std::string& storage);
  const Bucket* find_bucket(const std::string& storage) const;
  void append_event(const std::string& storage, const std::string& key, Bucket& b, StoreEvent ev);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::unordered_map<std::string, Bucket> buckets_;
  std::uint64_t rv_ = 1;
  std::uint64_t floor_rv_ = 0;  // no watch may start before this (history lost on restart)
  std::size_t window_;
  CommitHook hook_;
};

}  // namespace kubex::sim
