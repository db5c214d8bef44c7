// The Kubernetes client of the operator commands (SPEC §13a): the ENG-3 kubeconfig rules (--kubeconfig,
// --context; in-cluster, $KUBECONFIG, ~/.kube/config) and a few retries, never a write of their own.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"

namespace kubex::kube {
class Client;
}

namespace kubex::engine {

// The client, or the error to print after the command's name ("invalid kubeconfig: …").
common::Result<std::shared_ptr<kube::Client>> command_client(const std::string& kubeconfig, const std::string& context);

}  // namespace kubex::engine
