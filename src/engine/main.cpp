// kubex: the automation engine and operator tools (DESIGN §1). CLI11 is included here only.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "common/log.h"
#include "engine/engine.h"
#include "engine/validate_cmd.h"

int main(int argc, char** argv) {
  using kubex::engine::EngineOptions;
  CLI::App app{"kubex: GPU rightsizing automation for Kubernetes"};
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    kubex::common::Logger("kubex").error("invalid command line", {{"error", e.what()}});
    return 2;
  }
  if (engine->parsed()) {
    auto interval = kubex::common::parse_go_duration(queues_interval);
    if (!interval || *interval < std::chrono::seconds(1)) {
      kubex::common::Logger("kubex").error(
          "invalid flag", {{"flag", "--kai-queues-check-interval"},
                           {"value", queues_interval},
                           {"error", interval ? "must be at least 1s" : interval.error().str()}});
      return 2;
    }
    eo.kai_queues_check_interval = *interval;
    return kubex::engine::run_engine(eo);
  }
  if (validate->parsed()) return kubex::engine::run_validate(vo, std::cin, std::cout, std::cerr);
  return 0;
}
