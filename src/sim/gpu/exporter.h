// The GPU model's Prometheus exporter: text exposition format 0.0.4 of the samples, with the metric names
// of Kubex's gpu-process-exporter, served over plain HTTP (GET /metrics, GET /healthz).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "sim/gpu/sample.h"

namespace kubex::sim::gpu {

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Every metric family with HELP and TYPE lines (also when there are no samples), one series per sample,
// in the order of `samples`.
std::string render_text(const std::vector<Sample>& samples);

// Escapes a label value (backslash, double quote, newline) for the text format.
std::string escape_label_value(const std::string& v);

class MetricsServer {
 public:
  // `render` produces the /metrics body; it is called on the server's worker threads.
  explicit MetricsServer(std::function<std::string()> render);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds HOST:PORT (port 0 picks a free one; "[::1]:0" for IPv6) and serves on a thread. Returns the port.
  common::Result<int> listen(const std::string& host_port);
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubex::sim::gpu
