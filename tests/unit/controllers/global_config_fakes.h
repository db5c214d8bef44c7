// Fakes for the controller tests: global-config as the inventory caches it (parsed by the real api parser), a
// status writer that applies changes with the real act::apply_status_change to an in-memory status, and an
// event sink that records what the real EventRecorder writes.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "act/status.h"
#include "api/kinds.h"
#include "api/kubex_views.h"
#include "controllers/global_config_status.h"
#include "kube/runtime/event_recorder.h"
#include "observe/catalog_view.h"

namespace kubex::controllers::test {

using nlohmann::json;

inline const common::TimePoint kT0{std::chrono::seconds(1'800'000'000)};

// The cached global-config: `spec` and `status` as JSON, projected like the inventory does.
class FakeGlobalConfig final : public observe::GlobalConfigView {
 public:
  void set(const json& spec, const json& status = json::object(), std::int64_t generation = 1) {
    json obj = {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
                {"kind", "GlobalConfiguration"},
                {"metadata", {{"name", "global-config"}, {"uid", "uid-gc"}, {"generation", generation}}},
                {"spec", spec},
                {"status", status}};
    current_ = std::static_pointer_cast<const api::GlobalConfigObject>(
        api::project_kubex_object(api::Kind::kGlobalConfiguration, obj));
  }
  void remove() { current_ = nullptr; }
  std::shared_ptr<const api::GlobalConfigObject> global_config() const override { return current_; }

 private:
  std::shared_ptr<const api::GlobalConfigObject> current_;
};

class FakeStatus final : public GlobalConfigStatus {
 public:
  bool exists = true;
  std::int64_t generation = 1;
  json status = json::object();
  int writes = 0, calls = 0;
  std::optional<kube::ApiStatus> fail;  // the next update() fails with this (once)

  const std::string& name() const override { return name_; }
  kube::KResult<void> update(const act::StatusChange& change, common::TimePoint now) override {
    ++calls;
    if (fail) {
      auto e = *fail;
      fail.reset();
      return std::unexpected(e);
    }
    if (!exists)
      return std::unexpected(
          kube::ApiStatus{404, "NotFound", "globalconfigurations \"global-config\" not found"});
    json before = status;
    act::apply_status_change(status, change, generation, now);
    if (status != before) ++writes;
    return {};
  }

  const json* condition(const std::string& type) const {
    if (!status.contains("conditions")) return nullptr;
    for (const auto& c : status["conditions"]) {
      if (c.value("type", "") == type) return &c;
    }
    return nullptr;
  }
  std::string condition_text(const std::string& type) const {
    const json* c = condition(type);
    return c ? (*c)["status"].get<std::string>() + "/" + (*c)["reason"].get<std::string>() : "";
  }

 private:
  std::string name_ = "global-config";
};

struct RecordedEvent {
  std::string ns, type, reason, message, kind, name, uid, event_name;
  int count = 1;  // raised by the recorder's aggregation patches
};

class RecordingSink final : public kube::EventSink {
 public:
  explicit RecordingSink(std::vector<RecordedEvent>* out) : out_(out) {}
  std::string create(const std::string& ns, const json& ev) override {
    out_->push_back({ns, ev.value("type", ""), ev.value("reason", ""), ev.value("message", ""),
                     ev["involvedObject"].value("kind", ""), ev["involvedObject"].value("name", ""),
                     ev["involvedObject"].value("uid", ""), ev["metadata"].value("name", "")});
    return "";
  }
  std::string patch(const std::string&, const std::string& name, const json& p, bool& not_found) override {
    for (auto& e : *out_) {
      if (e.event_name == name) {
        e.count = p.value("count", e.count);
        not_found = false;
        return "";
      }
    }
    not_found = true;
    return "not found";
  }

 private:
  std::vector<RecordedEvent>* out_;
};

// An EventRecorder (no writer thread: tests call flush()) recording into `out`.
inline std::unique_ptr<kube::EventRecorder> recorder(std::vector<RecordedEvent>* out,
                                                     const common::Clock* clock) {
  kube::EventRecorderOptions o;
  o.clock = clock;
  return std::make_unique<kube::EventRecorder>(std::make_unique<RecordingSink>(out), o);
}

}  // namespace kubex::controllers::test
