// The engine's own webhook configurations (ADM-1, HLM-2, ENG-3 `--register-webhooks`): builders for the
// ValidatingWebhookConfiguration and the early/late MutatingWebhookConfigurations with `clientConfig.url`
// pointing at the webhook server, and the API calls that create or update them (never duplicating one),
// remove the early configuration when it is disabled, or only patch `caBundle` (`--self-signed-webhook`
// without `--register-webhooks`).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kube/client/client.h"

namespace kubex::webhook {

struct RegistrationOptions {
  // "https://127.0.0.1:9443": the paths are appended to it (see webhook_base_url).
  std::string base_url;
  // ADM-1: the early configuration exists only when enabled; registration removes it otherwise.
  bool early_enabled = false;
  // PEM CA certificate(s) for caBundle; nullopt keeps whatever caBundle each existing webhook has.
  std::optional<std::string> ca_bundle_pem;
  int timeout_seconds = 10;                          // HLM-1 webhook.timeoutSeconds
  std::string validating_failure_policy = "Ignore";  // HLM-1 webhook.failurePolicy
};

// "https://<host>:<port>" for a bind host; wildcard hosts (0.0.0.0, ::, "") become loopback (the serving
// certificate names 127.0.0.1 and ::1), IPv6 hosts are bracketed.
std::string webhook_base_url(const std::string& bind_host, int port);

// HLM-2: one webhook per api::all_kinds() kind.
nlohmann::json build_validating_configuration(const RegistrationOptions& options);
// ADM-1: the late (`zzz-...`) or early (`000-...`) pod mutation configuration.
nlohmann::json build_mutating_configuration(bool early, const RegistrationOptions& options);

// Configuration names by what registration did to them.
struct RegistrationResult {
  std::vector<std::string> created, updated, unchanged, deleted, missing;
};

// Creates or updates (with the read resourceVersion, re-reading on conflict) every configuration, and
// deletes the early one when it is disabled. An existing configuration whose webhooks already say what
// the builders say (server defaults aside) is left untouched. Returns the first API error.
kube::KResult<RegistrationResult> register_webhooks(kube::Client& client, const RegistrationOptions& options);

// Sets caBundle (base64 of `ca_pem`) on every webhook of the engine's configurations that exist; missing
// configurations are listed in `missing`, not created.
kube::KResult<RegistrationResult> patch_ca_bundles(kube::Client& client, const std::string& ca_pem);

// REST paths of the two configuration kinds.
std::string mutating_configuration_path(const std::string& name = "");
std::string validating_configuration_path(const std::string& name = "");

}  // namespace kubex::webhook
