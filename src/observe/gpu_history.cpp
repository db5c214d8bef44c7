#include "observe/gpu_history.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/views.h"
#include "decide/admission/pod_resources.h"
#include "observe/signals.h"
#include "observe/workloads.h"
#include "prom/client.h"

namespace kubex::observe {

namespace {

void add_jobs(std::vector<HistoryJob>& out, const std::vector<prom::HistoryWorkload>& workloads,
              std::chrono::seconds lookback, prom::HistorySignal value, prom::HistorySignal span) {
  for (auto& batch : prom::history_batches(workloads)) {
    for (auto signal : {value, span}) {
      std::string q = prom::history_query(signal, batch, lookback);
      out.push_back({signal, batch, lookback, std::move(q)});
    }
  }
}

std::string label(const prom::Sample& s, const char* name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? "" : it->second;
}

}  // namespace

std::map<std::string, decide::Allocation> current_allocations(const Caches& caches, const api::WorkloadView& w) {
  std::map<std::string, decide::Allocation> out;
  std::shared_ptr<const api::PodView> newest;
  for (const auto& p : pods_of(caches, w)) {
    if (p->deleting || p->phase.view() != "Running") continue;
    if (!newest || p->started > newest->started) newest = p;
  }
  if (newest) {
    const PodFraction f = pod_fraction(*newest);
    for (const auto& c : pod_containers(*newest)) {
      if (c.allocation <= 0) continue;
      const bool fraction = f.value && c.name == f.container && c.allocation == *f.value;
      out[c.name] = decide::Allocation{c.allocation, !fraction};
    }
    return out;
  }
  auto t = pod_template_of(caches, w);
  if (!t) return out;
  for (const auto& c : decide::read_pod_resources(*t).targets) {
    if (c.allocation() > 0) out[c.name] = decide::Allocation{c.allocation(), !c.current_is_fraction};
  }
  return out;
}

std::optional<common::TimePoint> oldest_pod_start(const Caches& caches, const api::WorkloadView& w) {
  std::optional<common::TimePoint> out;
  for (const auto& p : pods_of(caches, w)) {
    if (p->deleting || p->phase.view() != "Running" || p->started == common::TimePoint{}) continue;
    if (!out || p->started < *out) out = p->started;
  }
  return out;
}

namespace {

class CachedHistorySubjects final : public HistorySubjects {
 public:
  explicit CachedHistorySubjects(const Caches& caches) : caches_(caches) {}
  std::map<std::string, decide::Allocation> allocations(const api::WorkloadView& w) const override {
    return current_allocations(caches_, w);
  }
  std::optional<common::TimePoint> oldest_start(const api::WorkloadView& w) const override {
    return oldest_pod_start(caches_, w);
  }

 private:
  const Caches& caches_;
};

}  // namespace

std::unique_ptr<HistorySubjects> cached_history_subjects(const Caches& caches) {
  return std::make_unique<CachedHistorySubjects>(caches);
}

std::string history_key(const prom::HistoryWorkload& w) { return w.kind + "/" + w.ns + "/" + w.name; }

std::vector<HistoryJob> history_jobs(const std::vector<HistoryRequest>& requests) {
  std::map<std::chrono::seconds, std::vector<prom::HistoryWorkload>> by_lookback, memory_shared;
  std::vector<const HistoryRequest*> memory_own;
  for (const auto& r : requests) {
    by_lookback[r.lookback].push_back(r.workload);
    if (r.memory_lookback >= r.lookback) {
      memory_shared[r.lookback].push_back(r.workload);
    } else {
      memory_own.push_back(&r);
    }
  }
  std::vector<HistoryJob> out;
  for (const auto& [l, ws] : by_lookback) {
    add_jobs(out, ws, l, prom::HistorySignal::kCompute, prom::HistorySignal::kComputeSpan);
  }
  for (const auto& [l, ws] : memory_shared) {
    add_jobs(out, ws, l, prom::HistorySignal::kMemory, prom::HistorySignal::kMemorySpan);
  }
  for (const HistoryRequest* r : memory_own) {
    add_jobs(out, {r->workload}, r->memory_lookback, prom::HistorySignal::kMemory, prom::HistorySignal::kMemorySpan);
  }
  return out;
}

HistoryReadResult read_history(prom::Querier& querier, const std::vector<HistoryRequest>& requests,
                               common::TimePoint now, const HistoryReadOptions& options) {
  const std::vector<HistoryJob> jobs = history_jobs(requests);
  HistoryReadResult out;
  std::mutex mu;
  std::atomic<bool> failed{false};  // after the first failure nothing more is sent (a Prometheus that hangs costs
                                    // one request timeout per query in flight, not one per batch)
  const double now_s = std::chrono::duration<double>(now.time_since_epoch()).count();

  auto apply = [&](const HistoryJob& job, const common::Result<prom::Vector>& answer) {
    std::lock_guard lk(mu);
    if (!answer) {
      failed = true;
      out.errors.push_back(answer.error().str());
      for (const auto& w : job.batch) out.failed_workloads.insert(history_key(w));
      return;
    }
    for (const auto& s : answer->samples) {
      const prom::HistoryWorkload* w = prom::history_owner(job.batch, label(s, "namespace"), label(s, "pod"));
      if (!w) continue;
      decide::ContainerHistory& h = out.workloads[history_key(*w)][label(s, "container")];
      auto raise = [](auto& slot, auto v) { slot = slot ? std::max(*slot, v) : v; };
      switch (job.signal) {
        case prom::HistorySignal::kCompute: raise(h.compute_percent, s.value); break;
        case prom::HistorySignal::kMemory: raise(h.memory_percent, s.value); break;
        case prom::HistorySignal::kComputeSpan:
        case prom::HistorySignal::kMemorySpan: {
          auto span = std::chrono::seconds(static_cast<std::int64_t>(std::max(0.0, now_s - s.value)));
          raise(job.signal == prom::HistorySignal::kComputeSpan ? h.compute_span : h.memory_span, span);
          break;
        }
      }
    }
  };

  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      if (failed) {  // not sent: its workloads could not be refreshed either
        std::lock_guard lk(mu);
        for (const auto& w : jobs[i].batch) out.failed_workloads.insert(history_key(w));
        continue;
      }
      auto answer = querier.instant(jobs[i].promql);
      for (std::size_t retry = 0; !answer && retry < options.retry_after.size() && !failed; ++retry) {
        {
          std::lock_guard lk(mu);
          ++out.queries;
          ++out.failed_requests;
        }
        std::this_thread::sleep_for(options.retry_after[retry]);  // per-batch back-off
        answer = querier.instant(jobs[i].promql);
      }
      {
        std::lock_guard lk(mu);
        ++out.queries;
        if (!answer) ++out.failed_requests;
      }
      apply(jobs[i], answer);
    }
  };
  const std::size_t n = std::min(std::max<std::size_t>(options.max_in_flight, 1), jobs.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < n; ++i) threads.emplace_back(worker);
  if (n > 0) worker();
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace kubex::observe
