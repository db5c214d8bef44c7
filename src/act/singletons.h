// Creating the singletons (API-4, DESIGN §3 act/): `global-config` and `policy-evaluation` with their CRD
// defaults when they are missing. Never an overwrite: GET, and CREATE only on 404 (an AlreadyExists answer
// counts as someone else's object).
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "api/kinds.h"
#include "kube/client/client.h"

namespace kubex::act {

// The object the engine creates for a missing singleton of kind `k` (GlobalConfiguration or
// PolicyEvaluation): its CRD defaults (api/defaults.h), labelled as created by the engine.
nlohmann::json default_singleton(api::Kind k, const std::string& name);

enum class EnsureOutcome {
  kCreated,  // it was missing and is created now
  kExists,   // someone else's object (Helm, a user, an earlier start): left as it is
  kRetry,    // cannot tell yet (CRD not installed, API error): try again later
  kFailed,   // refused for good (e.g. 422: the name is not allowed by the CRD)
};
const char* to_string(EnsureOutcome o);

// GET, and CREATE only on 404. `detail` receives the API error, if any.
EnsureOutcome ensure_singleton(kube::Client& client, api::Kind k, const std::string& name, std::string* detail);

// The same behind an interface (the singleton bootstrap's only write; a fake in tests).
class SingletonWriter {
 public:
  virtual ~SingletonWriter() = default;
  virtual EnsureOutcome ensure(api::Kind k, const std::string& name, std::string* detail) = 0;
};
std::shared_ptr<SingletonWriter> client_singleton_writer(std::shared_ptr<kube::Client> client);

}  // namespace kubex::act
