// The GPU model's Prometheus exporter: the samples rendered by api::render_gpu_series (text exposition format
// 0.0.4, the metric names of Kubex's gpu-process-exporter), served over plain HTTP (GET /metrics, GET /healthz).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/gpu_series.h"
#include "common/result.h"

namespace kubex::sim::gpu {

using api::kMetricsContentType;

// The text rendering and label escaping are api/gpu_series.h's (render_gpu_series, escape_label_value), shared
// with `kubex gpu-exporter`.

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
