#include "observe/sizing_history.h"

#include <algorithm>

#include "observe/gpu_history.h"
#include "observe/signals.h"
#include "prom/client.h"
#include "prom/sizing_queries.h"

namespace kubex::observe {

namespace {

namespace ds = decide::sizing;

// Per subject key, per timestamp (ms): the sample being assembled.
using Assembly = std::map<std::string, std::map<common::TimePoint, ds::UsageSample>>;

void merge(std::optional<double>& slot, double gpus) { slot = slot ? std::max(*slot, gpus) : gpus; }

}  // namespace

std::string sizing_key(const SizingSubject& s) { return history_key(s.workload) + "/" + s.container; }

SizingRead read_sizing_history(prom::Querier& querier, const api::ReactiveSpec& reactive,
                               const std::vector<SizingSubject>& subjects, common::TimePoint start,
                               common::TimePoint end, std::chrono::seconds step) {
  SizingRead out;
  // workload key -> container -> allocation (a container's subject)
  std::map<std::string, std::map<std::string, decide::Hundredths>> wanted;
  std::vector<prom::HistoryWorkload> workloads;
  for (const auto& s : subjects) {
    wanted[history_key(s.workload)][s.container] = s.allocation;
    workloads.push_back(s.workload);
  }
  Assembly assembly;
  struct Signal {
    const api::PrometheusSignal* p;
    bool memory;
  };
  for (const Signal sig : {Signal{&reactive.compute.prometheus, false}, Signal{&reactive.memory.prometheus, true}}) {
    const prom::SignalSelector sel = selector_of(*sig.p);
    const bool share = sig.p->interpretation == "currentAllocation";
    for (const auto& batch : prom::history_batches(workloads)) {
      ++out.queries;
      auto m = querier.range(prom::sizing_range_query(sel, batch, step), start, end, step);
      if (!m) {
        out.errors.push_back(m.error().str());
        continue;
      }
      for (const auto& series : m->series) {
        auto label = [&](const std::string& name) {
          auto it = series.labels.find(name);
          return it == series.labels.end() ? std::string() : it->second;
        };
        const prom::HistoryWorkload* w = prom::history_owner(batch, label(sel.namespace_label), label(sel.pod_label));
        if (!w) continue;
        const std::string wkey = history_key(*w);
        const auto& containers = wanted[wkey];
        auto c = containers.find(label(sel.container_label));
        if (c == containers.end()) continue;
        auto& by_time = assembly[wkey + "/" + c->first];
        for (const auto& p : series.points) {
          // REA-4: v/100 GPUs under fullGPU, v/100 × a_c under currentAllocation.
          const double gpus = share ? p.value / 100.0 * static_cast<double>(c->second) / 100.0 : p.value / 100.0;
          ds::UsageSample& u = by_time[p.at];
          u.at = p.at;
          merge(sig.memory ? u.memory : u.compute, gpus);  // the highest over the workload's pods
        }
      }
    }
  }
  for (auto& [key, by_time] : assembly) {
    auto& list = out.samples[key];
    list.reserve(by_time.size());
    for (auto& [at, u] : by_time) list.push_back(u);
  }
  return out;
}

}  // namespace kubex::observe
