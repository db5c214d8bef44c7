#include "engine/webhooks.h"

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "kube/runtime/http_endpoints.h"
#include "kube/runtime/manager.h"
#include "webhook/admission_metrics.h"
#include "webhook/certs.h"
#include "webhook/registrar.h"
#include "webhook/server.h"

namespace kubex::engine {

namespace {

// The engine's own handlers, installed before EngineOptions::webhook_installers. The pod mutation handler
// (ADM, /mutate--v1-pod and /mutate--v1-pod-early) and the CR validation handler (VAL-1, the HLM-2 paths)
// add themselves here.
const std::vector<WebhookInstaller>& builtin_installers() {
  static const std::vector<WebhookInstaller> installers;
  return installers;
}

}  // namespace

struct EngineWebhooks::Impl {
  std::unique_ptr<webhook::AdmissionMetrics> metrics;
  std::shared_ptr<webhook::ServingCertificate> certificate;
  std::optional<std::string> ca_bundle_pem;
  std::unique_ptr<webhook::Server> server;
  std::unique_ptr<webhook::Registrar> registrar;
  bool register_webhooks = false, self_signed = false, early = false;
  common::Logger log{"engine.webhooks"};
};

std::string check_webhook_flags(const EngineOptions& o) {
  auto addr = kube::parse_bind_address(o.webhook_bind);
  if (!addr) return "--webhook-bind-address: " + addr.error().str();
  if (!o.cert_dir.empty() && o.self_signed_webhook) {
    return "--cert-dir and --self-signed-webhook are mutually exclusive";
  }
  bool has_cert = !o.cert_dir.empty() || o.self_signed_webhook;
  if (o.register_webhooks && (addr->disabled || !has_cert)) {
    return "--register-webhooks needs a webhook server: set --cert-dir or --self-signed-webhook and a "
           "--webhook-bind-address other than 0";
  }
  if (o.self_signed_webhook && addr->disabled) {
    return "--self-signed-webhook needs a webhook server: --webhook-bind-address must not be 0";
  }
  return "";
}

EngineWebhooks::EngineWebhooks(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EngineWebhooks::~EngineWebhooks() {
  stop();
}

common::Result<std::unique_ptr<EngineWebhooks>> EngineWebhooks::start(const EngineOptions& o,
                                                                      const std::string& ns,
                                                                      kube::Manager& manager,
                                                                      const Caches& caches) {
  auto impl = std::make_unique<Impl>();
  impl->metrics = std::make_unique<webhook::AdmissionMetrics>(manager.metrics());
  impl->register_webhooks = o.register_webhooks;
  impl->self_signed = o.self_signed_webhook;
  impl->early = o.early_webhook_enabled;
  if (auto why = check_webhook_flags(o); !why.empty()) return common::fail(why);
  auto addr = kube::parse_bind_address(o.webhook_bind);
  if (addr->disabled || (o.cert_dir.empty() && !o.self_signed_webhook)) {
    impl->log.warn(
        "webhook server not started",
        {{"reason", addr->disabled ? "--webhook-bind-address is 0"
                                   : "no serving certificate: set --cert-dir or --self-signed-webhook"}});
    return std::unique_ptr<EngineWebhooks>(new EngineWebhooks(std::move(impl)));
  }
  if (o.self_signed_webhook) {
    webhook::SelfSignedOptions so;
    so.service = o.webhook_service;
    so.ns = ns;
    so.extra_hosts = {addr->host};
    auto generated = webhook::generate_self_signed(so);
    if (!generated) return std::unexpected(generated.error());
    auto cert = webhook::ServingCertificate::from_pem(generated->serving);
    if (!cert) return std::unexpected(cert.error());
    impl->certificate = std::move(*cert);
    impl->ca_bundle_pem = generated->ca.cert_pem;
  } else {
    auto cert = webhook::ServingCertificate::from_dir(o.cert_dir);
    if (!cert) return std::unexpected(cert.error());
    impl->certificate = std::move(*cert);
    impl->ca_bundle_pem = impl->certificate->ca_bundle_pem();
  }
  webhook::ServerOptions so;
  so.bind_address = o.webhook_bind;
  impl->server = std::make_unique<webhook::Server>(so, impl->certificate);
  impl->server->set_observer(impl->metrics->observer());
  WebhookContext ctx{*impl->server, manager, caches, o, ns};
  for (const auto& install : builtin_installers()) install(ctx);
  for (const auto& install : o.webhook_installers) {
    if (install) install(ctx);
  }
  if (auto r = impl->server->start(); !r) return std::unexpected(r.error());
  return std::unique_ptr<EngineWebhooks>(new EngineWebhooks(std::move(impl)));
}

bool EngineWebhooks::serving() const {
  return impl_->server != nullptr;
}

webhook::Server* EngineWebhooks::server() {
  return impl_->server.get();
}

void EngineWebhooks::start_registration(std::shared_ptr<kube::Client> client) {
  if (!impl_->server || impl_->registrar) return;
  if (!impl_->register_webhooks && !impl_->self_signed) return;
  webhook::RegistrarOptions ro;
  ro.register_webhooks = impl_->register_webhooks;
  ro.registration.base_url = webhook::webhook_base_url(impl_->server->host(), impl_->server->port());
  ro.registration.early_enabled = impl_->early;
  ro.registration.ca_bundle_pem = impl_->ca_bundle_pem;
  impl_->registrar = std::make_unique<webhook::Registrar>(std::move(client), ro);
  impl_->registrar->start();
}

void EngineWebhooks::stop() {
  if (!impl_) return;
  if (impl_->registrar) impl_->registrar->stop();
  if (impl_->server) impl_->server->stop();
}

}  // namespace kubex::engine
