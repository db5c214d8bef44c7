// Dynamic admission like kube-apiserver: MutatingWebhookConfigurations (sorted by name, reinvocation),
// then ValidatingWebhookConfigurations; rules, namespaceSelector, objectSelector, failurePolicy,
// timeouts, dryRun and sideEffects, JSONPatch responses and warnings. Webhooks are called over HTTPS
// with caBundle verification; service references are resolved through the --service-map.
#pragma once

#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/http_reuse.h"
#include "common/log.h"
#include "sim/apiserver/api_error.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/resource.h"

namespace httplib {
class SSLClient;
}

namespace kubex::sim {

class Admission {
 public:
  struct Attributes {
    const ResourceInfo* resource = nullptr;
    std::string subresource;
    std::string operation;  // CREATE UPDATE DELETE CONNECT
    std::string ns;
    std::string name;
    UserInfo user;
    bool dry_run = false;
  };

  explicit Admission(ApiServer& server);
  ~Admission();

  std::expected<void, ApiError> mutate(const Attributes& a, nlohmann::json& obj, const nlohmann::json* old,
                                       std::vector<std::string>& warnings);
  std::expected<void, ApiError> validate(const Attributes& a, const nlohmann::json& obj, const nlohmann::json* old,
                                         std::vector<std::string>& warnings);

 private:
  struct Hook;
  struct Endpoint;
  std::vector<Hook> load(bool mutating);
  bool matches(const Hook& h, const Attributes& a, const nlohmann::json& obj, const nlohmann::json* old);
  // Calls one webhook; returns the AdmissionReview response object or a transport/protocol error.
  std::expected<nlohmann::json, std::string> call(const Hook& h, const nlohmann::json& review, std::string& url_out);
  std::expected<void, ApiError> run(bool mutating, const Attributes& a, nlohmann::json& obj,
                                    const nlohmann::json* old, std::vector<std::string>& warnings);

  ApiServer& server_;
  std::mutex pool_mu_;
  // Idle webhook connections per endpoint (common/http_reuse.h: dropped before the webhook server's idle
  // timeout, or when the server has closed them).
  std::map<std::string, common::IdlePool<httplib::SSLClient>> pool_;
  common::Logger log_{"kubex-sim.admission"};
};

}  // namespace kubex::sim
