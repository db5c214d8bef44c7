// `kubex engine` (DESIGN §1, ENG-1..3): connects to the API server, builds the informer caches and runs the
// manager (metrics, health probes, leader election; controllers and webhooks join in later issues).
#pragma once

#include <string>

namespace kubex::engine {

struct EngineOptions {
  std::string kubeconfig, context;
  std::string ns;  // the engine namespace (the Lease lives here)
  bool leader_elect = true;
  std::string metrics_bind = ":8080";
  std::string health_bind = ":8081";
  std::string log_level = "info";
  bool dry_run = false;
};

// $POD_NAMESPACE, else "kubex".
std::string default_namespace();

// Runs the engine until SIGTERM/SIGINT (exit code 0) or a fatal condition (non-zero): a bad kubeconfig,
// an unreachable or rejecting API server, an unbindable address, or a lost lease. Every fatal condition is
// reported as one JSON error line on stdout. Call before any other thread starts (it blocks SIGTERM/SIGINT).
int run_engine(const EngineOptions& options);

}  // namespace kubex::engine
