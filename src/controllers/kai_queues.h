// The built-in KAI queues (QUE-1, QUE-2), leader-only, controller name `kaiqueues`. With --kai-queues the
// check runs at start-up and every 5m: when discovery lists scheduling.run.ai/v2 `queues`, the missing ones
// of kubex-parent-queue and kubex-unlimited-gpu-queue (child of the parent) are created (Normal event
// QueueCreated on global-config); an existing queue is never modified and no queue is ever deleted.
// global-config's KaiQueuesReady says the outcome: True/QueuesReady, False/QueueAPINotInstalled,
// False/QueueCreateFailed (message: the error). Failed checks are retried after min(interval, 1m). Without
// the flag the controller only removes KaiQueuesReady. A built-in queue deleted meanwhile is recreated at once
// (queue_deleted(), from a Queue informer). While global-config does not exist, the status write
// is retried every `status_retry` and as soon as the object appears.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/log.h"
#include "controllers/global_config_status.h"
#include "kube/runtime/controller.h"

namespace kubex::kube {
class EventRecorder;
class Metrics;
}  // namespace kubex::kube

namespace kubex::act {
class QueueWriter;
}

namespace kubex::controllers {

inline constexpr const char* kKaiQueuesController = "kaiqueues";
inline constexpr const char* kKaiQueuesReady = "KaiQueuesReady";

// The scheduling.run.ai/v2 Queue QUE-1 ensures: cluster-scoped, labelled managed-by kubex-automation-engine,
// quota and limit -1 and overQuotaWeight 1 for cpu, gpu and memory; `parent` empty for a top-level queue.
nlohmann::json kai_queue_object(const std::string& name, const std::string& parent);

// The queues of QUE-1 in creation order (parent first): (name, parent).
const std::vector<std::pair<std::string, std::string>>& builtin_kai_queues();

struct KaiQueuesOptions {
  bool enabled = false;                                       // --kai-queues
  common::Duration check_interval = std::chrono::minutes(5);  // QUE-1
  common::Duration status_retry = std::chrono::seconds(10);   // while global-config does not exist
  const common::Clock* clock = nullptr;                       // default: the real clock
  kube::Metrics* metrics = nullptr;                           // controller_runtime_* {controller="kaiqueues"}
};

class KaiQueuesController final : public kube::Runnable {
 public:
  // `events` may be null (no events).
  KaiQueuesController(std::shared_ptr<act::QueueWriter> api, std::shared_ptr<GlobalConfigStatus> status,
                      const observe::GlobalConfigView& global_config, kube::EventRecorder* events,
                      KaiQueuesOptions options);
  ~KaiQueuesController() override;

  const std::string& name() const override { return controller_.name(); }
  // Queues the start-up check and starts the worker.
  void start() override;
  void stop() override;

  // global-config was added, changed or deleted (the inventory's listener): checks again when the cached
  // condition is not what this controller last wrote, or when a status write is waiting for the object.
  void global_config_changed();

  // A Queue was deleted (the Queue informer): a built-in one is checked, and so recreated, at once instead
  // of at the next periodic check, so that KaiQueuesReady never says True while pods wait for a missing
  // queue. No-op without --kai-queues or for other queues.
  void queue_deleted(const std::string& name);

  // One check (what the worker runs for its single key); public for tests.
  kube::ReconcileOutcome reconcile();
  kube::WorkQueue& queue() { return controller_.queue(); }

 private:
  struct Outcome {
    std::string status, reason, message;
  };
  kube::KResult<Outcome> ensure_queues();

  std::shared_ptr<act::QueueWriter> api_;
  std::shared_ptr<GlobalConfigStatus> status_;
  const observe::GlobalConfigView& global_config_;
  kube::EventRecorder* events_;
  KaiQueuesOptions options_;
  const common::Clock& clock_;
  kube::Controller controller_;

  std::mutex mu_;
  // What the last successful status write left on global-config: "<status>/<reason>" of KaiQueuesReady, or ""
  // for "removed"; unset before the first write.
  std::optional<std::string> written_;
  bool status_pending_ = false;  // the last write found no global-config
  common::Logger log_{"controller.kaiqueues"};
};

}  // namespace kubex::controllers
