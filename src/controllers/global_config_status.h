// What the engine-wide controllers (QUE, WHH) share about the GlobalConfiguration singleton: writing its
// /status (act::update_status: condition-keyed, observedGeneration, conflict retries) and naming it as the
// object of events (OBS-2). They read it from the inventory's cache through observe::GlobalConfigView. The
// object may not exist yet (the engine creates it at startup, API-4): a write then fails with not_found() and
// the caller retries later.
#pragma once

#include <memory>
#include <string>

#include "common/clock.h"
#include "kube/client/client.h"
#include "kube/runtime/event_recorder.h"

namespace kubex::act {
struct StatusChange;
}

namespace kubex::api {
struct GlobalConfigObject;
}

namespace kubex::observe {
class GlobalConfigView;
}

namespace kubex::controllers {

// The event target for global-config `name` (uid from the cached object when there is one).
kube::ObjectReference global_config_ref(const std::string& name, const api::GlobalConfigObject* cached);

// Writes global-config's status (a fake in tests).
class GlobalConfigStatus {
 public:
  virtual ~GlobalConfigStatus() = default;
  virtual const std::string& name() const = 0;
  // Applies `change` at `now`; a missing object is an error with not_found().
  virtual kube::KResult<void> update(const act::StatusChange& change, common::TimePoint now) = 0;
};

std::shared_ptr<GlobalConfigStatus> client_global_config_status(std::shared_ptr<kube::Client> client,
                                                                std::string name);

}  // namespace kubex::controllers
