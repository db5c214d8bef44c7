// Where the status controllers send their writes: update_status against the API server in the engine,
// an in-memory store in tests. One interface so that a controller's reconcile can be tested whole, with the
// same pure status merge (act::apply_status_change) the real write uses.
#pragma once

#include <memory>
#include <string>

#include "act/status.h"
#include "common/clock.h"

namespace kubex::kube {
class Client;
}

namespace kubex::act {

class StatusWriter {
 public:
  virtual ~StatusWriter() = default;
  // update_status semantics: read `object_path`, apply `change`, write `<object_path>/status` if
  // anything changed; not_found() when the object is gone.
  virtual kube::KResult<StatusResult> write(const std::string& object_path,
                                                 const StatusChange& change, common::TimePoint now) = 0;
};

// update_status through `client`.
std::unique_ptr<StatusWriter> client_status_writer(std::shared_ptr<kube::Client> client);

}  // namespace kubex::act
