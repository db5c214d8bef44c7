// The kubelet emulation: runs the stage table of kubelet_stages.h for every pod bound to a node, assigns
// physical GPUs and pod IPs (kubelet_devices.h), samples GpuHealth for crashes, and finishes graceful
// deletions. One work queue serves every node; a pod's next stage is a delayed requeue of its key (one
// pending wake per pod), and one periodic tick samples the GPU health of running GPU pods.
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "common/log.h"
#include "common/time_format.h"
#include "sim/cluster/cluster_io.h"
#include "sim/cluster/context.h"
#include "sim/cluster/json_fields.h"
#include "sim/cluster/kubelet_devices.h"
#include "sim/cluster/kubelet_stages.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster {

using namespace kubelet;
using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kResyncPeriod{30000};
constexpr milliseconds kGroupWait{100};
constexpr milliseconds kRetry{1000};
constexpr auto kGroupWaitLimit = std::chrono::seconds(10);

using Delay = std::optional<milliseconds>;

NodeNet node_net(const json& node, std::int64_t gpus) {
  NodeNet net;
  net.gpus = gpus;
  if (!node.is_object()) return net;
  if (node.contains("spec") && node["spec"].is_object()) net.pod_cidr = json_str(node["spec"], "podCIDR");
  if (node.contains("status") && node["status"].is_object() && node["status"].contains("addresses") &&
      node["status"]["addresses"].is_array()) {
    for (const auto& a : node["status"]["addresses"]) {
      if (json_str(a, "type") == "InternalIP") net.host_ip = json_str(a, "address");
    }
  }
  return net;
}

class Kubelet : public Subsystem {
 public:
  Kubelet(ClusterContext& ctx, const GpuHealth* gpu)
      : ctx_(ctx),
        gpu_(gpu),
        client_(ctx.io(), "system:node:kubex-sim"),
        controller_("kubelet", [this](const std::string& key) { return reconcile(key); }, 2) {
    ctx_.feed("/pods").add_handler([this](EventType type, const StoreEvent& ev) { on_pod(type, ev); });
    ctx_.feed("/nodes").add_handler([this](EventType type, const StoreEvent& ev) { on_node(type, ev); });
  }
  ~Kubelet() override { controller_.stop(); }

  void start() override {
    controller_.start();
    if (gpu_) controller_.enqueue_after("~tick", ctx_.config().gpu_sample_interval);
    controller_.enqueue_after("~resync", kResyncPeriod);
  }
  void stop() override { controller_.stop(); }

 private:
  void on_pod(EventType type, const StoreEvent& ev) {
    if (!ev.index) return;
    std::string key = ev.index->ns + "/" + ev.index->name;
    if (type == EventType::kDeleted) {
      devices_.release(key);
      forget(key);
      return;
    }
    auto p = ctx_.pods().get(key);
    if (!p) return;
    devices_.observe(*p);
    if (!p->node.empty()) controller_.enqueue(key);
  }

  void on_node(EventType type, const StoreEvent& ev) {
    if (!ev.index) return;
    const std::string& name = ev.index->name;
    if (type == EventType::kDeleted) {
      devices_.remove_node(name);
      return;
    }
    auto n = ctx_.nodes().get(name);
    bool known = devices_.node(name).has_value();
    devices_.set_node(name, node_net(json::parse(*ev.text, nullptr, false), n ? n->gpus : 0));
    if (!known) {
      for (const auto& p : ctx_.pods().on_node(name)) controller_.enqueue(p->key());
    }
  }

  void forget(const std::string& key) {
    std::lock_guard lk(mu_);
    runs_.erase(key);
    wakes_.erase(key);
    gpu_running_.erase(key);
    crashes_.erase(key);
  }

  // One pending wake per pod: a reconcile triggered by an event does not start a second timer chain.
  Delay wake_after(const std::string& key, common::Duration wait) {
    auto d = std::max(milliseconds(5), std::chrono::ceil<milliseconds>(wait));
    auto due = std::chrono::steady_clock::now() + d;
    std::lock_guard lk(mu_);
    auto it = wakes_.find(key);
    auto now = std::chrono::steady_clock::now();
    if (it != wakes_.end() && it->second > now && it->second <= due + milliseconds(5)) return std::nullopt;
    wakes_[key] = due;
    return d;
  }

  std::shared_ptr<PodRun> run_for(const SimPod& p) {
    std::lock_guard lk(mu_);
    auto& run = runs_[p.key()];
    if (!run || run->uid != p.uid || run->node != p.node) {
      run = std::make_shared<PodRun>(initial_run(p, ctx_.now(), ctx_.config().kubelet));
    }
    if (auto c = crashes_.find(p.key()); c != crashes_.end()) {
      for (const auto& k : run->containers) {
        if (k.name == c->second.first && k.state == ContainerState::kRunning) {
          run->crash_container = c->second.first;
          run->crash_reason = c->second.second;
        }
      }
      crashes_.erase(c);
    }
    return run;
  }

  // Reads what the projection lacks (images, the PodScheduled time) once per pod.
  bool load_details(PodRun& run) {
    auto r = client_.get(core_path("pods", run.ns, run.name));
    if (!r.ok()) return false;
    json pod = r.json();
    if (!pod.is_object()) return false;
    auto member = [](const json& obj, const char* key) {
      return obj.is_object() && obj.contains(key) ? obj[key] : json();
    };
    std::map<std::string, std::string> images;
    for (const char* list : {"initContainers", "containers"}) {
      json items = member(member(pod, "spec"), list);
      if (!items.is_array()) continue;
      for (const auto& c : items) images[json_str(c, "name")] = json_str(c, "image");
    }
    for (auto& c : run.containers) c.image = images[c.name];
    json conds = member(member(pod, "status"), "conditions");
    if (conds.is_array()) {
      for (const auto& c : conds) {
        if (json_str(c, "type") == "PodScheduled" && json_str(c, "status") == "True") {
          run.scheduled_since = json_str(c, "lastTransitionTime");
        }
      }
    }
    run.details = true;
    return true;
  }

  bool write_status(PodRun& run) {
    json st = render_status(run, ctx_.now());
    auto r = client_.merge_patch(core_path("pods", run.ns, run.name) + "/status", {{"status", st}});
    return r.ok();
  }

  void emit(const SimPod& p, const std::vector<KubeletEvent>& events) {
    for (const auto& e : events) ctx_.record_event(pod_ref(p), e.type, e.reason, e.message, "kubelet");
  }

  // Device assignment before the pod runs. Returns a delay when the pod must wait, nullopt to go on;
  // `rejected` when kubelet admission fails it.
  Delay assign_devices(const SimPod& p, PodRun& run, const NodeNet& net, bool& rejected) {
    if (run.devices_done) return std::nullopt;
    std::vector<int> indices;
    bool exclusive =
        p.gpu_whole > 0 || (p.ns == api::keys::kDefaultReservationNamespace && !p.gpu_group().empty());
    if (exclusive) {
      std::int64_t count = p.gpu_whole > 0 ? p.gpu_whole : 1;
      auto a = devices_.allocate_exclusive(p.key(), p.node, count);
      if (!a.ok) {
        reject(run, std::string("OutOf") + api::keys::kGpuResource,
               "Pod was rejected: Node didn't have enough resource: " + std::string(api::keys::kGpuResource) +
                   ", requested: " + std::to_string(count) + ", used: " + std::to_string(a.used) +
                   ", capacity: " + std::to_string(net.gpus));
        rejected = true;
        return std::nullopt;
      }
      indices = a.indices;
    } else if (p.gpu_fraction > 0 && !p.gpu_group().empty()) {
      int index = 0;
      auto state = devices_.group_index(p.node, p.gpu_group(), index);
      if (state == NodeDevices::GroupState::kPending && ctx_.now() - run.bound_at < kGroupWaitLimit) {
        return kGroupWait;  // the reservation pod gets its GPU first
      }
      if (state != NodeDevices::GroupState::kKnown) index = devices_.shared_fallback(p.node);
      indices = {index};
    }
    if (!indices.empty() && p.gpu_indices() != indices) {
      auto r = client_.merge_patch(core_path("pods", p.ns, p.name),
                                   {{"metadata", {{"annotations", {{kGpuIndicesAnnotation, format_indices(indices)}}}}}});
      if (!r.ok()) return r.status == 404 ? std::optional(milliseconds(0)) : std::optional(kRetry);
    }
    run.devices_done = true;
    return std::nullopt;
  }

  // A KAI reservation pod that holds its GPU reports the GPU's UUID in run.ai/reserve_for_gpu_index, as KAI's
  // resourcereservation binary does from inside the pod on a real node; KAI's binder waits for it before it binds
  // the fraction pods of the group (SIM-9). Also after an agent restart, for a pod that was already running.
  Delay report_reserved_gpu(const SimPod& p) {
    if (p.ns != api::keys::kDefaultReservationNamespace || p.gpu_group().empty() || p.deleting) return std::nullopt;
    std::vector<int> indices = p.gpu_indices();
    if (indices.size() != 1) return std::nullopt;
    const std::string uuid = gpu_uuid(p.node, indices[0]);
    auto reported = p.annotations.find(kReservedGpuAnnotation);
    if (reported != p.annotations.end() && reported->second == uuid) return std::nullopt;
    auto r = client_.merge_patch(core_path("pods", p.ns, p.name),
                                 {{"metadata", {{"annotations", {{kReservedGpuAnnotation, uuid}}}}}});
    if (r.ok() || r.status == 404) return std::nullopt;
    return kRetry;
  }

  Delay reconcile(const std::string& key) {
    if (key == "~tick") {
      tick();
      return ctx_.config().gpu_sample_interval;
    }
    if (key == "~resync") {
      resync();
      return kResyncPeriod;
    }
    auto p = ctx_.pods().get(key);
    if (!p) {
      forget(key);
      return std::nullopt;
    }
    if (p->node.empty()) return std::nullopt;
    auto net = devices_.node(p->node);
    // No such node (yet): the node event requeues its pods. A terminating pod of a missing node is finished here
    // only when every node is the simulation's (serve); the agent never touches a pod of a node it does not run.
    if (!net && (!p->deleting || !ctx_.io().owns_every_node())) return std::nullopt;
    if (net) {
      if (auto retry = report_reserved_gpu(*p)) return retry;
    }
    auto run = run_for(*p);
    if (p->deleting && run->deletion_seen == common::TimePoint{}) run->deletion_seen = ctx_.now();
    PodFacts facts = pod_facts(*p, *run);
    const KubeletConfig& cfg = ctx_.config().kubelet;
    Delay result;
    for (int guard = 0; guard < 32; ++guard) {
      Step step = next_step(*run, facts, cfg);
      if (step.stage == Stage::kNone) break;
      auto now = ctx_.now();
      if (step.due > now) {
        result = wake_after(key, step.due - now);
        break;
      }
      if (step.stage == Stage::kStop) {
        auto r = client_.remove(core_path("pods", p->ns, p->name),
                                json({{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"gracePeriodSeconds", 0},
                                      {"preconditions", {{"uid", p->uid}}}})
                                    .dump());
        if (!r.ok() && r.status != 404 && r.status != 409) result = kRetry;
        break;
      }
      if (step.stage == Stage::kKilling) {
        emit(*p, apply_step(step, *run, facts, cfg, now));
        continue;
      }
      if (!run->details && !load_details(*run)) {
        result = kRetry;
        break;
      }
      if (step.stage == Stage::kStart) {
        bool rejected = false;
        if (auto wait = assign_devices(*p, *run, net ? *net : NodeNet{}, rejected)) {
          if (wait->count() > 0) result = *wait;
          break;
        }
        run->host_ip = net ? net->host_ip : "";
        if (rejected) {
          write_status(*run);
          ctx_.record_event(pod_ref(*p), "Warning", run->reason, run->message, "kubelet");
          break;
        }
        run->pod_ip = devices_.allocate_ip(key, p->node);
      }
      auto events = apply_step(step, *run, facts, cfg, now);
      if (!write_status(*run)) {
        result = kRetry;
        break;
      }
      emit(*p, events);
    }
    bool gpu_pod = p->gpu_whole > 0 || p->gpu_fraction > 0;
    std::lock_guard lk(mu_);
    if (gpu_pod && run->phase == PodPhase::kRunning) {
      gpu_running_.insert(key);
    } else {
      gpu_running_.erase(key);
    }
    return result;
  }

  // Asks the GPU model whether a running container of a GPU pod crashes now.
  void tick() {
    std::vector<std::string> keys;
    {
      std::lock_guard lk(mu_);
      keys.assign(gpu_running_.begin(), gpu_running_.end());
    }
    auto now = ctx_.now();
    for (const auto& key : keys) {
      auto p = ctx_.pods().get(key);
      if (!p || p->deleting) continue;
      for (const auto& c : p->containers) {
        if (!c.running || (c.init && !c.restart_always)) continue;
        auto reason = gpu_->crash_reason(*p, c, now);
        if (!reason) continue;
        {
          std::lock_guard lk(mu_);
          crashes_[key] = {c.name, *reason};
        }
        controller_.enqueue(key);
        break;
      }
    }
  }

  // Pods whose deletion a relisting feed missed.
  void resync() {
    std::vector<std::string> keys;
    {
      std::lock_guard lk(mu_);
      for (const auto& [k, v] : runs_) keys.push_back(k);
    }
    for (const auto& k : keys) {
      if (!ctx_.io().exists("/pods", k)) {
        devices_.release(k);
        forget(k);
      }
    }
  }

  ClusterContext& ctx_;
  const GpuHealth* gpu_;
  Client client_;
  NodeDevices devices_;
  Controller controller_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<PodRun>> runs_;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> wakes_;
  std::unordered_set<std::string> gpu_running_;
  std::unordered_map<std::string, std::pair<std::string, std::string>> crashes_;  // key -> (container, reason)
};

}  // namespace

std::unique_ptr<Subsystem> make_kubelet(ClusterContext& ctx, const GpuHealth* gpu) {
  return std::make_unique<Kubelet>(ctx, gpu);
}

}  // namespace kubex::sim::cluster
