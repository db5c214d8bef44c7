// The engine's one metrics registry (OBS-5): the controller-runtime families (work queues, reconciles,
// REST client requests, leader election), process metrics read from /proc at scrape time, and whatever
// families later components add. render() produces the Prometheus text format (served by
// http_endpoints.h). Only this header's .cpp includes prometheus-cpp's registry machinery; components
// that add families include <prometheus/counter.h> (etc.) in their own .cpp.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

namespace kubex::kube {

// Hooks of one work queue (workqueue_depth / workqueue_adds_total / workqueue_retries_total{name}).
class QueueMetrics {
 public:
  virtual ~QueueMetrics() = default;
  virtual void depth(std::size_t n) = 0;
  virtual void added() = 0;
  virtual void retried() = 0;
};

// Hooks of one controller (controller_runtime_reconcile_total / _time_seconds{controller}).
class ControllerMetrics {
 public:
  virtual ~ControllerMetrics() = default;
  // `result` is success, error, requeue or requeue_after.
  virtual void reconciled(std::string_view result, double seconds) = 0;
};

// Process metrics as the Prometheus Go client reports them, read from /proc/self.
struct ProcessStats {
  double cpu_seconds = 0;
  double resident_bytes = 0, virtual_bytes = 0;
  double open_fds = 0, max_fds = 0;
  double start_time_seconds = 0;  // since the Unix epoch
};
ProcessStats read_process_stats();

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Families of other components (e.g. kubex_*). Families created here are listed (HELP and TYPE) even
  // before their first series exists; the same name returns the same family.
  prometheus::Family<prometheus::Counter>& counter_family(const std::string& name, const std::string& help);
  prometheus::Family<prometheus::Gauge>& gauge_family(const std::string& name, const std::string& help);
  prometheus::Family<prometheus::Histogram>& histogram_family(const std::string& name,
                                                              const std::string& help);
  prometheus::Registry& registry();

  std::shared_ptr<QueueMetrics> queue_metrics(const std::string& queue_name);
  // Creates the controller's series (all four results at 0, like controller-runtime).
  std::shared_ptr<ControllerMetrics> controller_metrics(const std::string& controller);
  // rest_client_requests_total{code,method}; hand request_observer() to kube::Client::set_observer.
  void observe_request(const std::string& method, const std::string& code);
  std::function<void(const std::string& method, const std::string& code)> request_observer();
  // leader_election_master_status{name}: 1 while leading.
  void set_leader_status(const std::string& lease_name, bool leading);

  // Prometheus text exposition format 0.0.4.
  std::string render() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubex::kube
