// kubex-sim: a simulated GPU cluster that speaks the Kubernetes REST API.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "common/log.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/credentials.h"
#include "sim/apiserver/http_server.h"
#include "sim/apiserver/persistence.h"
#include "sim/cluster/cluster.h"

namespace {

// Blocks SIGINT/SIGTERM in every thread; a dedicated thread waits for them and shuts the server down.
sigset_t block_termination_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

struct ServeOptions {
  std::string listen = "127.0.0.1:0";
  std::string kubeconfig;
  std::string data_dir;
  std::vector<std::string> service_map;
  std::size_t watch_cache_size = 10000;
  std::string log_level = "info";
  std::string config;
  std::string metrics_listen = "127.0.0.1:0";
  bool no_cluster = false;
};

int serve(const ServeOptions& o) {
  using namespace kubex;
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t termination = block_termination_signals();
  common::set_log_output(stderr);
  common::LogLevel level;
  if (!common::parse_log_level(o.log_level, level)) {
    std::fprintf(stderr, "kubex-sim: invalid --log-level %s\n", o.log_level.c_str());
    return 2;
  }
  common::set_log_level(level);
  auto colon = o.listen.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "kubex-sim: --listen must be HOST:PORT, got %s\n", o.listen.c_str());
    return 2;
  }
  sim::HttpServerOptions http;
  http.host = o.listen.substr(0, colon);
  try {
    http.port = std::stoi(o.listen.substr(colon + 1));
  } catch (...) {
    std::fprintf(stderr, "kubex-sim: invalid port in --listen %s\n", o.listen.c_str());
    return 2;
  }
  sim::ApiServerOptions api_opts;
  api_opts.watch_window = o.watch_cache_size;
  for (const auto& m : o.service_map) {
    auto eq = m.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "kubex-sim: --service-map expects ns/name=HOST:PORT, got %s\n", m.c_str());
      return 2;
    }
    api_opts.service_map[m.substr(0, eq)] = m.substr(eq + 1);
  }
  auto cluster_config = o.config.empty() ? sim::cluster::ClusterConfig::defaults()
                                         : sim::cluster::ClusterConfig::load(o.config);
  if (!cluster_config) {
    std::fprintf(stderr, "kubex-sim: invalid --config: %s\n", cluster_config.error().str().c_str());
    return 2;
  }
  auto creds = sim::load_or_create_credentials(o.data_dir);
  if (!creds) {
    std::fprintf(stderr, "kubex-sim: %s\n", creds.error().str().c_str());
    return 1;
  }
  sim::ApiServer api(api_opts);
  std::unique_ptr<sim::Persistence> persistence;
  std::size_t restored = 0;
  if (!o.data_dir.empty()) {
    persistence = std::make_unique<sim::Persistence>(o.data_dir);
    auto r = persistence->open(api);
    if (!r) {
      std::fprintf(stderr, "kubex-sim: %s\n", r.error().str().c_str());
      return 1;
    }
    restored = *r;
  }
  sim::HttpServer server(api, *creds, http);
  auto port = server.bind();
  if (!port) {
    std::fprintf(stderr, "kubex-sim: %s\n", port.error().str().c_str());
    return 1;
  }
  std::string url = "https://" + http.host + ":" + std::to_string(*port);
  api.set_external_address(http.host + ":" + std::to_string(*port));
  std::string kubeconfig = o.kubeconfig;
  if (kubeconfig.empty()) {
    kubeconfig = o.data_dir.empty() ? (std::filesystem::temp_directory_path() /
                                       ("kubex-sim-" + std::to_string(::getpid())) / "kubeconfig")
                                          .string()
                                    : (std::filesystem::path(o.data_dir) / "kubeconfig").string();
  }
  if (auto w = sim::write_kubeconfig(kubeconfig, url, *creds); !w) {
    std::fprintf(stderr, "kubex-sim: %s\n", w.error().str().c_str());
    return 1;
  }
  api.bootstrap(restored > 0);
  api.start();
  std::unique_ptr<sim::cluster::Cluster> cluster;
  std::string metrics_url;
  if (!o.no_cluster) {
    cluster = std::make_unique<sim::cluster::Cluster>(api, *cluster_config);
    auto mport = cluster->start(o.metrics_listen);
    if (!mport) {
      std::fprintf(stderr, "kubex-sim: %s\n", mport.error().str().c_str());
      return 1;
    }
    if (*mport > 0) {
      auto mcolon = o.metrics_listen.rfind(':');
      metrics_url = "http://" + o.metrics_listen.substr(0, mcolon) + ":" + std::to_string(*mport) + "/metrics";
    }
  }
  std::thread signals([&] {
    int sig = 0;
    sigwait(&termination, &sig);
    if (sig == 0) return;
    api.begin_shutdown();
    server.stop();
  });
  std::printf("kubex-sim ready url=%s kubeconfig=%s%s%s\n", url.c_str(), kubeconfig.c_str(),
              metrics_url.empty() ? "" : " metrics=", metrics_url.c_str());
  std::fflush(stdout);
  server.serve();
  if (cluster) cluster->stop();
  api.stop();
  pthread_kill(signals.native_handle(), SIGTERM);  // no-op when the thread already returned
  signals.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kubex-sim: a simulated GPU cluster speaking the Kubernetes API"};
  app.require_subcommand(1);
  ServeOptions so;
  auto* serve_cmd = app.add_subcommand("serve", "Run the simulated cluster's API server");
  serve_cmd->add_option("--listen", so.listen, "HOST:PORT to listen on (port 0 picks a free port)");
  serve_cmd->add_option("--kubeconfig", so.kubeconfig, "Where to write the kubeconfig");
  serve_cmd->add_option("--data-dir", so.data_dir, "Keep credentials and objects here across restarts");
  serve_cmd->add_option("--service-map", so.service_map,
                        "Resolve a Service for webhook calls: ns/name=HOST:PORT (repeatable)");
  serve_cmd->add_option("--watch-cache-size", so.watch_cache_size,
                        "Events kept per resource for WATCH; older resourceVersions get 410 Gone");
  serve_cmd->add_option("--log-level", so.log_level, "debug, info, warn or error");
  serve_cmd->add_option("--config", so.config, "Cluster configuration (YAML): node pools, kubelet timings, GPU isolation");
  serve_cmd->add_option("--metrics-listen", so.metrics_listen,
                        "HOST:PORT of the GPU metrics exporter (port 0 picks one; empty disables it)");
  serve_cmd->add_flag("--no-cluster", so.no_cluster, "Serve the API only: no nodes, controllers or schedulers");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (serve_cmd->parsed()) return serve(so);
  return 0;
}
