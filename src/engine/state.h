// What the engine's parts share once it is connected: options, the client, the manager, the caches, kubex's
// own objects and owner resolution. Controllers and webhook handlers are built from it (engine/controllers.h,
// engine/webhooks.h).
#pragma once

#include <memory>
#include <string>

#include "engine/engine.h"
#include "observe/caches.h"
#include "observe/forward.h"

namespace kubex::kube {
class Client;
class Manager;
}  // namespace kubex::kube

namespace kubex::controllers {
class WebhookProbeWitness;
class WebhookRegistrationState;
}

namespace kubex::engine {

struct EngineState {
  const EngineOptions& options;
  const std::string& ns;  // the engine namespace
  std::shared_ptr<kube::Client> client;
  kube::Manager& manager;
  const observe::Caches& caches;
  observe::CatalogCache& inventory;
  const observe::OwnerResolver& owners;
  // What the webhook server saw of the health probes (names a failed probe's cause, WHH-2).
  std::shared_ptr<const controllers::WebhookProbeWitness> probe_witness;
  // Whether the engine's own webhook registration is in place (the probe waits for it).
  std::shared_ptr<const controllers::WebhookRegistrationState> webhook_registration;
};

}  // namespace kubex::engine
