// The webhook health probe's one write (WHH-1, DESIGN §3 act/): a server-side dry-run pod CREATE
// (`dryRun=All`), which runs the admission chain and persists nothing. A kube::Client in production, a fake that
// plays the webhooks in tests.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "kube/client/client.h"

namespace kubex::act {

class ProbeRunner {
 public:
  virtual ~ProbeRunner() = default;
  // POST /api/v1/namespaces/<ns>/pods?dryRun=All; the object as admitted.
  virtual kube::KResult<nlohmann::json> dry_run_create_pod(const std::string& ns, const nlohmann::json& pod) = 0;
};

// `client` should have a bounded timeout and no retries: a slow or failing API call is a failed probe.
std::shared_ptr<ProbeRunner> client_probe_runner(std::shared_ptr<kube::Client> client);

}  // namespace kubex::act
