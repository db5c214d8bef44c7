// The KAI-Scheduler queues the cluster has (scheduling.run.ai/v2 Queue names), as VAL-2 reads them to warn
// about a strategy naming a queue that does not exist: the caches' Queue informer in the engine
// (cached_kai_queue_names), a fake in tests. Read-only (DESIGN §3 observe/).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>

namespace kubex::observe {

struct Caches;

class KaiQueueNames {
 public:
  virtual ~KaiQueueNames() = default;
  // The names of every Queue; nullopt while they are not known (the Queue API is not served, or its cache
  // has not synced yet).
  virtual std::optional<std::set<std::string>> names() const = 0;
};

std::shared_ptr<const KaiQueueNames> cached_kai_queue_names(const Caches& caches);

}  // namespace kubex::observe
