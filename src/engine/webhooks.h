// The engine's admission webhook wiring (ENG-1, ENG-3, ADM-1, OBS-5): the serving certificate from
// --cert-dir or --self-signed-webhook, the HTTPS server on --webhook-bind-address (every replica, not only
// the leader), the handlers, the admission metrics, and start-up registration / caBundle patching.
//
// Handlers are added by installers before the server serves: the engine's own ones (pod mutation on the
// ADM-1 paths, CR validation on the HLM-2 paths, listed in webhooks.cpp as they land) and then
// EngineOptions::webhook_installers. An installer calls `context.server.handle(path, handler, options)`.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "engine/engine.h"
#include "observe/forward.h"

namespace kubex::kube {
class Client;
class Manager;
}  // namespace kubex::kube

namespace kubex::webhook {
class Server;
}

namespace kubex::controllers {
class WebhookProbeWitness;
class WebhookRegistrationState;
}
namespace kubex::webhook {
class ProbeWitness;
}

namespace kubex::engine {

// What an installer gets.
struct WebhookContext {
  webhook::Server& server;
  kube::Manager& manager;  // client, metrics, events, informers
  const observe::Caches& caches;
  const observe::CatalogCache& inventory;
  const observe::OwnerResolver& owners;
  const EngineOptions& options;
  const std::string& ns;  // the engine namespace
  webhook::ProbeWitness& probe_witness;
};

// ENG-3 flag combinations that cannot work; "" when they are fine.
std::string check_webhook_flags(const EngineOptions& options);

// Where the webhook server listens: --webhook-bind-address with its port replaced by --webhook-port when set
// (":9443" and --webhook-port=10443 give ":10443"; "127.0.0.1:0" gives "127.0.0.1:10443").
std::string webhook_listen_address(const EngineOptions& options);

class EngineWebhooks {
 public:
  // Registers the admission metrics, then (when a certificate source is configured) loads or generates
  // the certificate, runs the installers and starts serving. An error (bad cert dir, unbindable address)
  // is fatal for the engine (ENG-3).
  static common::Result<std::unique_ptr<EngineWebhooks>> start(const EngineOptions& options,
                                                               const std::string& ns, kube::Manager& manager,
                                                               const observe::Caches& caches, const observe::CatalogCache& inventory,
                                                               const observe::OwnerResolver& owners);
  ~EngineWebhooks();

  bool serving() const;
  webhook::Server* server();
  // With --register-webhooks (or --self-signed-webhook: caBundle only), registers in the background,
  // retrying on API errors. Call once the API server answered.
  void start_registration(std::shared_ptr<kube::Client> client);
  void stop();
  // What the webhook server saw of the health probes (WHH-2 messages); valid while this object lives, also
  // when nothing is served (then it saw nothing).
  std::shared_ptr<const controllers::WebhookProbeWitness> probe_witness() const;
  // Whether start_registration's first attempt succeeded (always, when it registers nothing); valid while this
  // object lives. The health probe waits for it.
  std::shared_ptr<const controllers::WebhookRegistrationState> registration_state() const;

 private:
  struct Impl;
  explicit EngineWebhooks(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubex::engine
