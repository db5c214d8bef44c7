// kubex-sim: a simulated GPU cluster that speaks the Kubernetes REST API.
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "common/file_io.h"
#include "common/log.h"
#include "common/yaml.h"
#include "sim/agent/agent.h"
#include "sim/apiserver/faults.h"
#include "sim/cluster/cluster.h"
#include "sim/cluster/instance.h"
#include "sim/cluster/trace_cluster.h"
#include "sim/demo/demo.h"
#include "sim/gpu/gpu_model.h"

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
  std::string kai_version, gpu_sharing_mode;  // "" = the --config file's, else the defaults (SIM-4)
  bool no_cluster = false;
  kubex::sim::cluster::TraceOptions trace;  // trace.dir empty: no trace
  std::string faults;  // SIM-8: a faults file; "" = the --config file's `faults`, else none
};

// SIM-8: the faults of --faults FILE, else of the --config file's `faults` key, else none (nullopt). An error names
// the file and the field.
kubex::common::Result<std::optional<kubex::sim::FaultConfig>> load_faults(const ServeOptions& o) {
  using namespace kubex;
  if (!o.faults.empty()) {
    auto f = sim::FaultConfig::load(o.faults);
    if (!f) return common::fail("invalid --faults: " + f.error().str());
    return std::optional(std::move(*f));
  }
  if (o.config.empty()) return std::optional<sim::FaultConfig>{};
  auto text = common::read_file(o.config);
  if (!text) return common::fail("invalid --config: " + text.error().str());
  auto doc = common::yaml_to_json(*text);
  if (!doc || !doc->is_object() || !doc->contains("faults")) return std::optional<sim::FaultConfig>{};
  auto f = sim::FaultConfig::parse((*doc)["faults"], "faults");
  if (!f) return common::fail("invalid --config: " + o.config + ": " + f.error().str());
  return std::optional(std::move(*f));
}

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
  sim::cluster::InstanceOptions io;
  auto colon = o.listen.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "kubex-sim: --listen must be HOST:PORT, got %s\n", o.listen.c_str());
    return 2;
  }
  io.host = o.listen.substr(0, colon);
  try {
    io.port = std::stoi(o.listen.substr(colon + 1));
  } catch (...) {
    std::fprintf(stderr, "kubex-sim: invalid port in --listen %s\n", o.listen.c_str());
    return 2;
  }
  io.kubeconfig = o.kubeconfig;
  io.data_dir = o.data_dir;
  io.watch_cache_size = o.watch_cache_size;
  io.metrics_listen = o.metrics_listen;
  io.no_cluster = o.no_cluster;
  for (const auto& m : o.service_map) {
    auto eq = m.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "kubex-sim: --service-map expects ns/name=HOST:PORT, got %s\n", m.c_str());
      return 2;
    }
    io.service_map[m.substr(0, eq)] = m.substr(eq + 1);
  }
  if (!o.config.empty()) {
    auto cluster_config = sim::cluster::ClusterConfig::load(o.config);
    if (!cluster_config) {
      std::fprintf(stderr, "kubex-sim: invalid --config: %s\n", cluster_config.error().str().c_str());
      return 2;
    }
    io.cluster = *cluster_config;
  }
  if (auto k = sim::cluster::apply_kai_flags(io.cluster, o.kai_version, o.gpu_sharing_mode); !k) {
    std::fprintf(stderr, "kubex-sim: %s\n", k.error().str().c_str());
    return 2;
  }
  auto faults = load_faults(o);
  if (!faults) {
    std::fprintf(stderr, "kubex-sim: %s\n", faults.error().str().c_str());
    return 2;
  }
  if (*faults) {
    io.faults = std::make_shared<sim::FaultInjector>(std::move(**faults));
    common::Logger("kubex-sim.faults")
        .info("fault injection on", {{"source", o.faults.empty() ? o.config + " (faults)" : o.faults},
                                     {"seed", io.faults->seed()},
                                     {"rules", io.faults->config().rules.size()}});
  }
  std::optional<sim::cluster::Trace> trace;
  if (!o.trace.dir.empty()) {
    auto t = sim::cluster::load_trace(o.trace);
    if (!t) {
      std::fprintf(stderr, "kubex-sim: invalid --trace: %s\n", t.error().str().c_str());
      return 2;
    }
    trace = std::move(*t);
    io.cluster.pools.clear();  // the trace's nodes replace the pools; the rest of --config still applies
    io.cluster.nodes = trace->nodes;
  }
  auto instance = sim::cluster::Instance::start(io, sim::gpu::make_gpu_model);
  if (!instance) {
    std::fprintf(stderr, "kubex-sim: %s\n", instance.error().str().c_str());
    return 1;
  }
  if (trace) {
    auto created = sim::cluster::create_trace_objects((*instance)->api(), trace->workloads.objects);
    if (!created) {
      std::fprintf(stderr, "kubex-sim: loading the trace: %s\n", created.error().str().c_str());
      (*instance)->stop();
      return 1;
    }
    common::Logger("trace").info("trace loaded", {{"dir", o.trace.dir},
                                                  {"nodes", trace->nodes.size()},
                                                  {"podsInFile", trace->workloads.pods_in_file},
                                                  {"phase", o.trace.phase},
                                                  {"deployments", trace->workloads.deployments},
                                                  {"created", *created}});
  }
  const auto& in = **instance;
  std::printf("kubex-sim ready url=%s kubeconfig=%s%s%s\n", in.url().c_str(), in.kubeconfig().c_str(),
              in.metrics_url().empty() ? "" : " metrics=", in.metrics_url().c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&termination, &sig);
  (*instance)->stop();
  return 0;
}

// --kai-version and --gpu-sharing-mode (SIM-4), the same for serve and agent; values are checked by
// apply_kai_flags so that the error names the flag and the supported values.
void add_kai_options(CLI::App* cmd, std::string& kai_version, std::string& gpu_sharing_mode) {
  cmd->add_option("--kai-version", kai_version,
                  "KAI-Scheduler version the simulated KAI follows: 0.17 or 0.18 (default: the --config file's "
                  "kaiVersion, else 0.18)");
  cmd->add_option("--gpu-sharing-mode", gpu_sharing_mode,
                  "KAI GPU sharing mode: Disabled, NonMemoryEnforced, HamiCore or NvFractions (default: the "
                  "--config file's gpuSharingMode, else from its memoryIsolation)");
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
  serve_cmd->add_option("--faults", so.faults,
                        "Inject API faults for tests (YAML: seed and rules of 429, 5xx, latency, watch cuts, 410; "
                        "see docs/kubex-sim.md). Default: none, or the --config file's faults");
  serve_cmd->add_option("--metrics-listen", so.metrics_listen,
                        "HOST:PORT of the GPU metrics exporter (port 0 picks one; empty disables it)");
  add_kai_options(serve_cmd, so.kai_version, so.gpu_sharing_mode);
  auto* no_cluster_flag = serve_cmd->add_flag("--no-cluster", so.no_cluster,
                                              "Serve the API only: no nodes, controllers or schedulers");
  auto* trace_opt = serve_cmd->add_option("--trace", so.trace.dir,
                                          "Build the cluster from an Alibaba cluster-trace-gpu-v2023 "
                                          "directory: its nodes, and one Deployment per pod");
  trace_opt->excludes(no_cluster_flag);
  serve_cmd
      ->add_option("--trace-nodes", so.trace.nodes_file,
                   "The trace's node list (a name without '/' is in DIR)")
      ->capture_default_str()
      ->needs(trace_opt);
  serve_cmd
      ->add_option("--trace-pods", so.trace.pods_file, "The trace's pod list (a name without '/' is in DIR)")
      ->capture_default_str()
      ->needs(trace_opt);
  serve_cmd
      ->add_option("--trace-phase", so.trace.phase,
                   "Keep the pods whose pod_phase is this; 'all' keeps every pod")
      ->capture_default_str()
      ->needs(trace_opt);
  kubex::sim::agent::AgentOptions ao;
  auto* agent_cmd = app.add_subcommand(
      "agent", "Run the simulated GPU nodes, kubelet, KAI-like scheduler and GPU exporter against any API server");
  agent_cmd->add_option("--kubeconfig", ao.kubeconfig,
                        "Kubeconfig of the cluster (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)");
  agent_cmd->add_option("--context", ao.context, "Kubeconfig context (default: its current-context)");
  agent_cmd->add_option("--config", ao.config, "Node pools, kubelet timings and GPU isolation (YAML, as for serve)");
  add_kai_options(agent_cmd, ao.kai_version, ao.gpu_sharing_mode);
  agent_cmd
      ->add_option("--kai-scheduler", ao.kai_scheduler,
                   "internal: the agent's KAI-like scheduler places kai-scheduler pods; external: the real "
                   "KAI-Scheduler does (its binder's reservation pods are run here, SIM-9)")
      ->check(CLI::IsMember({"internal", "external"}))
      ->capture_default_str();
  agent_cmd->add_option("--name", ao.name, "The agent's name: the sim.kubex.ai/agent label of the nodes it registers")
      ->capture_default_str();
  agent_cmd->add_option("--metrics-listen", ao.metrics_listen,
                        "HOST:PORT of the GPU metrics exporter (port 0 picks one; empty disables it)")
      ->capture_default_str();
  agent_cmd->add_option("--log-level", ao.log_level, "debug, info, warn or error")->capture_default_str();
  agent_cmd->add_flag("--delete-nodes-on-exit", ao.delete_nodes_on_exit,
                      "Delete the agent's nodes when it stops (by default they stay and go NotReady)");
  auto* crds_cmd = app.add_subcommand(
      "crds", "Print the CRDs of the kinds kubex-sim emulates (KAI's Queue, KubeAI's Model) for kubectl apply");
  kubex::sim::demo::DemoOptions dopt;
  int demo_timeout = static_cast<int>(dopt.timeout.count());
  auto* demo_cmd = app.add_subcommand(
      "demo", "Run kubex on a simulated GPU cluster: the guide's starter example, a live view and a report");
  demo_cmd->add_flag("--keep-running", dopt.keep_running,
                     "Leave the cluster, Prometheus and the engine running after the report (Ctrl-C stops them)");
  demo_cmd->add_option("--kubex", dopt.kubex_binary, "The kubex binary (default: the one next to kubex-sim)");
  demo_cmd->add_option("--prometheus", dopt.prometheus_binary, "The Prometheus server binary")->capture_default_str();
  demo_cmd->add_option("--work-dir", dopt.work_dir, "Where logs and data go (default: a new /tmp/kubex-demo-*)");
  demo_cmd->add_option("--timeout", demo_timeout, "Seconds to wait for the workloads to settle")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (serve_cmd->parsed()) return serve(so);
  if (agent_cmd->parsed()) return kubex::sim::agent::run_agent(ao);
  if (crds_cmd->parsed()) {
    std::printf("%s---\n%s", kubex::sim::cluster::queue_crd_yaml().c_str(),
                kubex::sim::cluster::model_crd_yaml().c_str());
    return 0;
  }
  if (demo_cmd->parsed()) {
    dopt.timeout = std::chrono::seconds(demo_timeout);
    return kubex::sim::demo::run_demo(dopt);
  }
  return 0;
}
