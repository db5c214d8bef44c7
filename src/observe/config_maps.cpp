#include "observe/config_maps.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace kubex::observe {

using nlohmann::json;

namespace {

std::string resource_version_of(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return "";
  return obj["metadata"].value("resourceVersion", "");
}

class ClientConfigMaps final : public ConfigMapSource {
 public:
  explicit ClientConfigMaps(std::shared_ptr<kube::Client> client) : client_(std::move(client)) {}
  ~ClientConfigMaps() override { stop(); }

  kube::KResult<ConfigMapRead> get(const std::string& ns, const std::string& name) override {
    auto cm = client_->get(kube::resource_path("", "v1", "configmaps", ns, name));
    ConfigMapRead out;
    if (!cm) {
      if (cm.error().not_found()) return out;
      return std::unexpected(cm.error());
    }
    out.found = true;
    out.resource_version = resource_version_of(*cm);
    if (cm->contains("data") && (*cm)["data"].is_object()) {
      for (const auto& [k, v] : (*cm)["data"].items()) {
        if (v.is_string()) out.data[k] = v.get<std::string>();
      }
    }
    return out;
  }

  void follow(const std::string& ns, const std::string& name, Handler changed) override {
    std::lock_guard lk(mu_);
    ns_ = ns;
    name_ = name;
    handler_ = std::move(changed);
    if (!thread_.joinable()) {
      stop_ = false;
      thread_ = std::thread([this] { loop(); });
    }
    cv_.notify_all();
  }

  void stop() override {
    std::thread t;
    {
      std::lock_guard lk(mu_);
      stop_ = true;
      name_.clear();
      handler_ = nullptr;
      t = std::move(thread_);
    }
    cv_.notify_all();
    if (t.joinable()) t.join();
  }

 private:
  void loop() {
    while (!stop_) {
      std::string ns, name;
      Handler handler;
      {
        std::unique_lock lk(mu_);
        if (name_.empty()) {
          cv_.wait_for(lk, std::chrono::seconds(1), [this] { return stop_ || !name_.empty(); });
          continue;
        }
        ns = ns_;
        name = name_;
        handler = handler_;
      }
      kube::WatchOptions wo;
      wo.field_selector = "metadata.name=" + name;
      wo.timeout_seconds = 30;  // a location change is picked up within this
      wo.allow_bookmarks = false;
      auto r = client_->watch(
          kube::resource_path("", "v1", "configmaps", ns), wo,
          [this, &handler](kube::WatchEvent&& ev) {
            ConfigMapEvent e;
            if (ev.type == "ADDED") {
              e.type = ConfigMapEvent::Type::kAdded;
            } else if (ev.type == "MODIFIED") {
              e.type = ConfigMapEvent::Type::kModified;
            } else if (ev.type == "DELETED") {
              e.type = ConfigMapEvent::Type::kDeleted;
            } else {
              return !stop_;  // BOOKMARK, ERROR: nothing changed
            }
            if (ev.object) e.resource_version = resource_version_of(*ev.object);
            if (handler) handler(e);
            return !stop_;
          },
          &stop_);
      if (!r && !stop_) {
        // Without watch permission the owner's other reload triggers still work; try again later.
        std::unique_lock lk(mu_);
        cv_.wait_for(lk, std::chrono::seconds(5), [this] { return stop_.load(); });
      }
    }
  }

  std::shared_ptr<kube::Client> client_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string ns_, name_;
  Handler handler_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

std::unique_ptr<ConfigMapSource> client_config_maps(std::shared_ptr<kube::Client> client) {
  return std::make_unique<ClientConfigMaps>(std::move(client));
}

}  // namespace kubex::observe
