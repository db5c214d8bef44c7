#pragma once

#include <optional>
#include <string>

namespace kubex::webhook {

// Where the CA bundle of registered webhooks comes from when it can change (--cert-dir's ca.crt):
// webhook::ServingCertificate in the engine, a fake in tests.
class CaBundleSource {
 public:
  virtual ~CaBundleSource() = default;
  virtual std::optional<std::string> ca_bundle_pem() const = 0;
};

}  // namespace kubex::webhook
