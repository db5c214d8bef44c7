// Start-up registration of the engine's webhook configurations (ENG-3 `--register-webhooks`,
// `--self-signed-webhook`), run on every replica once the webhook server listens: a background thread
// that retries with capped exponential back-off on API errors until it succeeds or is stopped (ENG-2: API
// errors are logged, never fatal).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/log.h"
#include "kube/runtime/runnable.h"
#include "webhook/ca_bundle_source.h"
#include "webhook/registration.h"

namespace kubex::kube {
class Client;
}

namespace kubex::webhook {

struct RegistrarOptions {
  // true: register_webhooks(); false: only patch_ca_bundles() with registration.ca_bundle_pem.
  bool register_webhooks = true;
  RegistrationOptions registration;
  std::chrono::milliseconds backoff_base{500};
  std::chrono::milliseconds backoff_cap{30000};
  // --cert-dir: the CA bundle the served certificate chains to (DIR/ca.crt), re-read every ca_poll_interval
  // after registering. When it changes (a CA rotation), the configurations get the new caBundle at once;
  // otherwise every webhook call would fail TLS and pods be admitted unmutated (failurePolicy Ignore).
  std::shared_ptr<const CaBundleSource> ca_bundle_source;  // null: the bundle never changes
  std::chrono::milliseconds ca_poll_interval{5000};
};

class Registrar final : public kube::Runnable {
 public:
  Registrar(std::shared_ptr<kube::Client> client, RegistrarOptions options);
  ~Registrar() override;

  const std::string& name() const override { return name_; }
  void start() override;
  void stop() override;

  // Waits until an attempt succeeded (true) or `timeout` passed (false). With a ca_bundle_source the thread
  // then keeps watching the CA (and registers again when it changes) until stopped.
  bool wait_succeeded(std::chrono::milliseconds timeout);
  int attempts() const;

 private:
  void loop();
  bool attempt();
  // Waits (ca_poll_interval at a time) until the CA bundle differs from the registered one and takes it
  // (true), or until stopped (false). Called with `lk` held.
  bool wait_for_ca_change(std::unique_lock<std::mutex>& lk);

  std::shared_ptr<kube::Client> client_;
  RegistrarOptions options_;
  std::string name_ = "webhook-registration";
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, succeeded_ = false;
  int attempts_ = 0;
  std::thread thread_;
  common::Logger log_{"webhook.registration"};
};

}  // namespace kubex::webhook
