#include "kube/runtime/metrics.h"

#include <dirent.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kubex::kube {

namespace {

const std::vector<double> kReconcileBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                               1,     2.5,  5,     10,   30,  60};

class PromQueueMetrics final : public QueueMetrics {
 public:
  PromQueueMetrics(prometheus::Gauge& depth, prometheus::Counter& adds, prometheus::Counter& retries)
      : depth_(depth), adds_(adds), retries_(retries) {}
  void depth(std::size_t n) override { depth_.Set(static_cast<double>(n)); }
  void added() override { adds_.Increment(); }
  void retried() override { retries_.Increment(); }

 private:
  prometheus::Gauge& depth_;
  prometheus::Counter& adds_;
  prometheus::Counter& retries_;
};

class PromControllerMetrics final : public ControllerMetrics {
 public:
  PromControllerMetrics(prometheus::Family<prometheus::Counter>& total, prometheus::Histogram& time,
                        const std::string& controller)
      : time_(time) {
    for (const char* r : {"success", "error", "requeue", "requeue_after"}) {
      counters_.emplace(r, &total.Add({{"controller", controller}, {"result", r}}));
    }
  }
  void reconciled(std::string_view result, double seconds) override {
    auto it = counters_.find(std::string(result));
    if (it != counters_.end()) it->second->Increment();
    time_.Observe(seconds);
  }

 private:
  std::map<std::string, prometheus::Counter*> counters_;
  prometheus::Histogram& time_;
};

prometheus::MetricFamily single(const std::string& name, const std::string& help, prometheus::MetricType type,
                                double value) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
  return f;
}

}  // namespace

ProcessStats read_process_stats() {
  ProcessStats s;
  static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  static const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (std::getline(stat, line)) try {
      auto close = line.rfind(')');
      if (close != std::string::npos) {
        std::istringstream rest(line.substr(close + 1));
        std::vector<std::string> f;
        for (std::string t; rest >> t;) f.push_back(t);
        // f[0] is field 3 (state): utime 14, stime 15, starttime 22, vsize 23, rss 24.
        if (f.size() > 21) {
          s.cpu_seconds = (std::stod(f[11]) + std::stod(f[12])) / ticks;
          s.virtual_bytes = std::stod(f[20]);
          s.resident_bytes = std::stod(f[21]) * page;
          std::ifstream sys("/proc/stat");
          for (std::string l; std::getline(sys, l);) {
            if (l.rfind("btime ", 0) == 0) {
              s.start_time_seconds = std::stod(l.substr(6)) + std::stod(f[19]) / ticks;
              break;
            }
          }
        }
      }
    } catch (const std::exception&) {
      // an unexpected /proc format: report zeros rather than fail the scrape
    }
  if (DIR* d = opendir("/proc/self/fd")) {
    int n = 0;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') ++n;
    }
    closedir(d);
    s.open_fds = n;
  }
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) s.max_fds = static_cast<double>(rl.rlim_cur);
  return s;
}

struct Metrics::Impl {
  prometheus::Registry registry;
  mutable std::mutex mu;
  // Families created through this wrapper: listed even while they have no series yet.
  std::vector<std::tuple<std::string, std::string, prometheus::MetricType>> declared;
  std::map<std::string, std::shared_ptr<QueueMetrics>> queues;
  std::map<std::string, std::shared_ptr<ControllerMetrics>> controllers;

  prometheus::Family<prometheus::Gauge>* wq_depth = nullptr;
  prometheus::Family<prometheus::Counter>* wq_adds = nullptr;
  prometheus::Family<prometheus::Counter>* wq_retries = nullptr;
  prometheus::Family<prometheus::Counter>* reconcile_total = nullptr;
  prometheus::Family<prometheus::Histogram>* reconcile_time = nullptr;
  prometheus::Family<prometheus::Counter>* rest_requests = nullptr;
  prometheus::Family<prometheus::Gauge>* leader_status = nullptr;

  void declare(const std::string& name, const std::string& help, prometheus::MetricType type) {
    std::lock_guard lk(mu);
    for (const auto& d : declared) {
      if (std::get<0>(d) == name) return;
    }
    declared.emplace_back(name, help, type);
  }
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {
  impl_->wq_depth = &gauge_family("workqueue_depth", "Current depth of the work queue.");
  impl_->wq_adds = &counter_family("workqueue_adds_total", "Total number of adds handled by the work queue.");
  impl_->wq_retries =
      &counter_family("workqueue_retries_total", "Total number of retries handled by the work queue.");
  impl_->reconcile_total = &counter_family("controller_runtime_reconcile_total",
                                           "Total number of reconciliations per controller.");
  impl_->reconcile_time = &histogram_family("controller_runtime_reconcile_time_seconds",
                                            "Length of time per reconciliation per controller.");
  impl_->rest_requests = &counter_family("rest_client_requests_total",
                                         "Number of HTTP requests, partitioned by status code and method.");
  impl_->leader_status = &gauge_family("leader_election_master_status",
                                       "Gauge of if the reporting system is master of the relevant lease, 0 "
                                       "indicates backup, 1 indicates master. 'name' is the string used to "
                                       "identify the lease.");
}

Metrics::~Metrics() = default;

prometheus::Registry& Metrics::registry() {
  return impl_->registry;
}

prometheus::Family<prometheus::Counter>& Metrics::counter_family(const std::string& name,
                                                                 const std::string& help) {
  impl_->declare(name, help, prometheus::MetricType::Counter);
  return prometheus::BuildCounter().Name(name).Help(help).Register(impl_->registry);
}

prometheus::Family<prometheus::Gauge>& Metrics::gauge_family(const std::string& name,
                                                             const std::string& help) {
  impl_->declare(name, help, prometheus::MetricType::Gauge);
  return prometheus::BuildGauge().Name(name).Help(help).Register(impl_->registry);
}

prometheus::Family<prometheus::Histogram>& Metrics::histogram_family(const std::string& name,
                                                                     const std::string& help) {
  impl_->declare(name, help, prometheus::MetricType::Histogram);
  return prometheus::BuildHistogram().Name(name).Help(help).Register(impl_->registry);
}

std::shared_ptr<QueueMetrics> Metrics::queue_metrics(const std::string& queue_name) {
  std::lock_guard lk(impl_->mu);
  auto& slot = impl_->queues[queue_name];
  if (!slot) {
    prometheus::Labels l{{"name", queue_name}};
    slot = std::make_shared<PromQueueMetrics>(impl_->wq_depth->Add(l), impl_->wq_adds->Add(l),
                                              impl_->wq_retries->Add(l));
  }
  return slot;
}

std::shared_ptr<ControllerMetrics> Metrics::controller_metrics(const std::string& controller) {
  std::lock_guard lk(impl_->mu);
  auto& slot = impl_->controllers[controller];
  if (!slot) {
    auto& h = impl_->reconcile_time->Add({{"controller", controller}}, kReconcileBuckets);
    slot = std::make_shared<PromControllerMetrics>(*impl_->reconcile_total, h, controller);
  }
  return slot;
}

void Metrics::observe_request(const std::string& method, const std::string& code) {
  impl_->rest_requests->Add({{"code", code}, {"method", method}}).Increment();
}

std::function<void(const std::string&, const std::string&)> Metrics::request_observer() {
  return [this](const std::string& method, const std::string& code) { observe_request(method, code); };
}

void Metrics::set_leader_status(const std::string& lease_name, bool leading) {
  impl_->leader_status->Add({{"name", lease_name}}).Set(leading ? 1 : 0);
}

std::string Metrics::render() const {
  std::vector<prometheus::MetricFamily> families = impl_->registry.Collect();
  std::set<std::string> present;
  for (const auto& f : families) present.insert(f.name);
  {
    std::lock_guard lk(impl_->mu);
    for (const auto& [name, help, type] : impl_->declared) {
      if (present.count(name)) continue;
      prometheus::MetricFamily f;
      f.name = name;
      f.help = help;
      f.type = type;
      families.push_back(std::move(f));
    }
  }
  ProcessStats p = read_process_stats();
  using T = prometheus::MetricType;
  families.push_back(single("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                            T::Counter, p.cpu_seconds));
  families.push_back(
      single("process_max_fds", "Maximum number of open file descriptors.", T::Gauge, p.max_fds));
  families.push_back(single("process_open_fds", "Number of open file descriptors.", T::Gauge, p.open_fds));
  families.push_back(
      single("process_resident_memory_bytes", "Resident memory size in bytes.", T::Gauge, p.resident_bytes));
  families.push_back(single("process_start_time_seconds",
                            "Start time of the process since unix epoch in seconds.", T::Gauge,
                            p.start_time_seconds));
  families.push_back(
      single("process_virtual_memory_bytes", "Virtual memory size in bytes.", T::Gauge, p.virtual_bytes));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace kubex::kube
