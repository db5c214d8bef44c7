// Writing KAI-Scheduler queues (QUE-1, DESIGN §3 act/): create a scheduling.run.ai/v2 Queue when discovery
// serves the API and the queue is missing. Ensure-style: the checks it needs before creating (is the API
// served, does the queue exist) are part of the writer, so the kaiqueues controller stays a pure
// observe -> decide -> act composition over one interface with a fake in tests.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "kube/client/client.h"

namespace kubex::act {

class QueueWriter {
 public:
  virtual ~QueueWriter() = default;
  // Discovery: does GET /apis/scheduling.run.ai/v2 list `queues`? A group version that is not served is
  // false.
  virtual kube::KResult<bool> queues_served() = 0;
  virtual kube::KResult<bool> queue_exists(const std::string& name) = 0;
  virtual kube::KResult<void> create_queue(const nlohmann::json& queue) = 0;
};

// Through `client`.
std::shared_ptr<QueueWriter> client_queue_writer(std::shared_ptr<kube::Client> client);

}  // namespace kubex::act
