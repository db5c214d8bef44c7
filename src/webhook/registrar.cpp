#include "webhook/registrar.h"

#include <nlohmann/json.hpp>
#include <random>

#include "kube/client/client.h"

namespace kubex::webhook {

using nlohmann::json;

Registrar::Registrar(std::shared_ptr<kube::Client> client, RegistrarOptions options)
    : client_(std::move(client)), options_(std::move(options)) {}

Registrar::~Registrar() {
  stop();
}

void Registrar::start() {
  std::lock_guard lk(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { loop(); });
}

void Registrar::stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool Registrar::wait_succeeded(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [this] { return succeeded_; });
}

int Registrar::attempts() const {
  std::lock_guard lk(mu_);
  return attempts_;
}

bool Registrar::attempt() {
  kube::KResult<RegistrationResult> r;
  if (options_.register_webhooks) {
    r = register_webhooks(*client_, options_.registration);
  } else if (options_.registration.ca_bundle_pem) {
    r = patch_ca_bundles(*client_, *options_.registration.ca_bundle_pem);
  } else {
    r = RegistrationResult{};
  }
  if (!r) {
    log_.warn("webhook registration failed, retrying", {{"error", r.error().str()}});
    return false;
  }
  log_.info(options_.register_webhooks ? "registered webhook configurations" : "patched webhook caBundles",
            {{"created", r->created},
             {"updated", r->updated},
             {"unchanged", r->unchanged},
             {"deleted", r->deleted},
             {"missing", r->missing},
             {"url", options_.registration.base_url}});
  return true;
}

void Registrar::loop() {
  std::mt19937_64 rng(std::random_device{}());
  auto delay = options_.backoff_base;
  while (true) {
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
      ++attempts_;
    }
    bool ok = false;
    try {
      ok = attempt();
    } catch (const std::exception& e) {
      log_.error("webhook registration failed, retrying", {{"error", e.what()}});
    }
    std::unique_lock lk(mu_);
    if (ok) {
      succeeded_ = true;
      cv_.notify_all();
      if (!options_.ca_bundle_source || !wait_for_ca_change(lk)) return;
      delay = options_.backoff_base;
      continue;
    }
    // Full jitter between half and all of the current delay.
    std::uniform_int_distribution<long long> jitter(delay.count() / 2, std::max<long long>(delay.count(), 1));
    cv_.wait_for(lk, std::chrono::milliseconds(jitter(rng)), [this] { return stop_; });
    delay = std::min(options_.backoff_cap, delay * 2);
  }
}

bool Registrar::wait_for_ca_change(std::unique_lock<std::mutex>& lk) {
  while (true) {
    if (cv_.wait_for(lk, options_.ca_poll_interval, [this] { return stop_; })) return false;
    lk.unlock();
    std::optional<std::string> ca;
    try {
      ca = options_.ca_bundle_source->ca_bundle_pem();
    } catch (const std::exception& e) {
      log_.warn("cannot read the webhook CA bundle", {{"error", e.what()}});
    }
    lk.lock();
    if (ca && ca != options_.registration.ca_bundle_pem) {
      log_.info("the webhook CA bundle changed: updating the caBundle of the webhook configurations",
                {{"url", options_.registration.base_url}});
      options_.registration.ca_bundle_pem = std::move(ca);
      return true;
    }
  }
}

}  // namespace kubex::webhook
