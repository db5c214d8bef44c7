#include "engine/webhooks.h"

#include <map>
#include <functional>
#include <nlohmann/json.hpp>

#include "act/owner_annotations.h"
#include "api/keys.h"
#include "api/views.h"
#include "common/log.h"
#include "controllers/webhook_probe.h"
#include "observe/caches.h"
#include "observe/catalog.h"
#include "observe/kai_queues.h"
#include "observe/owners.h"
#include "observe/workloads.h"
#include "kube/runtime/http_endpoints.h"
#include "kube/runtime/manager.h"
#include "webhook/admission_metrics.h"
#include "webhook/certs.h"
#include "webhook/cr_validation.h"
#include "webhook/pod_admission.h"
#include "webhook/probe_witness.h"
#include "webhook/registrar.h"
#include "webhook/server.h"

namespace kubex::engine {

namespace {

// Where an owner event goes: the workload object (its apiVersion from its kind).
kube::ObjectReference workload_ref(const api::WorkloadView& v) {
  kube::ObjectReference r;
  r.api_version = act::owner_api_version(v.kind.str());
  r.kind = v.kind.str();
  r.ns = v.ns.str();
  r.name = v.name;
  r.uid = v.uid;
  r.resource_version = v.resource_version;
  return r;
}

// What the pod handler reads, from the observe/ room: the catalog, the caches' sync state, the owner chain
// (SEL-1/2) and the namespace's annotations.
class ObservedPodSource final : public webhook::PodAdmissionSource {
 public:
  explicit ObservedPodSource(const WebhookContext& ctx)
      : catalog_(ctx.inventory), owners_(ctx.owners), caches_(ctx.caches), manager_(ctx.manager) {}

  std::shared_ptr<const decide::policy::Catalog> catalog() const override { return catalog_.catalog(); }
  bool synced() const override { return manager_.caches_synced(); }

  webhook::PodOwner owner(const std::string& ns, const nlohmann::json& pod, common::Duration timeout) const override {
    webhook::PodOwner out;
    std::vector<api::OwnerRef> refs;
    if (pod.contains("metadata") && pod["metadata"].is_object()) refs = api::owners_of(pod["metadata"]);
    observe::OwnerResolution res = owners_.resolve(ns, refs, timeout);
    out.unknown = res.unknown;
    if (res.view) {
      out.workload = observe::decision_workload(*res.view);
      out.ref = workload_ref(*res.view);
    }
    return out;
  }

  std::map<std::string, std::string> namespace_annotations(const std::string& ns) const override {
    return observe::namespace_annotations(caches_, ns);
  }

 private:
  const observe::CatalogCache& catalog_;
  const observe::OwnerResolver& owners_;
  const observe::Caches& caches_;
  const kube::Manager& manager_;
};

// ADM: the pod mutation handler on the late and (with --early-webhook-enabled) early paths.
void install_pod_mutation(const WebhookContext& ctx) {
  auto source = std::make_shared<ObservedPodSource>(ctx);
  webhook::PodAdmissionDeps deps;
  deps.source = source.get();
  deps.probe_witness = &ctx.probe_witness;
  deps.events = &ctx.manager.events();
  deps.dry_run = ctx.options.dry_run;
  auto handler = std::make_shared<webhook::PodAdmission>(std::move(deps));
  const webhook::HandlerOptions ho = webhook::PodAdmission::handler_options();
  // The routes hold the source alive with the handler.
  ctx.server.handle(
      api::keys::kLatePath,
      [handler, source](const webhook::AdmissionRequest& r) { return handler->handle(r, decide::Pass::kLate); }, ho);
  ctx.server.handle(
      api::keys::kEarlyPath,
      [handler, source](const webhook::AdmissionRequest& r) { return handler->handle(r, decide::Pass::kEarly); },
      ho);
}

// VAL-1: one validating path per kind (HLM-2).
void install_cr_validation(const WebhookContext& ctx) {
  webhook::CrValidationDeps deps;
  deps.catalog = &ctx.inventory;
  deps.kai_queues = observe::cached_kai_queue_names(ctx.caches);
  deps.early_webhook_enabled = ctx.options.early_webhook_enabled;
  auto handler = std::make_shared<webhook::CrValidation>(std::move(deps));
  webhook::HandlerOptions ho;
  ho.mutating = false;
  ho.fail_open = false;  // an internal error answers 500; the API server applies the failurePolicy
  for (const auto& ki : api::all_kinds()) {
    api::Kind k = ki.kind;
    ctx.server.handle(
        api::validating_webhook_path(k),
        [handler, k](const webhook::AdmissionRequest& r) { return handler->handle(r, k); }, ho);
  }
}

// The engine's own handlers, installed before EngineOptions::webhook_installers.
const std::vector<WebhookInstaller>& builtin_installers() {
  static const std::vector<WebhookInstaller> installers = {install_pod_mutation, install_cr_validation};
  return installers;
}

}  // namespace

struct EngineWebhooks::Impl {
  std::unique_ptr<webhook::AdmissionMetrics> metrics;
  std::shared_ptr<webhook::ServingCertificate> certificate;
  std::optional<std::string> ca_bundle_pem;
  std::unique_ptr<webhook::Server> server;
  std::unique_ptr<webhook::Registrar> registrar;
  std::shared_ptr<webhook::ProbeWitness> witness = std::make_shared<webhook::ProbeWitness>();
  bool register_webhooks = false, self_signed = false, early = false;
  common::Logger log{"engine.webhooks"};
};

std::string webhook_listen_address(const EngineOptions& o) {
  if (o.webhook_port == 0) return o.webhook_bind;
  const auto colon = o.webhook_bind.rfind(':');
  const std::string host = colon == std::string::npos ? "" : o.webhook_bind.substr(0, colon);
  return host + ":" + std::to_string(o.webhook_port);
}

std::string check_webhook_flags(const EngineOptions& o) {
  auto addr = kube::parse_bind_address(o.webhook_bind);
  if (!addr) return "--webhook-bind-address: " + addr.error().str();
  if (o.webhook_port != 0 && addr->disabled) {
    return "--webhook-port needs a webhook server: --webhook-bind-address must not be 0";
  }
  if (o.webhook_port < 0 || o.webhook_port > 65535) {
    return "--webhook-port: " + std::to_string(o.webhook_port) + " is not a port (1-65535)";
  }
  if (!o.cert_dir.empty() && o.self_signed_webhook) {
    return "--cert-dir and --self-signed-webhook are mutually exclusive";
  }
  bool has_cert = !o.cert_dir.empty() || o.self_signed_webhook;
  // An engine without webhooks converts no pod and validates nothing: only on purpose (ENG-3).
  if (!addr->disabled && !has_cert) {
    return "the webhook server has no serving certificate: set --cert-dir or --self-signed-webhook, or "
           "--webhook-bind-address=0 to run without webhooks";
  }
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

common::Result<std::unique_ptr<EngineWebhooks>> EngineWebhooks::start(
    const EngineOptions& o, const std::string& ns, kube::Manager& manager, const observe::Caches& caches,
    const observe::CatalogCache& inventory, const observe::OwnerResolver& owners) {
  auto impl = std::make_unique<Impl>();
  impl->metrics = std::make_unique<webhook::AdmissionMetrics>(manager.metrics());
  impl->register_webhooks = o.register_webhooks;
  impl->self_signed = o.self_signed_webhook;
  impl->early = o.early_webhook_enabled;
  if (auto why = check_webhook_flags(o); !why.empty()) return common::fail(why);
  auto addr = kube::parse_bind_address(webhook_listen_address(o));
  if (addr->disabled) {
    impl->log.warn("webhook server disabled (--webhook-bind-address=0): pods are admitted unchanged and "
                   "kubex objects are not validated by the engine",
                   {});
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
  so.bind_address = webhook_listen_address(o);
  so.on_tls_failure = [witness = impl->witness](const std::string& error) { witness->saw_tls_failure(error); };
  impl->server = std::make_unique<webhook::Server>(so, impl->certificate);
  impl->server->set_observer(impl->metrics->observer());
  WebhookContext ctx{*impl->server, manager, caches, inventory, owners, o, ns, *impl->witness};
  for (const auto& install : builtin_installers()) install(ctx);
  for (const auto& install : o.webhook_installers) {
    if (install) install(ctx);
  }
  if (auto r = impl->server->start(); !r) return std::unexpected(r.error());
  return std::unique_ptr<EngineWebhooks>(new EngineWebhooks(std::move(impl)));
}

namespace {

// The probe controller's view of webhook::ProbeWitness (controllers do not include webhook/).
class ProbeWitnessView final : public controllers::WebhookProbeWitness {
 public:
  explicit ProbeWitnessView(std::shared_ptr<webhook::ProbeWitness> w) : w_(std::move(w)) {}
  controllers::ProbeSighting sighting(const std::string& pod, std::chrono::steady_clock::time_point since) const override {
    auto s = w_->sighting(pod, since);
    return {s.early, s.late, std::move(s.tls_failure)};
  }

 private:
  std::shared_ptr<webhook::ProbeWitness> w_;
};

}  // namespace

class RegistrationView final : public controllers::WebhookRegistrationState {
 public:
  explicit RegistrationView(std::function<bool()> done) : done_(std::move(done)) {}
  bool registered() const override { return done_(); }

 private:
  std::function<bool()> done_;
};

std::shared_ptr<const controllers::WebhookRegistrationState> EngineWebhooks::registration_state() const {
  const Impl* impl = impl_.get();
  return std::make_shared<RegistrationView>(
      [impl] { return !impl->registrar || impl->registrar->wait_succeeded(std::chrono::milliseconds(0)); });
}

std::shared_ptr<const controllers::WebhookProbeWitness> EngineWebhooks::probe_witness() const {
  return std::make_shared<ProbeWitnessView>(impl_->witness);
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
  if (!impl_->self_signed && impl_->certificate) {  // --cert-dir: follow a CA rotation (ca.crt)
    ro.ca_bundle_source = impl_->certificate;
  }
  impl_->registrar = std::make_unique<webhook::Registrar>(std::move(client), ro);
  impl_->registrar->start();
}

void EngineWebhooks::stop() {
  if (!impl_) return;
  if (impl_->registrar) impl_->registrar->stop();
  if (impl_->server) impl_->server->stop();
}

}  // namespace kubex::engine
