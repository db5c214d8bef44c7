#include "engine/engine.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "engine/build_info.h"
#include "observe/caches.h"
#include "engine/controllers.h"
#include "engine/state.h"
#include "observe/catalog.h"
#include "observe/owners.h"
#include "engine/webhooks.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"
#include "kube/runtime/manager.h"
#include "kube/runtime/signals.h"

namespace kubex::engine {

using nlohmann::json;

namespace {

// One clear line for a failed API probe, with the class of failure an operator can act on.
void report_probe_failure(const common::Logger& log, const kube::ConnectionConfig& c,
                          const kube::ApiStatus& e) {
  json f = {{"server", c.server}, {"context", c.context}, {"kubeconfig", c.source}, {"error", e.str()}};
  if (e.unauthorized()) {
    f["reason"] = "Unauthorized";
    f["hint"] = "the API server rejected the credentials (token or client certificate) of this context";
  } else if (e.forbidden()) {
    f["reason"] = "Forbidden";
    f["hint"] = "the credentials are valid but may not read the API";
  } else if (e.transport() && (e.message.find("x509") != std::string::npos ||
                               e.message.find("Verification") != std::string::npos)) {
    f["reason"] = "TLSVerificationFailed";
    f["hint"] =
        "certificate signed by unknown authority: the server's certificate does not verify against the "
        "kubeconfig's certificate-authority(-data)";
  } else if (e.transport()) {
    f["reason"] = e.reason == "Timeout" ? "Timeout" : "Unreachable";
    f["hint"] = "no answer from the API server: check the server address, that it is running and reachable";
  } else {
    f["reason"] = e.reason;
  }
  log.error("cannot reach the Kubernetes API", f);
}

}  // namespace

std::string default_namespace() {
  const char* ns = std::getenv("POD_NAMESPACE");
  return ns && *ns ? ns : "kubex";
}

int run_engine(const EngineOptions& o) {
  kube::block_termination_signals();
  common::Logger log("engine");
  common::LogLevel level;
  if (!common::parse_log_level(o.log_level, level)) {
    log.error("invalid flag", {{"flag", "--log-level"},
                               {"value", o.log_level},
                               {"error", "must be debug, info, warn, error or off"}});
    return 2;
  }
  common::set_log_level(level);
  if (auto why = check_webhook_flags(o); !why.empty()) {
    log.error("invalid flag", {{"error", why}});
    return 2;
  }
  std::string ns = o.ns.empty() ? default_namespace() : o.ns;

  auto conn = kube::resolve_connection(o.kubeconfig, o.context);
  if (!conn) {
    log.error("invalid kubeconfig",
              {{"kubeconfig", o.kubeconfig}, {"context", o.context}, {"error", conn.error().str()}});
    return 1;
  }
  auto client = kube::Client::create(*conn);
  if (!client) {
    log.error("invalid kubeconfig",
              {{"kubeconfig", conn->source}, {"context", conn->context}, {"error", client.error().str()}});
    return 1;
  }
  // Leader election gets its own client: its own QPS budget, and a short timeout so one hung request cannot outlast
  // the renew deadline (10 s). A 5xx is not retried (the elector tries again every 2 s itself, ENG-1); a 429 or 5xx
  // with Retry-After (kube-apiserver's max-in-flight and priority-and-fairness answers say 1 s) is waited out once,
  // as client-go's REST client does inside the elector's renew deadline.
  kube::ClientOptions lease_opts;
  lease_opts.qps = 5;
  lease_opts.burst = 10;
  lease_opts.timeout = std::chrono::milliseconds(4000);
  lease_opts.max_retries = 0;
  lease_opts.max_retry_after_retries = 1;
  auto lease_client = kube::Client::create(*conn, lease_opts);
  kube::ClientOptions probe_opts;
  probe_opts.timeout = std::chrono::milliseconds(5000);
  probe_opts.max_retries = 2;
  auto probe_client = kube::Client::create(*conn, probe_opts);
  if (!lease_client || !probe_client) {
    log.error("invalid kubeconfig", {{"kubeconfig", conn->source}, {"error", "cannot create a client"}});
    return 1;
  }

  kube::ManagerOptions mo;
  mo.metrics_bind = o.metrics_bind;
  mo.health_bind = o.health_bind;
  mo.leader_elect = o.leader_elect;
  mo.leader_election.lease_namespace = ns;
  mo.leader_election.lease_name = kube::kEngineLeaseName;
  mo.lease_client = *lease_client;
  kube::Manager manager(*client, mo);
  export_build_info(manager.metrics());  // kubex_build_info{version,commit,build_date} 1
  kube::SignalWatcher signals([&manager](int) { manager.stop(); });
  log.info("starting kubex engine", {{"identity", manager.identity()},
                                     {"namespace", ns},
                                     {"leaderElect", o.leader_elect},
                                     {"dryRun", o.dry_run},
                                     {"server", conn->server},
                                     {"context", conn->context}});
  // Probes are served (not ready) while the API server is checked.
  if (auto ep = manager.start_endpoints(); !ep) {
    log.error("cannot start HTTP endpoints", {{"error", ep.error().str()}});
    return 1;
  }
  // Every replica serves the webhooks (ENG-1); handlers are installed before the server serves.
  observe::Caches caches = observe::make_caches(*client);
  observe::CatalogOptions inv_opts;
  inv_opts.global_config_name = o.global_config_name;
  inv_opts.policy_evaluation_name = o.policy_evaluation_name;
  observe::CatalogCache inventory(*client, inv_opts);
  observe::OwnerResolver owners(caches, *client);
  auto webhooks = EngineWebhooks::start(o, ns, manager, caches, inventory, owners);
  if (!webhooks) {
    log.error("cannot start the webhook server", {{"error", webhooks.error().str()}});
    return 1;
  }
  (*probe_client)->set_observer(manager.metrics().request_observer());
  auto version = (*probe_client)->probe();
  if (!version) {
    report_probe_failure(log, *conn, version.error());
    return 1;
  }
  log.info("connected to the Kubernetes API",
           {{"server", conn->server}, {"version", version->value("gitVersion", "")}});

  (*webhooks)->start_registration(*client);
  for (auto& [name, inf] : caches.all()) manager.add_informer(name, inf);
  for (auto& [name, inf] : inventory.informers()) manager.add_informer(name, inf);
  EngineState state{o, ns, *client, manager, caches, inventory, owners, (*webhooks)->probe_witness(),
                     (*webhooks)->registration_state()};
  add_controllers(state);
  int rc = manager.run();
  (*webhooks)->stop();
  return rc;
}

}  // namespace kubex::engine
