#include "observe/kai_queues.h"

#include "kube/cache/informer.h"
#include "observe/caches.h"

namespace kubex::observe {

namespace {

class CachedKaiQueueNames final : public KaiQueueNames {
 public:
  explicit CachedKaiQueueNames(const Caches& caches) : caches_(caches) {}
  std::optional<std::set<std::string>> names() const override {
    const auto& queues = caches_.queues;
    if (!queues || !queues->synced() || queues->absent()) return std::nullopt;
    std::set<std::string> out;
    for (const auto& q : queues->list()) out.insert(q->name);
    return out;
  }

 private:
  const Caches& caches_;
};

}  // namespace

std::shared_ptr<const KaiQueueNames> cached_kai_queue_names(const Caches& caches) {
  return std::make_shared<CachedKaiQueueNames>(caches);
}

}  // namespace kubex::observe
