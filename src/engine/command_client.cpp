#include "engine/command_client.h"

#include <exception>
#include <ostream>

#include "common/log.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"

namespace kubex::engine {

int run_quiet_command(const char* command, std::ostream& err, const std::function<int()>& body) {
  common::set_log_level(common::LogLevel::kOff);
  try {
    return body();
  } catch (const std::exception& e) {
    err << command << ": " << e.what() << "\n";
    return 1;
  }
}

common::Result<std::shared_ptr<kube::Client>> command_client(const std::string& kubeconfig, const std::string& context) {
  auto conn = kube::resolve_connection(kubeconfig, context);
  if (!conn) return std::unexpected(common::Error{"", "invalid kubeconfig: " + conn.error().str()});
  kube::ClientOptions co;
  co.max_retries = 2;
  co.max_retry_after_retries = 3;  // a command answers within seconds, not after ten Retry-Afters
  auto client = kube::Client::create(*conn, co);
  if (!client) return std::unexpected(common::Error{"", "invalid kubeconfig: " + client.error().str()});
  return *client;
}

}  // namespace kubex::engine
