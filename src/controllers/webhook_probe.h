// The webhook health probe itself (WHH-1, WHH-2): the dry-run probe pod built from global-config's
// spec.webhookProbe, the check of what the API server returned, and the server-side dry-run CREATE.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "kube/client/client.h"

namespace kubex::api {
struct GlobalConfigSpec;
}

namespace kubex::controllers {

inline constexpr const char* kProbePodPrefix = "kubex-webhook-probe-";
// spec.webhookProbe.image when unset: the engine image (Helm sets the field in clusters).
inline constexpr const char* kDefaultProbeImage = "kubex-automation-engine";

// WHH-1: pod `kubex-webhook-probe-<suffix>` in `ns` with the labels, annotations, resources and security
// contexts of spec.webhookProbe, and annotation rightsizing.kubex.ai/webhook-probe: "true". The pass markers
// (automation-webhook.kubex.ai/probe-early, probe-late) are never copied from the template: only a webhook
// may put them there.
nlohmann::json build_probe_pod(const api::GlobalConfigSpec& spec, const std::string& ns,
                               const std::string& suffix,
                               const std::string& default_image = kDefaultProbeImage);

// WHH-2: which markers `admitted` (the object the dry-run CREATE returned) lacks of the enabled passes: the
// late one always, the early one when `early_enabled`. A marker counts when it is probe-<pass>: "ok".
struct MissingMarkers {
  bool early = false, late = false;
  bool any() const { return early || late; }
};
MissingMarkers missing_probe_markers(const nlohmann::json& admitted, bool early_enabled);

// What the engine's own webhook server saw of a probe pod (WHH-2 failure messages): which passes of the pod
// admission handler received its review, and a TLS handshake that failed on the webhook listener since
// `since`. Implemented over webhook::ProbeWitness by the engine's wiring; tests use a fake.
struct ProbeSighting {
  bool early = false, late = false;
  std::string tls_failure;
};
class WebhookProbeWitness {
 public:
  virtual ~WebhookProbeWitness() = default;
  virtual ProbeSighting sighting(const std::string& pod_name, std::chrono::steady_clock::time_point since) const = 0;
};

// Whether the engine's own webhook configurations are in place (--register-webhooks / --self-signed-webhook: its
// first registration succeeded). Before that a probe would only find the engine still starting.
class WebhookRegistrationState {
 public:
  virtual ~WebhookRegistrationState() = default;
  virtual bool registered() const = 0;
};


}  // namespace kubex::controllers
