// An in-process simulated cluster for workload controller tests: the real ApiServer and ClusterContext with a
// FakeClock and only the workload controllers (no scheduler, no kubelet: tests move pods through their phases
// by writing pod status themselves, as the kubelet would).
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/yaml.h"
#include "sim/apiserver/api_server.h"
#include "sim/cluster/cluster.h"
#include "sim/cluster/cluster_io.h"
#include "sim/cluster/context.h"
#include "sim/cluster/subsystem.h"

namespace kubex::sim::cluster::testing {

using nlohmann::json;

class Harness {
 public:
  explicit Harness(ClusterConfig config = ClusterConfig::defaults()) : api_(options(clock)), io_(api_) {
    api_.bootstrap(false);
    api_.start();
    ctx_ = std::make_unique<ClusterContext>(io_, std::move(config));
    auto crd = common::yaml_to_json(model_crd_yaml());
    EXPECT_TRUE(crd);
    EXPECT_TRUE(client().create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", *crd).ok());
    parts_ = make_workload_controllers(*ctx_);
    ctx_->start_feeds();
    for (auto& p : parts_) p->start();
  }
  ~Harness() {
    for (auto& p : parts_) p->stop();
    ctx_->stop_feeds();
    parts_.clear();
    ctx_.reset();
    api_.stop();
  }

  const Client& client() const { return ctx_->client(); }
  ClusterContext& ctx() { return *ctx_; }

  json get(const std::string& path) const {
    auto r = client().get(path);
    return r.ok() ? r.json() : json();
  }
  json create(const std::string& collection, const json& obj) const {
    auto r = client().create(collection, obj);
    EXPECT_TRUE(r.ok()) << collection << ": " << r.body;
    return r.json();
  }
  json patch(const std::string& path, const json& p) const {
    auto r = client().merge_patch(path, p);
    EXPECT_TRUE(r.ok()) << path << ": " << r.body;
    return r.json();
  }
  // Items of a LIST, optionally filtered by a label selector.
  json list(const std::string& collection, const std::string& selector = "") const {
    json l = get(collection + (selector.empty() ? "" : "?labelSelector=" + selector));
    return l.is_object() && l.contains("items") ? l["items"] : json::array();
  }
  // What the kubelet does for a started pod: Running, and Ready.
  void make_ready(const std::string& ns, const std::string& name) const {
    patch(core_path("pods", ns, name) + "/status",
          {{"status", {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
  }
  void set_phase(const std::string& ns, const std::string& name, const std::string& phase) const {
    patch(core_path("pods", ns, name) + "/status", {{"status", {{"phase", phase}}}});
  }

  // Polls `pred` until it holds or 15 s pass; returns whether it held.
  static bool eventually(const std::function<bool()>& pred,
                         std::chrono::milliseconds timeout = std::chrono::seconds(15)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return pred();
  }

  // Waits until the workload controllers have nothing left to do: every feed has delivered the store's
  // events, no key is queued, due or being reconciled, and no write landed meanwhile. After it, an assertion
  // that something did NOT happen needs no sleep. False when that takes more than 15 s.
  bool settled() {
    return eventually([&] {
      const std::uint64_t rv = api_.store().current_rv();
      if (!ctx_->feeds_caught_up()) return false;
      for (const auto& p : parts_) {
        if (!p->idle()) return false;
      }
      return api_.store().current_rv() == rv;
    });
  }

  common::FakeClock clock;

 private:
  static ApiServerOptions options(const common::Clock& c) {
    ApiServerOptions o;
    o.clock = &c;
    return o;
  }
  ApiServer api_;
  StoreIo io_;
  std::unique_ptr<ClusterContext> ctx_;
  std::vector<std::unique_ptr<Subsystem>> parts_;
};

}  // namespace kubex::sim::cluster::testing
