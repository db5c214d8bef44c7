#include "sim/agent/rest_io.h"

#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/log.h"
#include "kube/client/client.h"
#include "sim/apiserver/store.h"
#include "sim/cluster/node_objects.h"

namespace kubex::sim::agent {

using nlohmann::json;

namespace {

// The version the agent reads each group at (the groups the simulation's feeds and owner walks use).
const std::map<std::string, std::string>& group_versions() {
  static const std::map<std::string, std::string> v = {
      {"apps", "v1"},         {"batch", "v1"},          {"scheduling.run.ai", "v2"}, {"kubeai.org", "v1"},
      {"policy", "v1"},       {"argoproj.io", "v1alpha1"}, {"coordination.k8s.io", "v1"}};
  return v;
}

std::string split_key_path(const std::string& prefix, const std::string& plural, const std::string& key) {
  if (key.empty()) return prefix + plural;
  auto slash = key.find('/');
  if (slash == std::string::npos) return prefix + plural + "/" + key;
  return prefix + "namespaces/" + key.substr(0, slash) + "/" + plural + "/" + key.substr(slash + 1);
}

std::uint64_t rv_of(const json& obj) {
  try {
    return std::stoull(obj["metadata"].value("resourceVersion", "0"));
  } catch (...) {
    return 0;
  }
}

std::string key_of(const json& obj) {
  const json& m = obj["metadata"];
  std::string ns = m.value("namespace", "");
  return ns.empty() ? m.value("name", "") : ns + "/" + m.value("name", "");
}

// LIST+WATCH of one storage, delivering the events the in-process feed would: ADDED for what the list holds (and,
// on a relist, DELETED for what vanished meanwhile), then the watch's events. Resumes from the last
// resourceVersion when a watch ends; relists on 410 Gone.
class WatchFeed final : public cluster::Feed {
 public:
  WatchFeed(std::shared_ptr<kube::Client> client, std::string path, std::string label_selector)
      : client_(std::move(client)),
        path_(std::move(path)),
        selector_(std::move(label_selector)),
        log_("kubex-sim.agent-feed") {}
  ~WatchFeed() override { stop(); }
  void start() override {
    thread_ = std::thread([this] { run(); });
  }
  void stop() override {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  bool caught_up() const override { return synced_; }

 private:
  void emit(EventType type, const json& obj) {
    StoreEvent ev;
    ev.rv = rv_of(obj);
    ev.type = type;
    ev.text = std::make_shared<const std::string>(obj.dump());
    ev.index = build_index(obj, {});
    std::string key = key_of(obj);
    if (type == EventType::kDeleted) {
      known_.erase(key);
    } else {
      auto it = known_.find(key);
      if (it != known_.end()) {
        if (type == EventType::kModified) ev.prev = it->second;
        it->second = ev.index;
      } else {
        known_.emplace(key, ev.index);
      }
    }
    deliver(type, ev);
  }

  bool relist(std::string& rv) {
    std::map<std::string, IndexPtr> before = known_;
    std::vector<json> items;
    kube::ListOptions lo;
    lo.label_selector = selector_;
    auto listed = client_->list(path_, lo, [&](json&& item) { items.push_back(std::move(item)); });
    if (!listed) {
      log_.warn("list failed", {{"path", path_}, {"error", listed.error().str()}});
      return false;
    }
    for (const auto& item : items) {
      before.erase(key_of(item));
      emit(known_.count(key_of(item)) ? EventType::kModified : EventType::kAdded, item);
    }
    for (const auto& [key, index] : before) {  // gone while the watch was down
      json gone = {{"metadata", {{"name", index->name}, {"uid", index->uid}}}};
      if (!index->ns.empty()) gone["metadata"]["namespace"] = index->ns;
      emit(EventType::kDeleted, gone);
    }
    rv = *listed;
    synced_ = true;
    return true;
  }

  void run() {
    std::string rv;
    bool need_list = true;
    std::chrono::milliseconds backoff{500};  // after a failure: doubles up to 30 s, like a reflector's back-off
    auto failed = [&] {
      pause(backoff);
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(30));
    };
    while (!stop_) {
      if (need_list) {
        if (!relist(rv)) {
          failed();
          continue;
        }
        need_list = false;
      }
      kube::WatchOptions wo;
      wo.label_selector = selector_;
      wo.resource_version = rv;
      auto r = client_->watch(
          path_, wo,
          [&](kube::WatchEvent&& ev) {
            if (!ev.object) return true;
            if (ev.type == "BOOKMARK") {
              rv = (*ev.object)["metadata"].value("resourceVersion", rv);
              return true;
            }
            EventType t = ev.type == "ADDED"     ? EventType::kAdded
                          : ev.type == "DELETED" ? EventType::kDeleted
                                                 : EventType::kModified;
            emit(t, *ev.object);
            rv = (*ev.object)["metadata"].value("resourceVersion", rv);
            return true;
          },
          &stop_);
      if (r) {
        backoff = std::chrono::milliseconds(500);
      } else if (r.error().gone()) {
        need_list = true;  // too old a resourceVersion: relist
      } else if (!stop_) {
        log_.warn("watch failed", {{"path", path_}, {"error", r.error().str()}});
        failed();
      }
    }
  }

  void pause(std::chrono::milliseconds d) {
    for (auto end = std::chrono::steady_clock::now() + d; !stop_ && std::chrono::steady_clock::now() < end;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  std::shared_ptr<kube::Client> client_;
  std::string path_, selector_;
  common::Logger log_;
  std::map<std::string, IndexPtr> known_;  // key -> last delivered index (feed thread only)
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

std::string storage_path(const std::string& storage, const std::string& key) {
  if (!storage.empty() && storage[0] == '/') return split_key_path("/api/v1/", storage.substr(1), key);
  auto slash = storage.find('/');
  if (slash == std::string::npos) return "";
  std::string group = storage.substr(0, slash), plural = storage.substr(slash + 1);
  auto v = group_versions().find(group);
  if (v == group_versions().end()) return "";
  return split_key_path("/apis/" + group + "/" + v->second + "/", plural, key);
}

RestIo::RestIo(std::shared_ptr<kube::Client> client, std::string agent_name)
    : client_(std::move(client)), agent_name_(std::move(agent_name)) {}

cluster::Client::Response RestIo::call(const std::string&, const std::string& method, const std::string& path,
                                       std::string body, const std::string& content_type) {
  auto r = client_->request(method, path, body, content_type.empty() ? "application/json" : content_type);
  if (!r) {
    json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                   {"message", r.error().message}, {"reason", r.error().reason}, {"code", r.error().code}};
    return {r.error().code, status.dump()};
  }
  return {r->code, std::move(r->body)};
}

std::unique_ptr<cluster::Feed> RestIo::make_feed(const std::string& storage) {
  std::string selector = storage == "/nodes" ? std::string(cluster::kNodeAgentLabel) + "=" + agent_name_ : "";
  return std::make_unique<WatchFeed>(client_, storage_path(storage, ""), selector);
}

std::optional<json> RestIo::read(const std::string& storage, const std::string& key) {
  std::string path = storage_path(storage, key);
  if (path.empty()) return std::nullopt;
  auto r = client_->get(path);
  if (!r || !r->is_object()) return std::nullopt;
  return std::move(*r);
}

bool RestIo::exists(const std::string& storage, const std::string& key) {
  std::string path = storage_path(storage, key);
  if (path.empty()) return true;
  auto r = client_->get(path);
  return r || !r.error().not_found();
}

std::optional<json> RestIo::read_kind(const std::string& api_version, const std::string& kind, const std::string& ns,
                                      const std::string& name) {
  if (kind.empty() || name.empty()) return std::nullopt;
  // The owner kinds of pods (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Model, Rollout,
  // LeaderWorkerSet) all follow Kubernetes' plural rule: lower case plus "s".
  std::string plural;
  for (char c : kind) plural += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  plural += "s";
  std::string prefix = api_version.find('/') == std::string::npos ? "/api/" + api_version + "/"
                                                                   : "/apis/" + api_version + "/";
  std::string path = prefix + (ns.empty() ? "" : "namespaces/" + ns + "/") + plural + "/" + name;
  auto r = client_->get(path);
  if (!r || !r->is_object()) return std::nullopt;
  return std::move(*r);
}

const common::Clock& RestIo::clock() const { return common::RealClock::instance(); }

}  // namespace kubex::sim::agent
