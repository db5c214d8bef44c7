#include "sim/cluster/instance.h"

#include <unistd.h>

#include <filesystem>

#include "sim/apiserver/api_server.h"
#include "sim/apiserver/credentials.h"
#include "sim/apiserver/http_server.h"
#include "sim/apiserver/persistence.h"
#include "sim/cluster/cluster.h"
#include "sim/cluster/cluster_io.h"
#include "sim/cluster/sched_admission.h"

namespace kubex::sim::cluster {

common::Result<std::unique_ptr<Instance>> Instance::start(const InstanceOptions& o,
                                                           const GpuPartFactory& make_gpu) {
  HttpServerOptions http;
  http.host = o.host;
  http.port = o.port;
  http.faults = o.faults;
  ApiServerOptions api_opts;
  api_opts.watch_window = o.watch_cache_size;
  api_opts.service_map = o.service_map;
  auto creds = load_or_create_credentials(o.data_dir);
  if (!creds) return std::unexpected(creds.error());

  std::unique_ptr<Instance> in(new Instance());
  in->api_ = std::make_unique<ApiServer>(api_opts);
  std::size_t restored = 0;
  if (!o.data_dir.empty()) {
    in->persistence_ = std::make_unique<Persistence>(o.data_dir);
    auto r = in->persistence_->open(*in->api_);
    if (!r) return std::unexpected(r.error());
    restored = *r;
  }
  in->server_ = std::make_unique<HttpServer>(*in->api_, *creds, http);
  auto port = in->server_->bind();
  if (!port) return std::unexpected(port.error());
  in->url_ = "https://" + http.host + ":" + std::to_string(*port);
  in->api_->set_external_address(http.host + ":" + std::to_string(*port));
  in->kubeconfig_ = o.kubeconfig;
  if (in->kubeconfig_.empty()) {
    in->kubeconfig_ = o.data_dir.empty() ? (std::filesystem::temp_directory_path() /
                                            ("kubex-sim-" + std::to_string(::getpid())) / "kubeconfig")
                                               .string()
                                         : (std::filesystem::path(o.data_dir) / "kubeconfig").string();
  }
  if (auto w = write_kubeconfig(in->kubeconfig_, in->url_, *creds); !w) return std::unexpected(w.error());
  in->api_->bootstrap(restored > 0);
  in->api_->start();
  if (!o.no_cluster) {
    sched::register_kai_admission(*in->api_);  // serve's stand-in for KAI's admission webhook
    in->io_ = std::make_unique<StoreIo>(*in->api_);
    in->cluster_ = std::make_unique<Cluster>(*in->io_, o.cluster, make_gpu, Front::serve());
    auto mport = in->cluster_->start(o.metrics_listen);
    if (!mport) {
      in->stop();
      return std::unexpected(mport.error());
    }
    if (*mport > 0) {
      auto mcolon = o.metrics_listen.rfind(':');
      in->metrics_url_ =
          "http://" + o.metrics_listen.substr(0, mcolon) + ":" + std::to_string(*mport) + "/metrics";
    }
  }
  HttpServer* server = in->server_.get();
  in->serving_ = std::thread([server] { server->serve(); });
  return in;
}

Instance::~Instance() {
  stop();
}

void Instance::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (api_) api_->begin_shutdown();
  if (server_) server_->stop();
  if (serving_.joinable()) serving_.join();
  if (cluster_) cluster_->stop();
  if (api_) api_->stop();
}

}  // namespace kubex::sim::cluster
