#include "sim/cluster/node_lease.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/log.h"
#include "common/time_format.h"
#include "sim/cluster/context.h"
#include "sim/cluster/node_objects.h"

namespace kubex::sim::cluster {

using nlohmann::json;

json node_lease_object(const std::string& name, const std::string& node_uid, common::TimePoint now) {
  json meta = {{"name", name}, {"namespace", kNodeLeaseNamespace}};
  if (!node_uid.empty()) {
    meta["ownerReferences"] = json::array({{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", name}, {"uid", node_uid}}});
  }
  return {{"apiVersion", "coordination.k8s.io/v1"},
          {"kind", "Lease"},
          {"metadata", meta},
          {"spec",
           {{"holderIdentity", name},
            {"leaseDurationSeconds", kNodeLeaseDurationSeconds},
            {"renewTime", common::format_rfc3339_micro(now)}}}};
}

json node_ready_status_patch(common::TimePoint now) {
  const std::string t = common::format_rfc3339(now);
  auto cond = [&](const char* type, const char* status, const char* reason, const char* message) {
    return json{{"type", type},
                {"status", status},
                {"reason", reason},
                {"message", message},
                {"lastHeartbeatTime", t},
                {"lastTransitionTime", t}};
  };
  return {{"status",
           {{"conditions",
             json::array({cond("Ready", "True", "KubeletReady", "kubelet is posting ready status (kubex-sim agent)"),
                          cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory"),
                          cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                          cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID")})}}}};
}

namespace {

class NodeHeartbeat final : public Subsystem {
 public:
  explicit NodeHeartbeat(ClusterContext& ctx) : ctx_(ctx), log_("kubex-sim.node-heartbeat") {
    for (const auto& spec : node_specs(ctx.config())) nodes_.push_back(spec.name);
  }
  ~NodeHeartbeat() override { stop(); }

  void start() override {
    thread_ = std::thread([this] { run(); });
  }

  void stop() override {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::map<std::string, common::TimePoint> reported;  // node -> last status report
    std::unique_lock lk(mu_);
    while (!stop_) {
      lk.unlock();
      for (const auto& name : nodes_) beat(name, reported);
      lk.lock();
      cv_.wait_for(lk, kNodeLeaseRenewInterval, [this] { return stop_; });
    }
  }

  void beat(const std::string& name, std::map<std::string, common::TimePoint>& reported) {
    const auto now = ctx_.now();
    auto it = reported.find(name);
    if (it == reported.end() || now - it->second >= kNodeStatusReportInterval) {
      auto r = ctx_.client().merge_patch(core_path("nodes", "", name) + "/status", node_ready_status_patch(now));
      if (r.ok()) {
        reported[name] = now;
      } else {
        log_.warn("node status report failed", {{"node", name}, {"status", r.status}, {"body", r.body.substr(0, 300)}});
      }
    }
    const std::string path = group_path("coordination.k8s.io/v1", "leases", kNodeLeaseNamespace, name);
    std::string renew = common::format_rfc3339_micro(now);
    auto r = ctx_.client().merge_patch(path, {{"spec", {{"holderIdentity", name}, {"renewTime", renew}}}});
    if (r.ok()) return;
    if (r.status == 404) {
      // The Lease is owned by its Node (removed with it), as a kubelet's is. Right after registration the agent's
      // node cache may not have seen the Node yet: read it, and create the Lease on a later beat if that fails,
      // rather than one that would never get its owner (renewals only patch spec).
      std::string uid;
      if (auto node = ctx_.nodes().get(name)) uid = node->uid;
      if (uid.empty()) {
        if (auto got = ctx_.client().get(core_path("nodes", "", name)); got.ok()) {
          const json node = got.json();
          if (node.is_object() && node.contains("metadata") && node["metadata"].is_object()) {
            uid = node["metadata"].value("uid", "");
          }
        }
      }
      if (uid.empty()) return;
      r = ctx_.client().create(group_path("coordination.k8s.io/v1", "leases", kNodeLeaseNamespace),
                               node_lease_object(name, uid, now));
      if (r.ok() || r.status == 409) return;
    }
    log_.warn("node lease renewal failed", {{"node", name}, {"status", r.status}, {"body", r.body.substr(0, 300)}});
  }

  ClusterContext& ctx_;
  common::Logger log_;
  std::vector<std::string> nodes_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Subsystem> make_node_heartbeat(ClusterContext& ctx) { return std::make_unique<NodeHeartbeat>(ctx); }

}  // namespace kubex::sim::cluster
