// A whole kubex-sim: the HTTPS API server (with optional persistence) and the simulated cluster, started
// together and stopped together. `kubex-sim serve` and `kubex-sim demo` both run one.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/result.h"
#include "sim/cluster/config.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim {
class ApiServer;
class FaultInjector;
class HttpServer;
class Persistence;
}  // namespace kubex::sim

namespace kubex::sim::cluster {

class Cluster;
class StoreIo;

struct InstanceOptions {
  std::string host = "127.0.0.1";
  int port = 0;            // 0 picks a free port
  std::string kubeconfig;  // "" = <data-dir>/kubeconfig, else a temp dir
  std::string data_dir;
  std::map<std::string, std::string> service_map;  // ns/name -> HOST:PORT
  std::size_t watch_cache_size = 10000;
  ClusterConfig cluster = ClusterConfig::defaults();
  std::string metrics_listen = "127.0.0.1:0";  // "" = no GPU exporter
  bool no_cluster = false;
  std::shared_ptr<FaultInjector> faults;  // SIM-8 `--faults`: injected API faults (null: none)
};

class Instance {
 public:
  // Binds, writes the kubeconfig, starts the API server (on its own thread) and the cluster. Errors name the
  // failing step. `make_gpu` builds the cluster's GPU usage model (gpu::make_gpu_model).
  static common::Result<std::unique_ptr<Instance>> start(const InstanceOptions& options,
                                                         const GpuPartFactory& make_gpu);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  const std::string& url() const { return url_; }  // https://HOST:PORT
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& metrics_url() const { return metrics_url_; }  // http://HOST:PORT/metrics, or ""
  ApiServer& api() { return *api_; }
  Cluster* cluster() { return cluster_.get(); }  // null with no_cluster

  // Stops accepting requests, then stops the cluster and the API server. Idempotent.
  void stop();

 private:
  Instance() = default;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<Persistence> persistence_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<StoreIo> io_;
  std::unique_ptr<Cluster> cluster_;
  std::thread serving_;
  std::string url_, kubeconfig_, metrics_url_;
  bool stopped_ = false;
};

}  // namespace kubex::sim::cluster
