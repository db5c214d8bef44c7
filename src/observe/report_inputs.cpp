#include "observe/report_inputs.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "api/views.h"
#include "decide/actuation/rollback.h"
#include "kube/cache/informer.h"
#include "observe/actuation.h"
#include "observe/caches.h"
#include "observe/gpu_history.h"
#include "observe/gpu_inventory.h"
#include "observe/signals.h"
#include "observe/workloads.h"

namespace kubex::observe {
namespace {

namespace dr = decide::report;

std::map<std::string, std::string> labels_of(const api::Labels& labels) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : labels) out.emplace(k.str(), v.str());
  return out;
}

}  // namespace

std::optional<decide::actuation::Original> written_original(const Caches& caches, const api::WorkloadView& w) {
  if (const common::IStr* rb = w.annotation(api::keys::kRollbackState)) {
    if (auto st = decide::actuation::parse_rollback_state(rb->view())) return st->original;
  }
  if (auto tmpl = original_of(caches, w)) return decide::actuation::original_from_template(*tmpl);
  return std::nullopt;
}

dr::WorkloadInput workload_gpus(const Caches& caches, const api::WorkloadView& w,
                                const std::vector<api::GpuHourPrice>& prices) {
  dr::WorkloadInput in;
  in.ns = w.ns.str();
  in.kind = w.kind.str();
  in.name = w.name;
  if (auto o = written_original(caches, w)) in.written_per_pod = dr::written_gpus(*o);
  std::map<std::string, std::optional<dr::Price>> node_prices;
  for (const auto& pod : pods_of(caches, w)) {
    if (pod->phase.view() != "Running" || pod->deletion != common::TimePoint{}) continue;
    dr::RunningPod p;
    p.name = pod->name;
    p.node = pod->node_name.str();
    for (const auto& a : live_allocation(*pod)) p.held += a.value;
    p.started = pod->started != common::TimePoint{} ? pod->started : pod->created;
    if (!prices.empty() && !p.node.empty()) {
      auto it = node_prices.find(p.node);
      if (it == node_prices.end()) {
        std::optional<dr::Price> price;
        if (caches.nodes) {
          if (auto n = kube::as<api::NodeView>(caches.nodes->get(p.node))) {
            price = dr::node_price(prices, labels_of(n->labels));
          }
        }
        it = node_prices.emplace(p.node, price).first;
      }
      p.price = it->second;
    }
    in.running.push_back(std::move(p));
  }
  return in;
}

std::vector<ReportWorkload> report_workloads(const Caches& caches, const std::vector<api::GpuHourPrice>& prices) {
  std::vector<ReportWorkload> out;
  for (const auto& w : list_workloads(caches)) {
    ReportWorkload r;
    r.view = w;
    r.input = workload_gpus(caches, *w, prices);
    bool holds = r.input.written_per_pod > 0;
    for (const auto& p : r.input.running) holds = holds || p.held > 0;
    if (!holds) continue;
    r.allocations = current_allocations(caches, *w);
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const ReportWorkload& a, const ReportWorkload& b) {
    return std::tie(a.input.ns, a.input.kind, a.input.name) < std::tie(b.input.ns, b.input.kind, b.input.name);
  });
  return out;
}

UsageReadResult read_report_usage(prom::Querier& querier, std::vector<ReportWorkload>& workloads,
                                  std::chrono::seconds window, common::TimePoint now) {
  std::vector<HistoryRequest> requests;
  for (const auto& w : workloads) {
    if (w.allocations.empty()) continue;  // no GPU now: nothing to measure against
    HistoryRequest r;
    bool whole = true;
    for (const auto& [c, a] : w.allocations) whole = whole && a.whole_gpu;
    r.workload = {w.input.kind, w.input.ns, w.input.name, whole};
    r.lookback = window;
    r.memory_lookback = window;
    requests.push_back(std::move(r));
  }
  HistoryReadOptions ro;
  ro.retry_after.clear();  // a command answers at once
  HistoryReadResult read = read_history(querier, requests, now, ro);
  UsageReadResult out;
  out.queries = read.queries;
  out.errors = read.errors;
  const bool failed_all = !read.errors.empty() && read.workloads.empty();
  for (auto& w : workloads) {
    dr::WindowUsage& u = w.input.usage;
    if (w.allocations.empty()) continue;
    const prom::HistoryWorkload hw{w.input.kind, w.input.ns, w.input.name, false};
    const std::string key = history_key(hw);
    u.queried = !failed_all && !read.failed_workloads.count(key);
    auto it = read.workloads.find(key);
    if (!u.queried || it == read.workloads.end()) continue;
    double sm = 0, memory = 0;
    bool has_sm = false, has_memory = false;
    std::optional<std::chrono::seconds> span;
    auto shorter = [&](std::optional<std::chrono::seconds> s) {
      if (s) span = span ? std::min(*span, *s) : *s;
    };
    for (const auto& [container, h] : it->second) {
      auto a = w.allocations.find(container);
      if (h.compute_percent) {
        sm += *h.compute_percent / 100.0;
        has_sm = true;
      }
      if (h.memory_percent && a != w.allocations.end()) {
        memory += a->second.whole_gpu ? *h.memory_percent / 100.0
                                      : *h.memory_percent / 100.0 * static_cast<double>(a->second.gpu) / 100.0;
        has_memory = true;
      }
      shorter(h.compute_span);
      shorter(h.memory_span);
    }
    if (has_sm) u.sm_p95_gpus = sm;
    if (has_memory) u.memory_max_gpus = memory;
    if (has_sm && has_memory) u.span = span;
  }
  return out;
}

DeviceInventory device_inventory(const Caches& caches, const std::string& reservation_namespace) {
  DeviceInventory out;
  const decide::packing::Pool pool = cached_gpu_inventory(caches)->pool(api::LabelSelector{}, reservation_namespace);
  for (const auto& n : pool.nodes) {
    if (n.gpu_capacity > 0) out.node_gpus[n.name] = n.gpu_capacity;
  }
  for (const auto& p : pool.pods) {
    if (!p.has_gpu()) continue;
    out.pods.push_back({p.node, p.gpu_group, p.fraction, p.whole_gpus});
  }
  return out;
}

}  // namespace kubex::observe
