// core/v1 Events for humans (OBS-2), like client-go's record package: asynchronous (event() never blocks;
// a bounded queue drops with a counter when full), a per-object token bucket against event storms, and
// aggregation of repeats (same object + type + reason + message -> PATCH count/lastTimestamp of the Event
// written before instead of a new Event).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <thread>
#include <unordered_map>

#include "common/clock.h"
#include "common/log.h"

namespace kubex::kube {

class Client;
class Metrics;

inline constexpr const char* kEngineComponent = "kubex-automation-engine";

struct ObjectReference {
  std::string api_version, kind, ns, name, uid, resource_version, field_path;
};

enum class EventType { kNormal, kWarning };
const char* to_string(EventType t);

// Where events go (the API server in production; a fake in tests).
class EventSink {
 public:
  virtual ~EventSink() = default;
  // Both return "" on success, else the error; `not_found` is set when the Event no longer exists.
  virtual std::string create(const std::string& ns, const nlohmann::json& event) = 0;
  virtual std::string patch(const std::string& ns, const std::string& name, const nlohmann::json& merge_patch,
                            bool& not_found) = 0;
};
std::unique_ptr<EventSink> client_event_sink(std::shared_ptr<Client> client);

struct EventRecorderOptions {
  std::string component = kEngineComponent;  // source.component and reportingComponent
  std::string instance;                      // reportingInstance (the replica identity)
  std::string host;                          // source.host
  std::size_t queue_capacity = 1000;
  int per_object_burst = 25;                                     // client-go's spam filter defaults:
  common::Duration per_object_refill = std::chrono::minutes(5);  // burst 25, then one per 5 minutes
  std::size_t aggregation_cache_size = 4096;
  const common::Clock* clock = nullptr;  // default: the real clock
  Metrics* metrics = nullptr;            // kubex_events_total{result}; may be null
};

// The aggregation key: two events with equal keys are the same event repeated.
std::string event_aggregation_key(const ObjectReference& obj, EventType type, const std::string& reason,
                                  const std::string& message);
// The namespace an object's events live in ("default" for cluster-scoped objects).
std::string event_namespace(const ObjectReference& obj);
// A new core/v1 Event (count 1) named <object>.<hex nanoseconds>.
nlohmann::json build_event(const ObjectReference& obj, EventType type, const std::string& reason,
                           const std::string& message, common::TimePoint now, const EventRecorderOptions& o);

class EventRecorder {
 public:
  EventRecorder(std::unique_ptr<EventSink> sink, EventRecorderOptions options);
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Starts the writer thread. Without start(), events wait until flush().
  void start();
  // Writes what is queued (bounded by `deadline`), then stops the writer thread.
  void stop(std::chrono::milliseconds deadline = std::chrono::milliseconds(2000));

  // Never blocks. False when the event was dropped (queue full or the object's rate limit).
  bool event(const ObjectReference& obj, EventType type, const std::string& reason,
             const std::string& message);
  // Writes every queued event on the calling thread (tests; shutdown).
  void flush();

  struct Stats {
    std::uint64_t created = 0, aggregated = 0, dropped_queue_full = 0, dropped_rate_limited = 0, errors = 0;
  };
  Stats stats() const;

 private:
  struct Pending;
  struct Seen {
    std::string ns, name;
    int count = 0;
    std::list<std::string>::iterator lru;
  };
  struct Bucket {
    double tokens = 0;
    common::TimePoint last{};
  };
  bool allow(const std::string& object_key, common::TimePoint now);
  void write(const Pending& p);
  void run();
  void count(const char* result);

  std::unique_ptr<EventSink> sink_;
  EventRecorderOptions options_;
  const common::Clock& clock_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Pending>> queue_;
  std::unordered_map<std::string, Bucket> buckets_;
  bool stopping_ = false;
  Stats stats_;

  std::mutex write_mu_;  // serialises writers (thread and flush) and guards the aggregation cache
  std::unordered_map<std::string, Seen> seen_;
  std::list<std::string> lru_;  // most recent first

  std::thread thread_;
  common::Logger log_{"events"};
};

}  // namespace kubex::kube
