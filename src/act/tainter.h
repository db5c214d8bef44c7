// The consolidation taint on nodes (SPEC CON-7, CON-8, CON-9; §2 `rightsizing.kubex.ai/consolidating=<policy>:
// NoSchedule`). Every change is a resourceVersion-guarded update: GET the node, change spec.taints, write them
// back (a merge patch carrying the read resourceVersion, so RBAC needs nodes get and patch). A 409 is reported as a conflict (the caller retries on its next reconcile),
// never blindly re-applied over someone else's change.
#pragma once

#include <memory>
#include <string>

#include "common/log.h"

namespace kubex::kube {
class Client;
}

namespace kubex::act {

struct TaintResult {
  enum class Outcome {
    kApplied,    // the node was updated
    kUnchanged,  // nothing to do: the taint was already there (add) or already gone (remove)
    kHeld,       // add: another policy's consolidation taint is on the node (`holder` names it); nothing written
    kConflict,   // 409: the node changed between GET and PUT; nothing written
    kNotFound,   // the node does not exist
    kError,      // anything else (transport failure included)
  };
  Outcome outcome = Outcome::kError;
  std::string holder;   // kHeld: the policy whose taint is on the node
  std::string message;  // the API error, "" on success
  bool ok() const { return outcome == Outcome::kApplied || outcome == Outcome::kUnchanged; }
};

const char* outcome_name(TaintResult::Outcome outcome);

class Tainter {
 public:
  virtual ~Tainter() = default;
  // Adds `rightsizing.kubex.ai/consolidating=<policy>:NoSchedule` unless a consolidation taint (of any policy)
  // is there already (kUnchanged for `policy`'s own, kHeld for another's).
  virtual TaintResult add(const std::string& node, const std::string& policy) = 0;
  // Removes the consolidation taint whose value is `policy` (kUnchanged when there is none; a node that is
  // gone counts as kNotFound, which callers treat as done).
  virtual TaintResult remove(const std::string& node, const std::string& policy) = 0;
};

// Through `client`; each change is logged with `log`. Under --dry-run the consolidation controller never calls
// a Tainter (CON-11), so this one always writes.
std::shared_ptr<Tainter> client_tainter(std::shared_ptr<kube::Client> client, common::Logger log);

}  // namespace kubex::act
