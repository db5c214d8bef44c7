// kubex: the automation engine and operator tools (DESIGN §1, SPEC §13a). CLI11 is included here only.
//
// Mistakes in the command line itself (an unknown command or flag, a missing or malformed value) are printed as
// plain text on stderr and exit 2 (CLI-3's "bad usage"); everything the engine reports once running, including
// flag combinations it cannot serve, is its JSON log on stdout (OBS-4).
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "common/duration.h"
#include "common/log.h"
#include "engine/build_info.h"
#include "engine/engine.h"
#include "engine/explain_cmd.h"
#include "engine/gpu_exporter_cmd.h"
#include "engine/plan_cmd.h"
#include "engine/plan_sizing_cmd.h"
#include "engine/report_cmd.h"
#include "engine/validate_cmd.h"

namespace {

constexpr int kExitUsage = 2;

// A usage error: one plain line naming the command, and where to get help.
int usage_error(const std::string& command, const std::string& message) {
  std::cerr << command << ": " << message << "\nRun '" << command << " --help' for usage.\n";
  return kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  using kubex::engine::EngineOptions;
  CLI::App app{"kubex: GPU rightsizing automation for Kubernetes"};
  app.set_version_flag("--version", kubex::engine::version_text(), "Print the version, git commit and build date");
  app.require_subcommand(1);
  EngineOptions eo;
  eo.ns = kubex::engine::default_namespace();
  auto* engine = app.add_subcommand(
      "engine", "Run the automation engine (controllers, webhooks, metrics, leader election)");
  engine->add_option("--kubeconfig", eo.kubeconfig,
                     "Path to a kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)");
  engine->add_option("--context", eo.context, "Kubeconfig context to use (default: current-context)");
  engine->add_option("--namespace", eo.ns, "The engine's namespace (holds the leader-election Lease)")
      ->capture_default_str();
  engine
      ->add_flag("--leader-elect", eo.leader_elect,
                 "Elect a leader with a Lease before running controllers (--leader-elect=false to disable)")
      ->capture_default_str();
  engine->add_option("--metrics-bind-address", eo.metrics_bind, "Address of /metrics (\"0\" disables it)")
      ->capture_default_str();
  engine->add_option("--health-probe-bind-address", eo.health_bind, "Address of /healthz and /readyz")
      ->capture_default_str();
  engine->add_option("--webhook-bind-address", eo.webhook_bind, "Address of the HTTPS admission webhooks")
      ->capture_default_str();
  engine->add_option("--webhook-port", eo.webhook_port,
                     "Port of the HTTPS admission webhooks, replacing the port of --webhook-bind-address (the Helm "
                     "chart's webhook.port)");
  engine->add_option("--cert-dir", eo.cert_dir,
                     "Directory with the webhook's tls.crt and tls.key (reloaded on change)");
  engine->add_flag("--self-signed-webhook", eo.self_signed_webhook,
                   "Generate a CA and webhook serving certificate in memory and patch caBundle");
  engine->add_flag("--register-webhooks", eo.register_webhooks,
                   "Create or update the engine's webhook configurations (url = --webhook-bind-address)");
  engine->add_flag("--early-webhook-enabled", eo.early_webhook_enabled,
                   "Also register the early pod mutation pass (000-...; required for KAI)");
  engine->add_flag("--kai-queues", eo.kai_queues,
                   "Create the built-in KAI queues kubex-parent-queue and kubex-unlimited-gpu-queue when missing");
  // Test-only: the QUE-1 check interval (a Go duration, at least 1s). Hidden from --help.
  std::string queues_interval = "5m";
  engine->add_option("--kai-queues-check-interval", queues_interval, "")->group("");
  // Test-only: the REA-1 cycle interval instead of global-config's gpuReactiveCheckInterval. Hidden.
  std::string reactive_interval;
  engine->add_option("--reactive-check-interval", reactive_interval, "")->group("");
  // Test-only: how long a consolidation drain may take before DrainBlocked (CON-8: 10m). Hidden.
  std::string drain_timeout;
  engine->add_option("--consolidation-drain-timeout", drain_timeout, "")->group("");
  engine->add_option("--prometheus-bearer-token-file", eo.prometheus_bearer_token_file,
                     "File holding the bearer token sent to Prometheus (re-read when it changes)");
  engine->add_option("--prometheus-ca-file", eo.prometheus_ca_file,
                     "PEM CA bundle that verifies an https Prometheus URL (default: the system's)");
  engine->add_option("--global-config-name", eo.global_config_name, "Name of the GlobalConfiguration singleton")
      ->capture_default_str();
  engine->add_option("--policy-evaluation-name", eo.policy_evaluation_name,
                     "Name of the PolicyEvaluation singleton")
      ->capture_default_str();
  engine->add_option("--log-level", eo.log_level, "debug, info, warn or error")->capture_default_str();
  engine->add_flag("--dry-run", eo.dry_run, "Compute and report changes without writing them")
      ->capture_default_str();
  kubex::engine::ValidateOptions vo;
  auto* validate = app.add_subcommand(
      "validate",
      "Validate rightsizing.kubex.ai manifests offline with the webhook's rules (exit 0 valid, 1 invalid, 2 "
      "usage/IO error)");
  validate
      ->add_option("-f,--filename", vo.files,
                   "A file, a directory (its .yaml/.yml/.json files) or - for stdin")
      ->required()
      ->take_all();
  validate->add_option("-o,--output", vo.output, "text (lines on stderr) or json (a report on stdout)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  std::string version_output = "text";
  auto* version = app.add_subcommand("version", "Print the version, git commit and build date");
  version->add_option("-o,--output", version_output, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  // CLI-2: kubex plan consolidation (src/engine/plan_cmd.h).
  kubex::engine::PlanOptions po;
  auto* plan = app.add_subcommand(
      "plan", "Read-only what-if plans: consolidation (the GPU nodes a policy would drain), sizing (a reactive policy "
              "replayed on your Prometheus history)");
  plan->require_subcommand(1);
  auto* plan_consolidation = plan->add_subcommand(
      "consolidation", "Which GPU nodes each GpuConsolidationPolicy would drain, and the GPUs freed (read-only)");
  plan_consolidation->add_option("--kubeconfig", po.kubeconfig,
                                 "Path to a kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)");
  plan_consolidation->add_option("--context", po.context, "Kubeconfig context to use (default: current-context)");
  auto* plan_policy =
      plan_consolidation->add_option("--policy", po.policy, "Plan this GpuConsolidationPolicy (default: all)");
  plan_consolidation->add_option("-f,--filename", po.file, "Plan the GpuConsolidationPolicy of a manifest (- for stdin)")
      ->excludes(plan_policy);
  plan_consolidation->add_option("-o,--output", po.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  plan_consolidation->add_option("--global-config-name", po.global_config_name,
                                 "Name of the GlobalConfiguration singleton")
      ->capture_default_str();
  // Issue 36: kubex plan sizing (src/engine/plan_sizing_cmd.h).
  kubex::engine::PlanSizingOptions so;
  auto* plan_sizing = plan->add_subcommand(
      "sizing",
      "Replay a GPU reactive policy on your Prometheus history: GPUs it would have held, saved, samples above the "
      "allocation, resizes per day (read-only)");
  plan_sizing->add_option("--policy", so.policy,
                          "A GpuReactivePolicy/ClusterGpuReactivePolicy of the cluster (NAME, or NAMESPACE/NAME), or "
                          "a manifest FILE (- for stdin) holding one with its strategy (default: every reactive "
                          "policy of the cluster)");
  plan_sizing->add_option("--since", so.since, "How much history to replay (7d, 24h, 90m)")->capture_default_str();
  plan_sizing->add_option("-o,--output", so.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  plan_sizing->add_option("--kubeconfig", so.kubeconfig,
                          "Path to a kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)");
  plan_sizing->add_option("--context", so.context, "Kubeconfig context to use (default: current-context)");
  plan_sizing->add_option("--global-config-name", so.global_config_name, "Name of the GlobalConfiguration singleton")
      ->capture_default_str();
  plan_sizing->add_option("--policy-evaluation-name", so.policy_evaluation_name,
                          "Name of the PolicyEvaluation singleton")
      ->capture_default_str();
  plan_sizing->add_option("--prometheus-url", so.prometheus_url,
                          "Prometheus holding the history (default: global-config's spec.prometheus.url)");
  plan_sizing->add_option("--prometheus-bearer-token-file", so.prometheus_bearer_token_file,
                          "File holding the bearer token sent to Prometheus");
  plan_sizing->add_option("--prometheus-ca-file", so.prometheus_ca_file,
                          "PEM CA bundle that verifies an https Prometheus URL");
  // TEL-1: kubex gpu-exporter (src/engine/gpu_exporter_cmd.h).
  kubex::engine::GpuExporterOptions go;
  auto* gpu_exporter = app.add_subcommand(
      "gpu-exporter",
      "Serve per-container GPU use read from NVML on this node (a DaemonSet on GPU nodes): the kubex_gpu_container_* "
      "series the reactive and history policies read");
  gpu_exporter->add_option("--nvml-library", go.nvml_library, "NVML shared library, loaded at run time with dlopen")
      ->capture_default_str();
  gpu_exporter->add_option("--proc-root", go.proc_root, "The host's /proc (each GPU process's cgroup names its container)")
      ->capture_default_str();
  gpu_exporter->add_option("--node-name", go.node_name, "This node's name: its pods are watched (default: $NODE_NAME)");
  gpu_exporter->add_option("--kubeconfig", go.kubeconfig,
                           "Path to a kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)");
  gpu_exporter->add_option("--context", go.context, "Kubeconfig context to use (default: current-context)");
  gpu_exporter->add_option("--listen", go.listen, "Address of GET /metrics")->capture_default_str();
  gpu_exporter->add_option("--interval", go.interval, "How often NVML is sampled")->capture_default_str();
  gpu_exporter->add_option("--log-level", go.log_level, "debug, info, warn, error or off")->capture_default_str();
  // CLI-1: kubex explain (src/engine/explain_cmd.h).
  kubex::engine::ExplainOptions xo;
  auto* explain = app.add_subcommand(
      "explain", "Why kubex does what it does to a pod or workload: policies, values, reactive rules, evictions");
  explain->add_option("kind", xo.kind, "pod, deployment, statefulset, daemonset, job, cronjob, rollout, model, …")
      ->required();
  explain->add_option("name", xo.target, "<namespace>/<name> (or <name> with -n)")->required();
  explain->add_option("-n,--namespace", xo.ns, "Namespace of the object when NAME has none");
  explain->add_option("--kubeconfig", xo.kubeconfig,
                      "Path to a kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)");
  explain->add_option("--context", xo.context, "Kubeconfig context to use (default: current-context)");
  explain->add_option("-o,--output", xo.output, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  explain->add_option("--global-config-name", xo.global_config_name, "Name of the GlobalConfiguration singleton")
      ->capture_default_str();
  explain->add_option("--policy-evaluation-name", xo.policy_evaluation_name,
                      "Name of the PolicyEvaluation singleton")
      ->capture_default_str();
  explain->add_option("--prometheus-url", xo.prometheus_url,
                      "Prometheus to query for reactive samples (default: global-config's spec.prometheus.url)");
  explain->add_option("--prometheus-bearer-token-file", xo.prometheus_bearer_token_file,
                      "File holding the bearer token sent to Prometheus");
  explain->add_option("--prometheus-ca-file", xo.prometheus_ca_file,
                      "PEM CA bundle that verifies an https Prometheus URL");
  // CLI-4 / RPT-1: kubex report (src/engine/report_cmd.h).
  kubex::engine::ReportOptions ro;
  auto* report = app.add_subcommand(
      "report", "GPUs as written vs held, idle workloads, cost and reclaimable GPUs per namespace (read-only)");
  report->add_option("--since", ro.since, "Window of the usage, GPU-hours and cost (24h, 90m, 7d)")
      ->capture_default_str();
  // RPT-1: -o/--output is the format, as in every other kubex and kubectl command; the file is --output-file.
  report->add_option("-o,--output", ro.output, "Format: table, json or html")
      ->check(CLI::IsMember({"table", "json", "html"}))
      ->capture_default_str();
  report->add_option("--output-file", ro.output_file, "Write the report to FILE instead of stdout");
  report->add_option("--kubeconfig", ro.kubeconfig,
                     "Path to a kubeconfig (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)");
  report->add_option("--context", ro.context, "Kubeconfig context to use (default: current-context)");
  report->add_option("--global-config-name", ro.global_config_name, "Name of the GlobalConfiguration singleton")
      ->capture_default_str();
  report->add_option("--policy-evaluation-name", ro.policy_evaluation_name, "Name of the PolicyEvaluation singleton")
      ->capture_default_str();
  report->add_option("--prometheus-url", ro.prometheus_url,
                     "Prometheus to query for usage (default: global-config's spec.prometheus.url)");
  report->add_option("--prometheus-bearer-token-file", ro.prometheus_bearer_token_file,
                     "File holding the bearer token sent to Prometheus");
  report->add_option("--prometheus-ca-file", ro.prometheus_ca_file,
                     "PEM CA bundle that verifies an https Prometheus URL");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (app.get_subcommands().empty()) {  // CLI11 would only say "A subcommand is required"
      auto rest = app.remaining();
      return usage_error("kubex", (rest.empty() ? std::string("a command is required")
                                                : "unknown command or flag \"" + rest.front() + "\"") +
                                      " (commands: engine, validate, plan, explain, report, version)");
    }
    // The deepest command parsed so far ("kubex plan sizing"), so the hint names the right --help.
    std::string command = "kubex";
    for (const CLI::App* level = &app; !level->get_subcommands().empty();) {
      level = level->get_subcommands().front();
      command += " " + level->get_name();
    }
    return usage_error(command, e.what());
  }
  if (version->parsed()) {
    if (version_output == "json") {
      nlohmann::json doc = {{"apiVersion", "cli.kubex.ai/v1alpha1"}, {"kind", "Version"}};
      doc.update(kubex::engine::build_info_fields());
      std::cout << doc.dump(2) << "\n";
    } else {
      std::cout << kubex::engine::version_text() << "\n";
    }
    return 0;
  }
  if (engine->parsed()) {
    auto interval = kubex::common::parse_go_duration(queues_interval);
    if (!interval || *interval < std::chrono::seconds(1)) {
      return usage_error("kubex engine", "--kai-queues-check-interval: " +
                                             (interval ? std::string("must be at least 1s") : interval.error().str()));
    }
    eo.kai_queues_check_interval = *interval;
    if (!reactive_interval.empty()) {
      auto ri = kubex::common::parse_go_duration(reactive_interval);
      if (!ri || *ri < std::chrono::seconds(1)) {
        return usage_error("kubex engine", "--reactive-check-interval: " +
                                               (ri ? std::string("must be at least 1s") : ri.error().str()));
      }
      eo.reactive_check_interval = *ri;
    }
    if (!drain_timeout.empty()) {
      auto dt = kubex::common::parse_go_duration(drain_timeout);
      if (!dt || *dt < std::chrono::seconds(1)) {
        return usage_error("kubex engine", "--consolidation-drain-timeout: " +
                                               (dt ? std::string("must be at least 1s") : dt.error().str()));
      }
      eo.consolidation_drain_timeout = *dt;
    }
    kubex::common::LogLevel level;
    if (!kubex::common::parse_log_level(eo.log_level, level)) {
      return usage_error("kubex engine", "--log-level: must be debug, info, warn, error or off, not \"" +
                                             eo.log_level + "\"");
    }
    kubex::common::set_log_level(level);
    // The engine's first log line says which build is running (ENG-3).
    kubex::common::Logger("engine").info("kubex engine " + kubex::engine::build_info().version,
                                         kubex::engine::build_info_fields());
    return kubex::engine::run_engine(eo);
  }
  if (validate->parsed()) return kubex::engine::run_validate(vo, std::cin, std::cout, std::cerr);
  if (plan_consolidation->parsed())
    return kubex::engine::run_plan_consolidation(po, std::cin, std::cout, std::cerr);
  if (plan_sizing->parsed()) return kubex::engine::run_plan_sizing(so, std::cin, std::cout, std::cerr);
  if (gpu_exporter->parsed()) return kubex::engine::run_gpu_exporter(go, std::cerr);
  if (explain->parsed()) return kubex::engine::run_explain(xo, std::cout, std::cerr);
  if (report->parsed()) return kubex::engine::run_report(ro, std::cout, std::cerr);
  return 0;
}
