#include "engine/report_cmd.h"

#include <algorithm>
#include <exception>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "common/duration.h"
#include "common/log.h"
#include "common/time_format.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "engine/command_client.h"
#include "engine/plan_cmd.h"
#include "engine/report_model.h"
#include "engine/synced_informers.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"
#include "observe/caches.h"
#include "observe/catalog.h"
#include "observe/report_inputs.h"
#include "observe/workloads.h"
#include "prom/client.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
namespace dr = decide::report;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr const char* kCommand = "kubex report";

std::string event_time(const json& e) {
  for (const char* k : {"lastTimestamp", "eventTime"}) {
    if (e.contains(k) && e[k].is_string() && !e[k].get<std::string>().empty()) return e[k].get<std::string>();
  }
  return e.value("metadata", json::object()).value("creationTimestamp", "");
}

// One read of the cluster's events: the PolicyEvaluationEvictResize events, each mapped to its workload by the
// pod's name (the pod itself is gone): namespace and the owner kind's pod-name pattern (PRO-2); and the
// DrainCompleted events of GpuConsolidationPolicies inside the window (the node from the twin event on the node).
void read_events(kube::Client& client, const std::vector<observe::ReportWorkload>& ws, ReportData& r) {
  std::vector<prom::HistoryWorkload> known;
  for (const auto& w : ws) known.push_back({w.input.kind, w.input.ns, w.input.name, false});
  const std::string since = common::format_rfc3339(r.now - r.window);
  std::map<std::string, std::string> node_of;  // DrainCompleted message -> node
  auto listed = client.list("/api/v1/events", {}, [&](json&& e) {
    const std::string reason = e.value("reason", "");
    const json& obj = e.value("involvedObject", json::object());
    if (reason == "DrainCompleted") {
      const std::string at = event_time(e);
      if (at < since) return;
      if (obj.value("kind", "") == "Node") {
        node_of[e.value("message", "")] = obj.value("name", "");
      } else if (obj.value("kind", "") == "GpuConsolidationPolicy") {
        r.drains.push_back({obj.value("name", ""), "", at, e.value("message", "")});
      }
      return;
    }
    if (reason != "PolicyEvaluationEvictResize") return;
    EvictionResize x;
    x.ns = obj.value("namespace", "");
    x.pod = obj.value("name", "");
    x.at = event_time(e);
    x.message = e.value("message", "");
    if (const prom::HistoryWorkload* w = prom::history_owner(known, x.ns, x.pod)) x.workload = w->kind + "/" + w->name;
    r.resizes.push_back(std::move(x));
  });
  if (!listed) r.events_error = listed.error().message.empty() ? listed.error().reason : listed.error().message;
  for (auto& d : r.drains) {
    if (auto it = node_of.find(d.message); it != node_of.end()) d.node = it->second;
  }
  // Events live about an hour (--event-ttl); each policy's status keeps its last drain for longer.
  for (const auto& p : r.consolidation) {
    if (p.last_drained_node.empty() || p.last_drain_time < since) continue;
    const bool listed_already = std::any_of(r.drains.begin(), r.drains.end(), [&](const CarriedDrain& d) {
      return d.policy == p.name && d.node == p.last_drained_node;
    });
    if (!listed_already) r.drains.push_back({p.name, p.last_drained_node, p.last_drain_time, ""});
  }
  std::sort(r.resizes.begin(), r.resizes.end(),
            [](const EvictionResize& a, const EvictionResize& b) { return a.at > b.at; });
  std::sort(r.drains.begin(), r.drains.end(), [](const CarriedDrain& a, const CarriedDrain& b) { return a.at > b.at; });
}

class Run {
 public:
  Run(const ReportOptions& o, std::ostream& out, std::ostream& err) : o_(o), out_(out), err_(err) {}

  int run() {
    auto window = parse_since(o_.since);
    if (!window) {
      err_ << kCommand << ": --since \"" << o_.since << "\": " << window.error().str()
           << " (a duration such as 24h, 90m or 7d)\n";
      return kExitUsage;
    }
    auto client = command_client(o_.kubeconfig, o_.context);
    if (!client) return fail(client.error().str());
    kube::Client& c = **client;

    ReportData r;
    r.now = common::RealClock::instance().now();
    r.window = *window;
    r.since = o_.since;
    const kube::ConnectionConfig& conn = c.config();
    r.cluster = (conn.context.empty() ? "" : conn.context + " ") + "(" + conn.server + ")";

    CommandCaches view(*client, o_.global_config_name, o_.policy_evaluation_name);
    if (auto stuck = view.sync(); !stuck.empty()) return fail(stuck);
    const observe::Caches& caches = view.caches;
    const observe::CatalogCache& catalog = view.catalog;

    auto cat = catalog.catalog();
    const api::GlobalConfigSpec& g = cat->global();
    r.idle = dr::idle_rule(g);
    r.priced = !g.gpu_hour_prices.empty();
    std::vector<observe::ReportWorkload> workloads = observe::report_workloads(caches, g.gpu_hour_prices);
    for (auto& w : workloads) {
      const decide::policy::Match m = decide::policy::match_policies(
          observe::decision_workload(*w.view), cat->candidates(), cat->evaluation(), g.protected_namespace_patterns);
      w.input.managed = m.managed && !m.on_hold;
    }

    prom::Options po;
    po.url = o_.prometheus_url.empty() ? g.prometheus_url : o_.prometheus_url;
    po.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(g.prometheus_request_timeout);
    po.bearer_token_file = o_.prometheus_bearer_token_file;
    po.ca_file = o_.prometheus_ca_file;
    r.prometheus_url = po.url;
    if (auto querier = prom::connect(po); !querier) {
      r.prometheus_error = querier.error().str();
    } else {
      observe::UsageReadResult read = observe::read_report_usage(**querier, workloads, r.window, r.now);
      if (!read.errors.empty()) r.prometheus_error = read.errors.front();
    }

    std::vector<dr::WorkloadInput> inputs;
    for (const auto& w : workloads) inputs.push_back(w.input);
    r.summary = dr::summarize(inputs, r.idle, r.window, r.now);

    if (auto plans = plan_cluster_policies(c, o_.global_config_name)) {
      r.consolidation = std::move(*plans);
    } else {
      r.consolidation_error = plans.error().str();
    }
    const observe::DeviceInventory devices = observe::device_inventory(caches, g.kai_reservation_namespace);
    r.pods_per_gpu = dr::pods_per_gpu(devices.node_gpus, devices.pods);
    read_events(c, workloads, r);
    return write(r);
  }

 private:
  int fail(const std::string& message) {
    err_ << kCommand << ": " << message << "\n";
    return kExitFailed;
  }

  int write(const ReportData& r) {
    std::ofstream file;
    std::ostream* os = &out_;
    if (!o_.output_file.empty()) {
      file.open(o_.output_file, std::ios::out | std::ios::trunc);
      if (!file) return fail("cannot write " + o_.output_file);
      os = &file;
    }
    if (o_.output == "json") {
      *os << report_json(r).dump(2) << "\n";
    } else if (o_.output == "html") {
      print_report_html(r, *os);
    } else {
      print_report_table(r, *os);
    }
    if (file.is_open()) {
      file.close();
      if (!file) return fail("cannot write " + o_.output_file);
      err_ << "wrote " << o_.output_file << "\n";
    }
    return kExitOk;
  }

  const ReportOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
};

}  // namespace

common::Result<std::chrono::seconds> parse_since(const std::string& s) {
  if (s.size() > 1 && s.back() == 'd' && s.find_first_not_of("0123456789") == s.size() - 1) {
    const long days = std::stol(s.substr(0, s.size() - 1));
    if (days >= 1 && days <= 3650) return std::chrono::seconds(days * 86400);
  }
  auto d = common::parse_go_duration(s);
  if (!d) return std::unexpected(d.error());
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(*d);
  if (secs < std::chrono::minutes(1)) return common::fail("must be at least 1m");
  return secs;
}

int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  return run_quiet_command(kCommand, err, [&] { return Run(options, out, err).run(); });
}

}  // namespace kubex::engine
