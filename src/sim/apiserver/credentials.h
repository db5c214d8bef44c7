// kubex-sim's TLS material and kubeconfig: a CA, the serving certificate, an admin client certificate
// (CN kubex-admin, O system:masters) and a bearer token. Kept in --data-dir when given, so a restarted
// simulator keeps serving the same kubeconfig.
#pragma once

#include <string>

#include "common/result.h"
#include "common/x509.h"

namespace kubex::sim {

struct Credentials {
  common::PemPair ca;
  common::PemPair serving;
  common::PemPair admin;
  std::string token;
};

// Loads credentials from `dir` (if it holds them) or generates new ones (written to `dir` when not empty).
common::Result<Credentials> load_or_create_credentials(const std::string& dir);

// Writes a kubeconfig with two contexts: `kubex-sim` (client certificate, current) and `kubex-sim-token`.
common::Result<void> write_kubeconfig(const std::string& path, const std::string& server_url, const Credentials& c);

}  // namespace kubex::sim
