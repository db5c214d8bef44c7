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

namespace {

observe::CatalogOptions catalog_options(const std::string& gc, const std::string& pe) {
  observe::CatalogOptions o;
  o.global_config_name = gc;
  o.policy_evaluation_name = pe;
  return o;
}

}  // namespace

CommandCaches::CommandCaches(const std::shared_ptr<kube::Client>& client, const std::string& global_config_name,
                             const std::string& policy_evaluation_name)
    : caches(observe::make_caches(client)),
      catalog(client, catalog_options(global_config_name, policy_evaluation_name)) {
  std::vector<std::shared_ptr<kube::Informer>> informers;
  for (auto& [n, inf] : caches.all()) informers.push_back(inf);
  for (auto& [n, inf] : catalog.informers()) informers.push_back(inf);
  synced_ = std::make_unique<SyncedInformers>(std::move(informers));
}

std::string CommandCaches::sync() const {
  const std::string stuck = synced_->wait();
  return stuck.empty() ? "" : "cannot read " + stuck + " from the API server";
}

}  // namespace kubex::engine
