#include "sim/agent/agent.h"

#include <pthread.h>
#include <signal.h>

#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"
#include "sim/agent/rest_io.h"
#include "sim/cluster/cluster.h"
#include "sim/cluster/node_objects.h"
#include "sim/gpu/gpu_model.h"

namespace kubex::sim::agent {

namespace {

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "kubex-sim agent: %s\n", message.c_str());
  return code;
}

}  // namespace

int run_agent(const AgentOptions& o) {
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t termination;
  sigemptyset(&termination);
  sigaddset(&termination, SIGINT);
  sigaddset(&termination, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &termination, nullptr);
  common::set_log_output(stderr);
  common::LogLevel level;
  if (!common::parse_log_level(o.log_level, level)) return fail(2, "invalid --log-level " + o.log_level);
  common::set_log_level(level);
  if (o.name.empty()) return fail(2, "--name must not be empty");

  cluster::ClusterConfig config = cluster::ClusterConfig::defaults();
  if (!o.config.empty()) {
    auto loaded = cluster::ClusterConfig::load(o.config);
    if (!loaded) return fail(2, "invalid --config: " + loaded.error().str());
    config = std::move(*loaded);
  }
  if (auto k = cluster::apply_kai_flags(config, o.kai_version, o.gpu_sharing_mode); !k) {
    return fail(2, k.error().str());
  }
  auto conn = kube::resolve_connection(o.kubeconfig, o.context);
  if (!conn) return fail(2, conn.error().str());
  kube::ClientOptions copts;
  copts.qps = 50;
  copts.burst = 100;
  copts.user_agent = "kubex-sim-agent/0.1";
  auto client = kube::Client::create(*conn, copts);
  if (!client) return fail(1, client.error().str());
  if (auto p = (*client)->probe(); !p) return fail(1, "cannot reach the API server: " + p.error().str());
  common::Logger log("kubex-sim.agent");
  const bool external_kai = o.kai_scheduler == "external";
  if (auto crd = (*client)->get("/apis/scheduling.run.ai/v2"); !crd && external_kai) {
    log.warn("the cluster serves no scheduling.run.ai/v2 Queue: KAI-Scheduler is not installed, and with "
             "--kai-scheduler external nothing places pods of kai-scheduler",
             {{"error", crd.error().str()}});
  } else if (!crd) {
    log.warn("the cluster serves no scheduling.run.ai/v2 Queue: pods of kai-scheduler stay Pending until KAI's "
             "CRDs are installed (`kubex-sim crds | kubectl apply -f -` installs the ones kubex-sim knows)",
             {{"error", crd.error().str()}});
  }

  RestIo io(*client, o.name);
  cluster::Cluster sim(io, config, gpu::make_gpu_model, cluster::Front::agent(o.name, external_kai));
  auto port = sim.start(o.metrics_listen);
  if (!port) {
    sim.stop();
    return fail(1, port.error().str());
  }
  std::string metrics;
  if (*port > 0) {
    metrics = "http://" + o.metrics_listen.substr(0, o.metrics_listen.rfind(':')) + ":" + std::to_string(*port) +
              "/metrics";
  }
  std::size_t nodes = cluster::node_specs(config).size();
  std::printf("kubex-sim agent ready server=%s nodes=%zu label=%s=%s kai-scheduler=%s%s%s\n", conn->server.c_str(),
              nodes, cluster::kNodeAgentLabel, o.name.c_str(), o.kai_scheduler.c_str(),
              metrics.empty() ? "" : " metrics=", metrics.c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&termination, &sig);
  log.info("stopping: node heartbeats end, the nodes go NotReady", {{"signal", sig}});
  sim.stop();
  if (o.delete_nodes_on_exit) {
    if (auto d = sim.delete_nodes(); !d) return fail(1, d.error().str());
    log.info("deleted the agent's nodes", {{"nodes", nodes}});
  }
  return 0;
}

}  // namespace kubex::sim::agent
