#include "sim/cluster/sched_loop.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/time_format.h"
#include "sim/cluster/cluster_io.h"
#include "sim/cluster/context.h"
#include "sim/cluster/json_fields.h"

namespace kubex::sim::cluster::sched {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kInitialBackoff{1000};
constexpr milliseconds kMaxBackoff{10000};
constexpr milliseconds kFlushDelay{1000};
constexpr milliseconds kResyncPeriod{30000};

std::string pod_key_of(const StoreEvent& ev) { return ev.index ? ev.index->ns + "/" + ev.index->name : ""; }

// A pod whose resources the schedulers account for: pending, or bound to one of the simulation's nodes. The agent
// shares its cluster with nodes it does not run, whose pods (and KAI reservation pods) are not its business.
bool holds_for_us(ClusterContext& c, const SimPod& p) {
  return p.node.empty() || c.io().owns_every_node() || c.nodes().get(p.node) != nullptr;
}

}  // namespace

std::shared_ptr<Ledger> shared_ledger(ClusterContext& ctx) {
  static std::mutex mu;
  static std::map<ClusterContext*, std::weak_ptr<Ledger>> registry;
  std::lock_guard lk(mu);
  for (auto it = registry.begin(); it != registry.end();) {
    it = it->second.expired() ? registry.erase(it) : std::next(it);
  }
  if (auto existing = registry[&ctx].lock()) return existing;
  auto ledger = std::make_shared<Ledger>(ctx.config().kai_version);
  registry[&ctx] = ledger;
  std::weak_ptr<Ledger> weak = ledger;
  ClusterContext* c = &ctx;
  // The context's own handlers (registered first) have already updated its caches for this event.
  ctx.feed("/pods").add_handler([weak, c](EventType type, const StoreEvent& ev) {
    auto l = weak.lock();
    if (!l) return;
    std::string key = pod_key_of(ev);
    auto p = type == EventType::kDeleted ? nullptr : c->pods().get(key);
    if (!p || !holds_for_us(*c, *p)) {
      l->remove_pod(key);
    } else {
      l->upsert_pod(*p);
    }
  });
  ctx.feed("/nodes").add_handler([weak, c](EventType type, const StoreEvent& ev) {
    auto l = weak.lock();
    if (!l || !ev.index) return;
    if (type == EventType::kDeleted) {
      l->remove_node(ev.index->name);
    } else if (auto n = c->nodes().get(ev.index->name)) {
      const bool first = !l->has_node(n->name);
      l->upsert_node(*n);
      if (first && !c->io().owns_every_node()) {
        // The agent's node arrived after pods bound to it (two feeds, no order between them): count them now.
        for (const auto& pod : c->pods().all()) {
          if (pod->node == n->name) l->upsert_pod(*pod);
        }
      }
    }
  });
  return ledger;
}

SchedulerLoop::SchedulerLoop(ClusterContext& ctx, std::shared_ptr<Ledger> ledger, std::string component)
    : ctx_(ctx),
      ledger_(std::move(ledger)),
      client_(ctx.io(), "system:" + component),
      component_(component),
      controller_(component, [this](const std::string& key) { return reconcile(key); }) {
  ctx_.feed("/pods").add_handler([this](EventType type, const StoreEvent& ev) {
    std::string key = pod_key_of(ev);
    if (type == EventType::kDeleted) {
      std::lock_guard lk(mu_);
      pending_.erase(key);
      return;
    }
    auto p = ctx_.pods().get(key);
    if (p && p->node.empty() && !p->deleting && !p->terminal() && responsible(*p)) controller_.enqueue(key);
  });
  ledger_->on_capacity_freed([this] { request_flush(); });
}

SchedulerLoop::~SchedulerLoop() { controller_.stop(); }

void SchedulerLoop::start() {
  controller_.start();
  if (resync_ledger_) controller_.enqueue_after("~resync", kResyncPeriod);
}

void SchedulerLoop::stop() { controller_.stop(); }

SchedulerLoop::Delay SchedulerLoop::chore(const std::string&) { return std::nullopt; }

void SchedulerLoop::request_flush() {
  if (!flush_queued_.exchange(true)) controller_.enqueue_after("~flush", kFlushDelay);
}

void SchedulerLoop::flush() {
  flush_queued_ = false;
  std::vector<std::string> keys;
  {
    std::lock_guard lk(mu_);
    for (const auto& [k, v] : pending_) keys.push_back(k);
  }
  for (const auto& k : keys) controller_.enqueue(k);
}

void SchedulerLoop::resync() {
  // Deletions missed while a feed relisted: drop holdings whose pod is gone from the store.
  for (const auto& key : ledger_->confirmed_keys()) {
    if (!ctx_.io().exists("/pods", key)) ledger_->remove_pod(key);
  }
}

SchedulerLoop::Delay SchedulerLoop::reconcile(const std::string& key) {
  if (key == "~flush") {
    flush();
    return std::nullopt;
  }
  if (key == "~resync") {
    resync();
    return kResyncPeriod;
  }
  if (!key.empty() && key[0] == '~') return chore(key);
  auto p = ctx_.pods().get(key);
  if (!p || !p->node.empty() || p->deleting || p->terminal() || !responsible(*p)) {
    std::lock_guard lk(mu_);
    pending_.erase(key);
    return std::nullopt;
  }
  // Bound a moment ago, but the pod cache has not seen the binding yet: placing it again would double-count it
  // and, when the second binding fails, forget the first placement (which once emptied a live GPU group).
  // The feed confirms the holding; a failed binding forgets it and retries.
  if (ledger_->holds(key)) return std::nullopt;
  return schedule(*p);
}

PlacementPod SchedulerLoop::placement_pod(const SimPod& p) {
  PlacementPod out;
  out.node_selector = p.node_selector;
  if (!p.tolerations_json.empty()) {
    auto t = json::parse(p.tolerations_json, nullptr, false);
    if (!t.is_discarded()) out.tolerations = parse_tolerations(t);
  }
  if (!p.affinity_json.empty()) {
    auto a = json::parse(p.affinity_json, nullptr, false);
    if (!a.is_discarded()) parse_required_node_affinity(a, out);
  }
  out.cpu_milli = p.cpu_milli;
  out.memory_bytes = p.memory_bytes;
  out.gpus = p.gpu_whole;
  return out;
}

bool SchedulerLoop::bind(const SimPod& p, const std::string& node) {
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", p.name}, {"namespace", p.ns}, {"uid", p.uid}}},
                  {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  auto r = client_.create(core_path("pods", p.ns, p.name) + "/binding", binding);
  if (r.ok()) return true;
  ledger_->forget(p.key());
  return false;
}

SchedulerLoop::Delay SchedulerLoop::unschedulable(const SimPod& p, const std::string& event_reason,
                                                  const std::string& message, bool retry,
                                                  const std::string& condition_reason) {
  bool write_condition = false;
  Delay delay;
  {
    std::lock_guard lk(mu_);
    Pending& pend = pending_[p.key()];
    if (pend.uid != p.uid) pend = Pending{p.uid, "", 0, {}};
    write_condition = pend.message != message;
    pend.message = message;
    int attempts = pend.attempts++;
    // One back-off chain per pod: attempts triggered by events (flushes) do not start another one.
    auto now = std::chrono::steady_clock::now();
    if (retry && pend.retry_due <= now) {
      delay = std::min<milliseconds>(kInitialBackoff * (1LL << std::min(attempts, 4)), kMaxBackoff);
      pend.retry_due = now + *delay;
    }
  }
  if (write_condition) {
    std::string path = core_path("pods", p.ns, p.name);
    auto r = client_.get(path);
    json pod = r.ok() ? r.json() : json();
    if (pod.is_object()) {
      json conds = json::array();
      std::string since = common::format_rfc3339(ctx_.now());
      if (pod.contains("status") && pod["status"].is_object() && pod["status"].contains("conditions") &&
          pod["status"]["conditions"].is_array()) {
        for (const auto& c : pod["status"]["conditions"]) {
          if (json_str(c, "type") == "PodScheduled") {
            if (json_str(c, "status") == "False" && !json_str(c, "lastTransitionTime").empty()) {
              since = json_str(c, "lastTransitionTime");
            }
            continue;
          }
          conds.push_back(c);
        }
      }
      conds.push_back({{"type", "PodScheduled"},
                       {"status", "False"},
                       {"reason", condition_reason},
                       {"message", message},
                       {"lastProbeTime", nullptr},
                       {"lastTransitionTime", since}});
      client_.merge_patch(path + "/status", {{"status", {{"conditions", conds}}}});
    }
  }
  ctx_.record_event(pod_ref(p), "Warning", event_reason, message, component_);
  return delay;
}

void SchedulerLoop::scheduled(const SimPod& p, const std::string& message) {
  {
    std::lock_guard lk(mu_);
    pending_.erase(p.key());
  }
  ctx_.record_event(pod_ref(p), "Normal", "Scheduled", message, component_);
}

}  // namespace kubex::sim::cluster::sched
