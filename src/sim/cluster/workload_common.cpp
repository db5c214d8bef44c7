#include "sim/cluster/workload_common.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/time_format.h"
#include "sim/cluster/cluster_io.h"

namespace kubex::sim::cluster {

using nlohmann::json;

namespace {
const json kEmptyObject = json::object();
constexpr auto kExpectationTtl = std::chrono::minutes(2);
}  // namespace

common::TimePoint json_time(const json& obj, const char* key) {
  const json& v = json_at(obj, key);
  if (!v.is_string()) return {};
  auto t = common::parse_rfc3339(v.get<std::string>());
  return t ? *t : common::TimePoint{};
}

std::string format_time(common::TimePoint t) {
  return common::format_rfc3339(t);
}

ObjectMetaView parse_meta(const json& obj) {
  ObjectMetaView m;
  const json& md = json_object_at(obj, "metadata");
  m.ns = json_str(md, "namespace");
  m.name = json_str(md, "name");
  m.uid = json_str(md, "uid");
  m.generation = json_int(md, "generation", 0);
  m.deleting = json_at(md, "deletionTimestamp").is_string();
  m.created = json_time(md, "creationTimestamp");
  m.labels = json_string_map(md, "labels");
  m.annotations = json_string_map(md, "annotations");
  return m;
}

common::Result<std::int64_t> scaled_int_or_percent(const json& v, std::int64_t total, bool round_up,
                                                   std::int64_t def) {
  if (v.is_null()) return def;
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (!v.is_string()) return common::fail("must be an integer or a percentage");
  const std::string s = v.get<std::string>();
  if (s.size() < 2 || s.back() != '%')
    return common::fail("invalid value for IntOrString: invalid type: string is not a percentage");
  std::int64_t pct = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9' || pct > 1'000'000)
      return common::fail("invalid value \"" + s + "\": not a percentage");
    pct = pct * 10 + (s[i] - '0');
  }
  // Integer arithmetic, so 25% of 8 is exactly 2 (kube computes with float64 and math.Ceil/Floor).
  std::int64_t num = pct * total;
  return round_up ? (num + 99) / 100 : num / 100;
}

json semantic_json(const json& v) {
  if (v.is_object()) {
    json out = json::object();
    for (const auto& [k, child] : v.items()) {
      json c = semantic_json(child);
      if (c.is_null() || ((c.is_object() || c.is_array()) && c.empty())) continue;
      out[k] = std::move(c);
    }
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const auto& child : v) out.push_back(semantic_json(child));
    return out;
  }
  return v;
}

std::string short_hash(const json& value, std::int64_t collision_count) {
  std::string text = value.dump();
  if (collision_count > 0) text += "#" + std::to_string(collision_count);
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a 64
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (int i = 0; i < 10; ++i) {
    out += kAlphabet[h % 27];
    h /= 27;
  }
  return out;
}

json controller_ref(const std::string& api_version, const std::string& kind, const std::string& name,
                    const std::string& uid) {
  return {{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", uid}, {"controller", true},
          {"blockOwnerDeletion", true}};
}

std::string controller_uid(const json& obj) {
  for (const auto& ref : json_array_at(json_object_at(obj, "metadata"), "ownerReferences")) {
    if (json_bool(ref, "controller", false)) return json_str(ref, "uid");
  }
  return "";
}

json pod_from_template(const json& tmpl, const std::string& ns, const std::string& name,
                       const std::string& generate_name, const json& owner_ref) {
  const json& tmeta = json_object_at(tmpl, "metadata");
  json meta = {{"namespace", ns}, {"ownerReferences", json::array({owner_ref})}};
  if (!name.empty()) {
    meta["name"] = name;
  } else {
    meta["generateName"] = generate_name;
  }
  for (const char* key : {"labels", "annotations"}) {
    const json& m = json_object_at(tmeta, key);
    if (!m.empty()) meta[key] = m;
  }
  const json& fin = json_array_at(tmeta, "finalizers");
  if (!fin.empty()) meta["finalizers"] = fin;
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", json_object_at(tmpl, "spec")}};
}

bool labels_contain(const std::map<std::string, std::string>& have,
                    const std::map<std::string, std::string>& want) {
  for (const auto& [k, v] : want) {
    auto it = have.find(k);
    if (it == have.end() || it->second != v) return false;
  }
  return true;
}

bool pod_active(const SimPod& p) {
  return !p.terminal() && !p.deleting;
}

bool pod_running_ready(const SimPod& p) {
  return p.phase == "Running" && p.ready;
}

const json* find_condition(const json& conditions, const std::string& type) {
  if (!conditions.is_array()) return nullptr;
  for (const auto& c : conditions) {
    if (json_str(c, "type") == type) return &c;
  }
  return nullptr;
}

void remove_condition(json& conditions, const std::string& type) {
  if (!conditions.is_array()) return;
  json out = json::array();
  for (auto& c : conditions) {
    if (json_str(c, "type") != type) out.push_back(std::move(c));
  }
  conditions = std::move(out);
}

void set_condition(json& conditions, const std::string& type, const std::string& status,
                   const std::string& reason, const std::string& message, const std::string& now,
                   bool with_update_time) {
  if (!conditions.is_array()) conditions = json::array();
  std::string transition = now;
  if (const json* cur = find_condition(conditions, type)) {
    if (json_str(*cur, "status") == status && json_str(*cur, "reason") == reason) return;
    if (json_str(*cur, "status") == status) transition = json_str(*cur, "lastTransitionTime", now);
  }
  remove_condition(conditions, type);
  json c = {{"type", type}, {"status", status}, {"lastTransitionTime", transition}};
  if (with_update_time) c["lastUpdateTime"] = now;
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  conditions.push_back(std::move(c));
}

json status_diff(const json& current, const json& desired) {
  json patch = json::object();
  const json& cur = current.is_object() ? current : kEmptyObject;
  for (const auto& [k, v] : desired.items()) {
    auto it = cur.find(k);
    if (it == cur.end() || *it != v) patch[k] = v;
  }
  for (const auto& [k, v] : cur.items()) {
    if (!desired.contains(k)) patch[k] = nullptr;
  }
  return patch;
}

// ---------------------------------------------------------------------------------------------------------

void PodExpectations::expect_create(const std::string& owner_uid, const std::string& pod_name) {
  std::lock_guard lk(mu_);
  by_owner_[owner_uid].creates[pod_name] = std::chrono::steady_clock::now();
}

void PodExpectations::expect_delete(const std::string& owner_uid, const std::string& pod_uid) {
  std::lock_guard lk(mu_);
  by_owner_[owner_uid].deletes[pod_uid] = std::chrono::steady_clock::now();
}

void PodExpectations::observe(const std::string& owner_uid, const std::string& pod_name,
                              const std::string& pod_uid, bool gone_or_deleting) {
  std::lock_guard lk(mu_);
  auto it = by_owner_.find(owner_uid);
  if (it == by_owner_.end()) return;
  it->second.creates.erase(pod_name);
  if (gone_or_deleting) it->second.deletes.erase(pod_uid);
  if (it->second.creates.empty() && it->second.deletes.empty()) by_owner_.erase(it);
}

PodExpectations::Pending PodExpectations::pending(const std::string& owner_uid) {
  Pending out;
  std::lock_guard lk(mu_);
  auto it = by_owner_.find(owner_uid);
  if (it == by_owner_.end()) return out;
  auto now = std::chrono::steady_clock::now();
  for (Times* times : {&it->second.creates, &it->second.deletes}) {
    std::erase_if(*times, [&](const auto& kv) { return now - kv.second > kExpectationTtl; });
  }
  for (const auto& [name, t] : it->second.creates) out.creates.insert(name);
  for (const auto& [name, t] : it->second.deletes) out.deletes.insert(name);
  return out;
}

void PodExpectations::forget(const std::string& owner_uid) {
  std::lock_guard lk(mu_);
  by_owner_.erase(owner_uid);
}

bool ReadyClock::available(const SimPod& p, std::int64_t min_ready_seconds, common::TimePoint now,
                           std::optional<std::chrono::milliseconds>& recheck) {
  if (!p.ready || p.deleting || p.terminal()) return false;
  if (min_ready_seconds <= 0) return true;
  common::TimePoint since;
  {
    std::lock_guard lk(mu_);
    since = since_.emplace(p.uid, now).first->second;
  }
  auto at = since + std::chrono::seconds(min_ready_seconds);
  if (now >= at) return true;
  auto wait = until(at, now);
  if (!recheck || wait < *recheck) recheck = wait;
  return false;
}

bool ReadyClock::tracks(const std::string& uid) {
  std::lock_guard lk(mu_);
  return since_.count(uid) > 0;
}

void ReadyClock::on_pod(const std::string& uid, bool ready_and_alive) {
  if (ready_and_alive) return;
  std::lock_guard lk(mu_);
  since_.erase(uid);
}

bool EventLimiter::allow() {
  std::lock_guard lk(mu_);
  auto now = std::chrono::steady_clock::now();
  tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
  last_ = now;
  if (tokens_ < 1) {
    ++dropped_;
    return false;
  }
  tokens_ -= 1;
  return true;
}

std::uint64_t EventLimiter::dropped() const {
  std::lock_guard lk(mu_);
  return dropped_;
}

void UidIndex::set(const std::string& uid, const std::string& key) {
  if (uid.empty()) return;
  std::lock_guard lk(mu_);
  keys_[uid] = key;
}

void UidIndex::erase(const std::string& uid) {
  std::lock_guard lk(mu_);
  keys_.erase(uid);
}

std::optional<std::string> UidIndex::key_of(const std::string& uid) const {
  std::lock_guard lk(mu_);
  auto it = keys_.find(uid);
  if (it == keys_.end()) return std::nullopt;
  return it->second;
}

void ChildIndex::update(const std::string& child_key, const std::vector<std::string>& owner_uids) {
  std::lock_guard lk(mu_);
  auto& prev = owners_of_[child_key];
  if (prev == owner_uids) return;
  for (const auto& o : prev) {
    auto it = by_owner_.find(o);
    if (it == by_owner_.end()) continue;
    it->second.erase(child_key);
    if (it->second.empty()) by_owner_.erase(it);
  }
  prev = owner_uids;
  for (const auto& o : owner_uids) by_owner_[o].insert(child_key);
  if (owner_uids.empty()) owners_of_.erase(child_key);
}

void ChildIndex::remove(const std::string& child_key) {
  update(child_key, {});
}

std::vector<std::string> ChildIndex::children(const std::string& owner_uid) const {
  std::lock_guard lk(mu_);
  auto it = by_owner_.find(owner_uid);
  if (it == by_owner_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

// ---------------------------------------------------------------------------------------------------------

WorkloadEnv::WorkloadEnv(ClusterContext& c) : ctx(c) {
  // Runs after the context's own handler, so the pod cache already holds the change.
  ctx.feed("/pods").add_handler([this](EventType type, const StoreEvent& ev) {
    if (!ev.index) return;
    bool gone = type == EventType::kDeleted || ev.index->deleting;
    for (const auto& owner : ev.index->owner_uids)
      expectations.observe(owner, ev.index->name, ev.index->uid, gone);
    if (!ready_clock.tracks(ev.index->uid)) return;
    if (gone) {
      ready_clock.on_pod(ev.index->uid, false);
    } else {
      auto p = ctx.pods().get(event_key(ev));
      ready_clock.on_pod(ev.index->uid, p && p->ready && !p->terminal());
    }
  });
}

void WorkloadEnv::event(const ObjectRef& ref, const std::string& type, const std::string& reason,
                        const std::string& message, const std::string& component) {
  if (!event_limit.allow()) return;
  ctx.record_event(ref, type, reason, message, component);
}

std::optional<json> WorkloadEnv::read(const std::string& storage, const std::string& key) const {
  return ctx.io().read(storage, key);
}

std::vector<std::shared_ptr<const SimPod>> WorkloadEnv::owned_pods(const std::string& owner_uid) const {
  auto pods = ctx.pods().owned_by(owner_uid);
  std::erase_if(pods, [&](const auto& p) { return p->owner_uid != owner_uid; });
  return pods;
}

namespace {
std::string api_message(const Client::Response& r) {
  json body = r.json();
  std::string msg = json_str(body, "message");
  return msg.empty() ? "HTTP " + std::to_string(r.status) : msg;
}
}  // namespace

common::Result<std::string> WorkloadEnv::create_pod(const std::string& owner_uid, const json& pod) {
  const std::string ns = json_str(json_object_at(pod, "metadata"), "namespace");
  auto r = ctx.client().create(core_path("pods", ns), pod);
  if (!r.ok()) return common::fail(api_message(r));
  std::string name = json_str(json_object_at(r.json(), "metadata"), "name");
  if (!name.empty()) expectations.expect_create(owner_uid, name);
  return name;
}

common::Result<void> WorkloadEnv::delete_pod(const std::string& owner_uid, const SimPod& pod) {
  // The uid precondition keeps a stale cache from deleting a same-named successor.
  json opts = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", pod.uid}}}};
  auto r = ctx.client().remove(core_path("pods", pod.ns, pod.name), opts.dump());
  if (r.status == 404 || r.status == 409) return {};
  if (!r.ok()) return common::fail(api_message(r));
  expectations.expect_delete(owner_uid, pod.uid);
  return {};
}

common::Result<void> WorkloadEnv::write_status(const std::string& path, const json& current,
                                               const json& desired) {
  json patch = status_diff(current, desired);
  if (patch.empty()) return {};
  auto r = ctx.client().merge_patch(path + "/status", {{"status", patch}});
  if (!r.ok()) return common::fail(api_message(r));
  return {};
}

std::string event_key(const StoreEvent& ev) {
  return ev.index->ns + "/" + ev.index->name;
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// ---------------------------------------------------------------------------------------------------------

WorkloadController::WorkloadController(WorkloadEnv& env, const std::string& name, int workers)
    : env_(env),
      ctx_(env.ctx),
      log_("kubex-sim." + name),
      controller_(
          name,
          [this](const std::string& key) -> Requeue {
            // Like WaitForCacheSync: acting on half-listed caches would duplicate pods after a restart.
            if (!ctx_.feeds_synced()) return std::chrono::milliseconds(100);
            try {
              return reconcile(key);
            } catch (const std::exception& e) {
              log_.error("reconcile failed", {{"key", key}, {"error", e.what()}});
            } catch (...) {
              log_.error("reconcile failed", {{"key", key}});
            }
            return std::chrono::milliseconds(5000);
          },
          workers) {}

void WorkloadController::watch_primary(const std::string& storage, UidIndex& uids) {
  ctx_.feed(storage).add_handler([this, &uids](EventType type, const StoreEvent& ev) {
    if (!ev.index) return;
    if (type == EventType::kDeleted) {
      uids.erase(ev.index->uid);
    } else {
      uids.set(ev.index->uid, event_key(ev));
    }
    controller_.enqueue(event_key(ev));
  });
}

void WorkloadController::watch_children(const std::string& storage, const UidIndex& owners) {
  ctx_.feed(storage).add_handler([this, &owners](EventType, const StoreEvent& ev) {
    if (!ev.index) return;
    for (const auto& uid : ev.index->owner_uids) {
      if (auto key = owners.key_of(uid)) controller_.enqueue(*key);
    }
    if (ev.prev) {  // an owner reference removed (orphaning) also concerns the former owner
      for (const auto& uid : ev.prev->owner_uids) {
        if (auto key = owners.key_of(uid)) controller_.enqueue(*key);
      }
    }
  });
}

std::chrono::milliseconds until(common::TimePoint t, common::TimePoint now, std::chrono::milliseconds floor) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(t - now);
  return std::max(d, floor);
}

}  // namespace kubex::sim::cluster
