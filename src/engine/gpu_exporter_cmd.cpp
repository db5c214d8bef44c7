#include "engine/gpu_exporter_cmd.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <ostream>

#include "common/duration.h"
#include "common/log.h"
#include "engine/command_client.h"
#include "kube/runtime/http_endpoints.h"
#include "kube/runtime/signals.h"
#include "telemetry/exporter.h"
#include "telemetry/node_pods.h"

namespace kubex::engine {

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

int usage(std::ostream& err, const std::string& message) {
  err << "kubex gpu-exporter: " << message << "\nRun 'kubex gpu-exporter --help' for usage.\n";
  return kExitUsage;
}

}  // namespace

int run_gpu_exporter(GpuExporterOptions options, std::ostream& err) {
  kube::block_termination_signals();
  if (options.node_name.empty()) {
    if (const char* env = std::getenv("NODE_NAME")) options.node_name = env;
  }
  if (options.node_name.empty()) return usage(err, "--node-name: required (or set $NODE_NAME)");
  auto interval = common::parse_go_duration(options.interval);
  if (!interval || *interval < std::chrono::milliseconds(100)) {
    return usage(err, "--interval: " + (interval ? std::string("must be at least 100ms") : interval.error().str()));
  }
  if (auto bind = kube::parse_bind_address(options.listen); !bind || bind->disabled) {
    return usage(err, "--listen: " + (bind ? std::string("must be an address, not 0") : bind.error().str()));
  }
  common::LogLevel level;
  if (!common::parse_log_level(options.log_level, level)) {
    return usage(err, "--log-level: must be debug, info, warn, error or off, not \"" + options.log_level + "\"");
  }
  common::set_log_level(level);
  common::Logger log("gpu-exporter");

  // TEL-1: without NVML, one line and a non-zero exit.
  auto nvml = telemetry::load_nvml(options.nvml_library);
  if (!nvml) {
    err << "kubex gpu-exporter: " << nvml.error().str() << "\n";
    return kExitFailed;
  }
  auto client = command_client(options.kubeconfig, options.context);
  if (!client) {
    err << "kubex gpu-exporter: " << client.error().str() << "\n";
    return kExitFailed;
  }
  telemetry::NodePods pods(*client, options.node_name);
  pods.start();
  telemetry::Exporter exporter(std::move(*nvml), [&pods] { return pods.containers(); },
                               {options.node_name, options.proc_root});

  kube::HttpEndpoints::Options http;
  http.metrics_bind = options.listen;
  http.health_bind = "0";
  http.render_metrics = [&exporter] { return exporter.render(); };
  auto endpoints = kube::HttpEndpoints::start(http);
  if (!endpoints) {
    err << "kubex gpu-exporter: " << endpoints.error().str() << "\n";
    return kExitFailed;
  }
  log.info("serving", {{"listen", options.listen},
                       {"port", std::to_string((*endpoints)->metrics_port())},
                       {"node", options.node_name},
                       {"driver", exporter.driver_version()},
                       {"interval", options.interval}});

  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  kube::SignalWatcher signals([&](int) {
    std::lock_guard lock(mu);
    stopping = true;
    cv.notify_all();
  });
  bool logged_sync = false;
  for (;;) {
    // The pods must be known before a process can be attributed; until then a pass would count every process as
    // unknown-pod, so it waits for the first LIST.
    if (pods.synced()) {
      if (!logged_sync) {
        log.info("pods synced", {{"pods", std::to_string(pods.pods())}});
        logged_sync = true;
      }
      exporter.sample(std::chrono::system_clock::now());
    }
    std::unique_lock lock(mu);
    if (cv.wait_for(lock, *interval, [&] { return stopping; })) break;
  }
  log.info("stopping");
  (*endpoints)->stop();
  pods.stop();
  return 0;
}

}  // namespace kubex::engine
