#include "engine/synced_informers.h"

#include <chrono>

#include "kube/cache/informer.h"

namespace kubex::engine {
namespace {

constexpr auto kSyncTimeout = std::chrono::seconds(60);
constexpr auto kGiveUpOnErrors = std::chrono::seconds(10);

}  // namespace

SyncedInformers::SyncedInformers(std::vector<std::shared_ptr<kube::Informer>> informers)
    : informers_(std::move(informers)) {
  for (auto& i : informers_) i->start();
}

SyncedInformers::~SyncedInformers() {
  for (auto& i : informers_) i->stop();
}

std::string SyncedInformers::wait() const {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    const auto waited = std::chrono::steady_clock::now() - start;
    const kube::Informer* pending = nullptr;
    for (const auto& i : informers_) {
      if (i->synced()) continue;
      if (!pending) pending = i.get();
      if (waited >= kGiveUpOnErrors && i->stats().errors > 0) return i->path();
    }
    if (!pending) return "";
    if (waited >= kSyncTimeout) return pending->path();
    pending->wait_synced(std::chrono::milliseconds(200));
  }
}

}  // namespace kubex::engine
