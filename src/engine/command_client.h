// The Kubernetes client of the operator commands (SPEC §13a): the ENG-3 kubeconfig rules (--kubeconfig,
// --context; in-cluster, $KUBECONFIG, ~/.kube/config) and a few retries, never a write of their own.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "common/result.h"

namespace kubex::kube {
class Client;
}

namespace kubex::engine {

// Runs a reading command's body (`kubex explain`, `kubex report`) with the engine's JSON log lines off, since a
// command's stdout is its report (CLI §13a); an exception becomes "<command>: <what>" on `err` and exit code 1.
int run_quiet_command(const char* command, std::ostream& err, const std::function<int()>& body);

// The client, or the error to print after the command's name ("invalid kubeconfig: …").
common::Result<std::shared_ptr<kube::Client>> command_client(const std::string& kubeconfig, const std::string& context);

}  // namespace kubex::engine
