#include "sim/cluster/sched_kai.h"

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "sim/cluster/cluster_io.h"
#include "sim/cluster/context.h"
#include "sim/cluster/kai_modes.h"

namespace kubex::sim::cluster::sched {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {

constexpr const char* kQueueStorage = "scheduling.run.ai/queues";
// The reservation pod's image follows --kai-version.
std::string reservation_image(KaiVersion v) {
  return std::string("ghcr.io/nvidia/kai-scheduler/resource-reservation:v") +
         (v == KaiVersion::k0_17 ? "0.17.0" : "0.18.2");
}
constexpr milliseconds kGcPeriod{30000};
constexpr milliseconds kRetry{1000};
constexpr int kMaxOwnerDepth = 16;  // ends the walk on an ownerReference cycle
// KAI's podgrouper: a pod without a queue label goes to its `project` label's queue, else default-queue.
constexpr const char* kProjectLabel = "project";
constexpr const char* kNodePoolLabel = "kai.scheduler/node-pool";

const json* member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// The label `key` of an object when it is present (a string), else nullopt.
std::optional<std::string> label(const json& obj, const char* key) {
  const json* labels = member(obj, "metadata") ? member(*member(obj, "metadata"), "labels") : nullptr;
  const json* q = labels ? member(*labels, key) : nullptr;
  if (!q || !q->is_string()) return std::nullopt;
  return q->get<std::string>();
}

// The controller ownerReference of an object (null when it has none).
const json* controller_ref(const json& obj) {
  const json* refs = member(obj, "metadata") ? member(*member(obj, "metadata"), "ownerReferences") : nullptr;
  if (!refs || !refs->is_array()) return nullptr;
  for (const auto& ref : *refs) {
    const json* c = member(ref, "controller");
    if (c && c->is_boolean() && c->get<bool>()) return &ref;
  }
  return nullptr;
}

std::string str(const json& obj, const char* key) {
  const json* v = member(obj, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

}  // namespace

std::string kai_pod_queue(const json& pod, const OwnerLookup& lookup) {
  const std::string ns = member(pod, "metadata") ? str(*member(pod, "metadata"), "namespace") : "";
  json top = pod;
  for (int depth = 0; depth < kMaxOwnerDepth; ++depth) {
    const json* ref = controller_ref(top);
    if (!ref) break;
    json owner;
    if (!lookup(str(*ref, "apiVersion"), str(*ref, "kind"), ns, str(*ref, "name"), owner)) break;
    const json* meta = member(owner, "metadata");
    if (!meta || str(*meta, "uid") != str(*ref, "uid")) break;
    top = std::move(owner);
  }
  if (auto q = label(top, api::keys::kKaiQueueLabel)) return *q;
  if (auto q = label(pod, api::keys::kKaiQueueLabel)) return *q;
  // SIM-9: then the `project` label (top owner, then pod), with the pod's node-pool label appended, then
  // default-queue (KAI's podgrouper, default_grouper.go).
  std::string project = label(top, kProjectLabel).value_or(label(pod, kProjectLabel).value_or(""));
  if (!project.empty()) {
    if (auto pool = label(pod, kNodePoolLabel)) return project + "-" + *pool;
    return project;
  }
  return kKaiDefaultQueue;
}

std::string queue_problem(const std::map<std::string, std::string>& queues, const std::string& name) {
  // KAI's pod message for a job fit error QueueDoesNotExist (JobFitErrorsToMessage).
  if (!queues.count(name)) return "QueueDoesNotExist: Queue '" + name + "' does not exist.";
  std::string children;
  for (const auto& [q, parent] : queues) {
    if (parent == name) children += std::string(children.empty() ? "" : ", ") + "\"" + q + "\"";
  }
  if (!children.empty()) {
    return "queue \"" + name + "\" is not a leaf queue (it is the parentQueue of " + children +
           "): pods can only be submitted to leaf queues";
  }
  return "";
}

KaiScheduler::KaiScheduler(ClusterContext& ctx, std::shared_ptr<Ledger> ledger)
    : SchedulerLoop(ctx, std::move(ledger), api::keys::kDefaultKaiScheduler) {
  ctx_.feed(kQueueStorage).add_handler([this](EventType type, const StoreEvent& ev) {
    if (!ev.index) return;
    {
      std::lock_guard lk(queues_mu_);
      if (type == EventType::kDeleted) {
        queues_.erase(ev.index->name);
      } else {
        auto q = json::parse(*ev.text, nullptr, false);
        std::string parent;
        if (q.is_object() && q.contains("spec") && q["spec"].is_object()) {
          const json& spec = q["spec"];
          if (spec.contains("parentQueue") && spec["parentQueue"].is_string()) {
            parent = spec["parentQueue"].get<std::string>();
          }
        }
        auto it = queues_.find(ev.index->name);
        if (it != queues_.end() && it->second == parent) return;
        queues_[ev.index->name] = parent;
      }
    }
    request_flush();
  });
  ledger_->on_group_emptied([this] { controller_.enqueue("~gc"); });
}

KaiScheduler::~KaiScheduler() { controller_.stop(); }

void KaiScheduler::start() {
  SchedulerLoop::start();
  controller_.enqueue_after("~gc-periodic", kGcPeriod);
}

bool KaiScheduler::responsible(const SimPod& p) const {
  return p.scheduler_name == api::keys::kDefaultKaiScheduler;
}

SchedulerLoop::Delay KaiScheduler::chore(const std::string& key) {
  if (key == "~gc" || key == "~gc-periodic") collect_empty_groups();
  if (key == "~gc-periodic") return kGcPeriod;
  return std::nullopt;
}

void KaiScheduler::collect_empty_groups() {
  // Chores run on the scheduler's single worker: failed_deletes_ needs no lock.
  std::vector<std::string> keys = ledger_->claim_empty_groups();
  keys.insert(keys.end(), failed_deletes_.begin(), failed_deletes_.end());
  failed_deletes_.clear();
  for (const auto& key : keys) {
    auto slash = key.find('/');
    if (slash == std::string::npos) continue;
    auto r = client_.remove(core_path("pods", key.substr(0, slash), key.substr(slash + 1)),
                            R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
    if (!r.ok() && r.status != 404) failed_deletes_.insert(key);  // the group stays dying; retried
  }
}

std::optional<std::string> KaiScheduler::create_reservation(const SimPod& p, const std::string& node,
                                                            const std::string& group, const std::string& suffix) {
  json container = {{"name", "resource-reservation"},
                    {"image", reservation_image(ctx_.config().kai_version)},
                    {"imagePullPolicy", "IfNotPresent"},
                    {"resources",
                     {{"limits", {{api::keys::kGpuResource, "1"}}},
                      {"requests", {{api::keys::kGpuResource, "1"}}}}},
                    {"env",
                     {{{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
                      {{"name", "POD_NAMESPACE"},
                       {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}}}};
  json spec = {{"nodeName", node}, {"containers", json::array({container})}};
  if (!p.tolerations_json.empty()) {
    auto t = json::parse(p.tolerations_json, nullptr, false);
    if (t.is_array()) spec["tolerations"] = t;
  }
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", reservation_pod_name(node, suffix)},
                {"namespace", api::keys::kDefaultReservationNamespace},
                {"labels",
                 {{"app", api::keys::kDefaultReservationNamespace}, {api::keys::kGpuGroupLabel, group}}},
                {"annotations", {{"karpenter.sh/do-not-disrupt", "true"}}}}},
              {"spec", spec}};
  auto r = client_.create(core_path("pods", api::keys::kDefaultReservationNamespace), pod);
  if (r.ok()) return std::nullopt;
  std::string why;
  if (auto body = r.json(); body.is_object()) why = body.value("message", "");
  if (why.empty()) why = "HTTP " + std::to_string(r.status);
  return "cannot create the GPU reservation pod " + std::string(api::keys::kDefaultReservationNamespace) + "/" +
         reservation_pod_name(node, suffix) + ": " + why;
}

std::string KaiScheduler::queue_of(const SimPod& p) {
  json own = {{"metadata", {{"namespace", p.ns}, {"labels", p.labels}}}};
  auto none = [](const std::string&, const std::string&, const std::string&, const std::string&, json&) {
    return false;
  };
  if (p.owner_uid.empty()) return kai_pod_queue(own, none);
  auto pod = client_.get(core_path("pods", p.ns, p.name));
  if (!pod.ok()) return kai_pod_queue(own, none);
  ClusterIo& io = ctx_.io();
  return kai_pod_queue(pod.json(), [&io](const std::string& api_version, const std::string& kind,
                                         const std::string& ns, const std::string& name, json& out) {
    auto obj = io.read_kind(api_version, kind, ns, name);
    if (!obj) return false;
    out = std::move(*obj);
    return true;
  });
}

SchedulerLoop::Delay KaiScheduler::schedule(const SimPod& p) {
  const std::string queue = queue_of(p);
  std::string problem;
  {
    std::lock_guard lk(queues_mu_);
    problem = queue_problem(queues_, queue);
  }
  if (!problem.empty()) return unschedulable(p, "Unschedulable", problem);
  for (const char* key : {api::keys::kGpuMemory, api::keys::kGpuFractionNumDevices}) {
    if (p.annotations.count(key)) {
      return unschedulable(p, "Unschedulable",
                           std::string("the ") + key +
                               " annotation is not supported by the kubex-sim simulator: only gpu-fraction "
                               "(one device) and whole nvidia.com/gpu requests are scheduled",
                           false);
    }
  }
  if (p.gpu_fraction_invalid || (p.gpu_fraction > 0 && p.gpu_whole > 0)) {
    return unschedulable(p, "Unschedulable",
                         "invalid GPU request: gpu-fraction must be a number between 0 and 1 and cannot be combined "
                         "with an nvidia.com/gpu request",
                         false);
  }
  // SIM-4: the sharing mode and KAI 0.18's gpu-fraction.limit rule (0.17 ignores the limit).
  const KaiSettings kai = ctx_.config().kai();
  if (std::string problem = kai_sharing_problem(p, kai); !problem.empty()) {
    return unschedulable(p, "Unschedulable", problem, false);
  }
  PlacementPod pp = placement_pod(p);
  pp.fraction = fraction_hundredths(p.gpu_fraction);
  if (pp.fraction > 0) pp.compute_mode = compute_mode(p, kai.version);
  std::string group_id = pp.fraction > 0 ? common::random_uuid() : "";
  std::string suffix = pp.fraction > 0 ? common::random_alnum(5) : "";
  Decision d = ledger_->schedule(p.key(), pp, Strategy::kKai, group_id, suffix);
  if (!d.scheduled) return unschedulable(p, "Unschedulable", d.message);
  if (pp.fraction > 0) {
    // Like KAI's binder: reserve the device (new groups), label the pod with its group, then bind.
    if (d.new_group) {
      if (auto failed = create_reservation(p, d.node, d.group, suffix)) {
        ledger_->forget(std::string(api::keys::kDefaultReservationNamespace) + "/" +
                        reservation_pod_name(d.node, suffix));
        ledger_->forget(p.key());
        // Issue 34 item 10: say why on the pod (PodScheduled=False/SchedulerError, a FailedScheduling event) and in
        // the log, and try again with the back-off; a later success binds the pod (PodScheduled=True).
        log_.warn("cannot create the GPU reservation pod; the pod stays pending and is retried",
                  {{"pod", p.key()}, {"node", d.node}, {"error", *failed}});
        return unschedulable(p, "FailedScheduling", *failed, true, "SchedulerError");
      }
    }
    auto r = client_.merge_patch(core_path("pods", p.ns, p.name),
                                 {{"metadata", {{"labels", {{api::keys::kGpuGroupLabel, d.group}}}}}});
    if (!r.ok()) {
      ledger_->forget(p.key());  // the group, if it has no other member, is collected
      return r.status == 404 ? std::nullopt : std::optional(kRetry);
    }
  }
  if (!bind(p, d.node)) return kRetry;
  scheduled(p, "Successfully assigned pod " + p.key() + " to node " + d.node + " at node-pool default");
  return std::nullopt;
}

}  // namespace kubex::sim::cluster::sched
