// The GPU model subsystem: a sampler thread that evaluates the pure core (usage_core.h) over the pod and
// node caches at a steady cadence, integrates the SM counters, reports bad annotations once, answers the
// kubelet's crash questions and serves the exporter.
#include "sim/gpu/gpu_model.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "common/log.h"
#include "sim/cluster/context.h"
#include "sim/gpu/exporter.h"
#include "sim/gpu/usage_core.h"

namespace kubex::sim::gpu {

namespace {

constexpr const char* kComponent = "kubex-sim-gpu";

// What one sample publishes: immutable, shared with readers; the text is rendered on first scrape.
struct Published {
  std::vector<Sample> samples;
  std::unordered_map<std::string, std::string> crashes;
  std::uint64_t sequence = 0;  // how many samples were taken up to this one (0: none yet)
  mutable std::once_flag rendered;
  mutable std::string text;

  const std::string& metrics_text() const {
    std::call_once(rendered, [this] {
      text = api::render_gpu_series(samples);
      // The exporter's own counter: a test (or anyone) can wait for N more samples instead of sleeping.
      text += "# HELP kubex_sim_gpu_samples_total GPU samples taken since kubex-sim started.\n"
              "# TYPE kubex_sim_gpu_samples_total counter\n"
              "kubex_sim_gpu_samples_total " + std::to_string(sequence) + "\n";
    });
    return text;
  }
};

struct CounterState {
  double total = 0;    // percent-seconds
  double last_sm = 0;  // the gauge at `at`
  common::TimePoint at;
  int restarts = 0;
};

std::chrono::milliseconds sample_interval(const cluster::ClusterConfig& c) {
  return std::max(c.gpu_sample_interval, std::chrono::milliseconds(10));
}

}  // namespace

struct GpuModel::Impl {
  explicit Impl(cluster::ClusterContext& c)
      : ctx(c),
        isolation(isolation_for(c.config().kai())),
        interval(sample_interval(c.config())),
        server([this] { return current()->metrics_text(); }) {}

  // One sample under sample_mu: evaluate, integrate the counters, publish. Returns the findings to report.
  std::vector<Finding> sample_locked(common::TimePoint now);

  std::shared_ptr<const Published> current() const {
    std::lock_guard lk(mu);
    return published;
  }

  cluster::ClusterContext& ctx;
  const MemoryIsolation isolation;
  const std::chrono::milliseconds interval;
  PatternCache patterns;
  common::Logger log{"gpu-model"};

  std::mutex sample_mu;                                    // serialises sample(); guards counters and warned
  std::unordered_map<std::string, CounterState> counters;  // "<pod uid>/<container>/<gpu uuid>"
  std::set<std::string> warned;                            // findings already reported as events

  mutable std::mutex mu;  // guards published
  std::shared_ptr<const Published> published = std::make_shared<Published>();

  std::mutex run_mu;
  std::condition_variable cv;
  bool stopping = false;
  std::thread sampler;

  MetricsServer server;
};

GpuModel::GpuModel(cluster::ClusterContext& ctx) : impl_(std::make_unique<Impl>(ctx)) {}

GpuModel::~GpuModel() {
  stop();
}

common::Result<int> GpuModel::listen(const std::string& host_port) {
  return impl_->server.listen(host_port);
}

void GpuModel::start() {
  if (impl_->sampler.joinable()) return;
  {
    std::lock_guard lk(impl_->run_mu);
    impl_->stopping = false;
  }
  impl_->sampler = std::thread([this] {
    Impl& m = *impl_;
    using steady = std::chrono::steady_clock;
    auto next = steady::now();
    while (true) {
      auto began = steady::now();
      try {
        sample(m.ctx.now());
      } catch (const std::exception& e) {
        m.log.error("GPU sample failed", {{"error", e.what()}});
      }
      auto took = steady::now() - began;
      if (took > m.interval) {
        m.log.warn("GPU sample took longer than the sample interval",
                   {{"tookMs", std::chrono::duration_cast<std::chrono::milliseconds>(took).count()},
                    {"intervalMs", m.interval.count()}});
      }
      // Steady cadence: ticks at start + k × interval; ticks missed while busy are skipped, not bunched.
      next += m.interval;
      for (auto now = steady::now(); next <= now;) next += m.interval;
      std::unique_lock lk(m.run_mu);
      if (m.cv.wait_until(lk, next, [&] { return m.stopping; })) break;
    }
  });
}

void GpuModel::stop() {
  if (!impl_) return;
  {
    std::lock_guard lk(impl_->run_mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->sampler.joinable()) impl_->sampler.join();
  impl_->server.stop();
}

std::optional<std::string> GpuModel::crash_reason(const cluster::SimPod& pod,
                                                  const cluster::SimContainer& container,
                                                  common::TimePoint now) const {
  if (pod.ns == api::keys::kDefaultReservationNamespace) return std::nullopt;
  auto gpu = gpu_containers(pod);
  auto it = std::find_if(gpu.begin(), gpu.end(), [&](const GpuContainer& g) {
    return pod.containers[g.index].name == container.name;
  });
  if (it == gpu.end()) return std::nullopt;
  Demand d = container_demand(pod, container.name, now, impl_->patterns);
  if (auto node = impl_->ctx.nodes().get(pod.node)) {
    auto r = allocation_crash(*it, d.memory_mib, static_cast<double>(node->gpu_memory_mib), impl_->isolation,
                              static_cast<double>(node->gpu_driver_reserve_mib));
    if (r) return r;
  }
  if (impl_->isolation == MemoryIsolation::kHamiCore) return std::nullopt;
  auto published = impl_->current();
  auto crash = published->crashes.find(pod.uid + "/" + container.name);
  if (crash == published->crashes.end()) return std::nullopt;
  return crash->second;
}

void GpuModel::sample(common::TimePoint now) {
  Impl& m = *impl_;
  std::vector<Finding> fresh;  // reported after the lock: an Event write goes through the API pipeline
  {
    std::lock_guard lk(m.sample_mu);
    fresh = m.sample_locked(now);
  }
  for (const Finding& f : fresh) {
    m.log.warn("invalid GPU usage annotation",
               {{"pod", f.pod->key()}, {"annotation", f.key}, {"error", f.message}});
    m.ctx.record_event(cluster::pod_ref(*f.pod), "Warning", "InvalidGpuUsageAnnotation", f.message,
                       kComponent);
  }
}

std::vector<Finding> GpuModel::Impl::sample_locked(common::TimePoint now) {
  Impl& m = *this;
  Evaluation ev = evaluate(m.ctx.pods().all(), m.ctx.nodes().all(), m.isolation, now, m.patterns);

  std::unordered_map<std::string, CounterState> counters;
  counters.reserve(ev.samples.size());
  for (auto& s : ev.samples) {
    std::string key = s.pod_uid + "/" + s.container + "/" + s.gpu_uuid;
    CounterState st{0, s.sm_percent, now, s.restart_count};
    auto prev = m.counters.find(key);
    // A series seen in the previous sample continues (trapezoid rule); a new or restarted container starts
    // from 0, which Prometheus treats as a counter reset.
    if (prev != m.counters.end() && prev->second.restarts == s.restart_count) {
      double dt = std::chrono::duration<double>(now - prev->second.at).count();
      st.total = prev->second.total + (dt > 0 ? (prev->second.last_sm + s.sm_percent) / 2 * dt : 0);
    }
    s.sm_percent_seconds_total = st.total;
    counters.emplace(std::move(key), st);
  }
  m.counters.swap(counters);

  std::set<std::string> seen;
  std::vector<Finding> fresh;
  for (auto& f : ev.findings) {
    std::string key = f.pod->uid + "\n" + f.key + "\n" + f.value;
    if (!m.warned.count(key)) fresh.push_back(std::move(f));
    seen.insert(std::move(key));
  }
  m.warned.swap(seen);

  auto next = std::make_shared<Published>();
  next->samples = std::move(ev.samples);
  next->crashes = std::move(ev.crashes);
  {
    std::lock_guard plk(m.mu);
    next->sequence = m.published->sequence + 1;
    m.published = std::move(next);
  }
  return fresh;
}

std::vector<Sample> GpuModel::samples() const {
  return impl_->current()->samples;
}

std::string GpuModel::render_metrics() const {
  return impl_->current()->metrics_text();
}

std::unique_ptr<cluster::GpuPart> make_gpu_model(cluster::ClusterContext& ctx) {
  return std::make_unique<GpuModel>(ctx);
}

}  // namespace kubex::sim::gpu
