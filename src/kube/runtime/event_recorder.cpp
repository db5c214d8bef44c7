#include "kube/runtime/event_recorder.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/time_format.h"
#include "kube/client/client.h"
#include "kube/runtime/metrics.h"

namespace kubex::kube {

using common::TimePoint;
using nlohmann::json;

struct EventRecorder::Pending {
  ObjectReference obj;
  EventType type;
  std::string reason, message;
  TimePoint at;
};

namespace {

class ClientEventSink final : public EventSink {
 public:
  explicit ClientEventSink(std::shared_ptr<Client> c) : client_(std::move(c)) {}
  std::string create(const std::string& ns, const json& event) override {
    auto r = client_->create(resource_path("", "v1", "events", ns), event);
    return r ? "" : r.error().str();
  }
  std::string patch(const std::string& ns, const std::string& name, const json& merge_patch,
                    bool& not_found) override {
    auto r = client_->patch(resource_path("", "v1", "events", ns, name), PatchKind::kMerge, merge_patch);
    not_found = !r && r.error().not_found();
    return r ? "" : r.error().str();
  }

 private:
  std::shared_ptr<Client> client_;
};

std::string object_key(const ObjectReference& o) {
  return o.api_version + "/" + o.kind + "/" + o.ns + "/" + o.name + "/" + o.uid;
}

}  // namespace

std::unique_ptr<EventSink> client_event_sink(std::shared_ptr<Client> client) {
  return std::make_unique<ClientEventSink>(std::move(client));
}

const char* to_string(EventType t) {
  return t == EventType::kWarning ? "Warning" : "Normal";
}

std::string event_aggregation_key(const ObjectReference& o, EventType type, const std::string& reason,
                                  const std::string& message) {
  // Unit separators keep ("a","bc") and ("ab","c") apart.
  std::string k = object_key(o);
  for (const std::string* s : {&o.field_path, &reason, &message}) {
    k += '\x1f';
    k += *s;
  }
  k += '\x1f';
  k += to_string(type);
  return k;
}

std::string event_namespace(const ObjectReference& o) {
  return o.ns.empty() ? "default" : o.ns;
}

json build_event(const ObjectReference& o, EventType type, const std::string& reason,
                 const std::string& message, TimePoint now, const EventRecorderOptions& opt) {
  char suffix[32];
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  std::snprintf(suffix, sizeof(suffix), ".%llx", static_cast<unsigned long long>(nanos));
  json involved = {{"apiVersion", o.api_version}, {"kind", o.kind}, {"name", o.name}};
  if (!o.ns.empty()) involved["namespace"] = o.ns;
  if (!o.uid.empty()) involved["uid"] = o.uid;
  if (!o.resource_version.empty()) involved["resourceVersion"] = o.resource_version;
  if (!o.field_path.empty()) involved["fieldPath"] = o.field_path;
  std::string ts = common::format_rfc3339(now);
  json source = {{"component", opt.component}};
  if (!opt.host.empty()) source["host"] = opt.host;
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", o.name + suffix}, {"namespace", event_namespace(o)}}},
          {"involvedObject", involved},
          {"reason", reason},
          {"message", message.size() > 1024 ? message.substr(0, 1021) + "..." : message},
          {"type", to_string(type)},
          {"count", 1},
          {"firstTimestamp", ts},
          {"lastTimestamp", ts},
          {"source", source},
          {"reportingComponent", opt.component},
          {"reportingInstance", opt.instance}};
}

EventRecorder::EventRecorder(std::unique_ptr<EventSink> sink, EventRecorderOptions options)
    : sink_(std::move(sink)),
      options_(std::move(options)),
      clock_(options_.clock ? *options_.clock : common::RealClock::instance()) {}

EventRecorder::~EventRecorder() {
  stop(std::chrono::milliseconds(0));
}

void EventRecorder::count(const char* result) {
  if (!options_.metrics) return;
  options_.metrics->counter_family("kubex_events_total", "Events recorded, by result.")
      .Add({{"result", result}})
      .Increment();
}

bool EventRecorder::allow(const std::string& key, TimePoint now) {
  double refill_per_sec = 1.0 / std::chrono::duration<double>(options_.per_object_refill).count();
  if (buckets_.size() > 4 * options_.aggregation_cache_size) {
    // Forget objects whose bucket has refilled completely: they behave like new objects anyway.
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      double t =
          it->second.tokens + std::chrono::duration<double>(now - it->second.last).count() * refill_per_sec;
      it = t >= options_.per_object_burst ? buckets_.erase(it) : std::next(it);
    }
  }
  auto [it, fresh] = buckets_.try_emplace(key, Bucket{static_cast<double>(options_.per_object_burst), now});
  Bucket& b = it->second;
  if (!fresh && now > b.last) {
    b.tokens =
        std::min<double>(options_.per_object_burst,
                         b.tokens + std::chrono::duration<double>(now - b.last).count() * refill_per_sec);
    b.last = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

bool EventRecorder::event(const ObjectReference& obj, EventType type, const std::string& reason,
                          const std::string& message) {
  TimePoint now = clock_.now();
  const char* dropped = nullptr;
  {
    std::lock_guard lk(mu_);
    if (queue_.size() >= options_.queue_capacity) {
      ++stats_.dropped_queue_full;
      dropped = "dropped_queue_full";
    } else if (!allow(object_key(obj), now)) {
      ++stats_.dropped_rate_limited;
      dropped = "dropped_rate_limited";
    } else {
      queue_.push_back(std::make_shared<Pending>(Pending{obj, type, reason, message, now}));
    }
  }
  if (dropped) {
    count(dropped);
    return false;
  }
  cv_.notify_one();
  return true;
}

void EventRecorder::write(const Pending& p) {
  std::lock_guard wl(write_mu_);
  std::string key = event_aggregation_key(p.obj, p.type, p.reason, p.message);
  auto it = seen_.find(key);
  if (it != seen_.end()) {
    Seen& s = it->second;
    lru_.splice(lru_.begin(), lru_, s.lru);
    bool not_found = false;
    std::string err = sink_->patch(
        s.ns, s.name, {{"count", s.count + 1}, {"lastTimestamp", common::format_rfc3339(p.at)}}, not_found);
    if (err.empty()) {
      ++s.count;
      std::lock_guard lk(mu_);
      ++stats_.aggregated;
    } else if (!not_found) {
      log_.warn("cannot update event", {{"event", s.ns + "/" + s.name}, {"error", err}});
      std::lock_guard lk(mu_);
      ++stats_.errors;
    }
    if (err.empty()) {
      count("aggregated");
      return;
    }
    if (!not_found) {
      count("error");
      return;
    }
    lru_.erase(s.lru);  // the Event expired or was deleted: write a new one
    seen_.erase(it);
  }
  json ev = build_event(p.obj, p.type, p.reason, p.message, p.at, options_);
  std::string ns = ev["metadata"]["namespace"], name = ev["metadata"]["name"];
  std::string err = sink_->create(ns, ev);
  if (!err.empty()) {
    log_.warn("cannot create event", {{"event", ns + "/" + name}, {"reason", p.reason}, {"error", err}});
    {
      std::lock_guard lk(mu_);
      ++stats_.errors;
    }
    count("error");
    return;
  }
  {
    std::lock_guard lk(mu_);
    ++stats_.created;
  }
  count("created");
  lru_.push_front(key);
  seen_[key] = Seen{ns, name, 1, lru_.begin()};
  while (seen_.size() > options_.aggregation_cache_size && !lru_.empty()) {
    seen_.erase(lru_.back());
    lru_.pop_back();
  }
}

void EventRecorder::flush() {
  while (true) {
    std::shared_ptr<Pending> p;
    {
      std::lock_guard lk(mu_);
      if (queue_.empty()) return;
      p = std::move(queue_.front());
      queue_.pop_front();
    }
    write(*p);
  }
}

void EventRecorder::run() {
  while (true) {
    std::shared_ptr<Pending> p;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and nothing left
      if (stopping_) return;       // stop() drains with its own deadline
      p = std::move(queue_.front());
      queue_.pop_front();
    }
    write(*p);
  }
}

void EventRecorder::start() {
  std::lock_guard lk(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void EventRecorder::stop(std::chrono::milliseconds deadline) {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    std::shared_ptr<Pending> p;
    {
      std::lock_guard lk(mu_);
      if (queue_.empty()) break;
      p = std::move(queue_.front());
      queue_.pop_front();
    }
    write(*p);
  }
}

EventRecorder::Stats EventRecorder::stats() const {
  std::lock_guard lk(mu_);
  return stats_;
}

}  // namespace kubex::kube
