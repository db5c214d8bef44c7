// CON-7, CON-8, CON-9: act::client_tainter against a small API server holding one node with optimistic
// concurrency (a write whose metadata.resourceVersion is not the stored one is a 409 Conflict, as in Kubernetes).
#include "act/tainter.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"

namespace kubex::act {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Outcome = TaintResult::Outcome;

class TainterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = {{"apiVersion", "v1"},
             {"kind", "Node"},
             {"metadata", {{"name", "n1"}, {"resourceVersion", "1"}}},
             {"spec", {{"taints", json::array({{{"key", "dedicated"}, {"value", "x"}, {"effect", "NoSchedule"}}})}}}};
    server_.Get("/api/v1/nodes/n1", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lk(mu_);
      res.set_content(node_.dump(), "application/json");
      // Someone else writes between our GET and our PUT.
      if (interleave_ > 0) {
        --interleave_;
        bump();
      }
    });
    server_.Get("/api/v1/nodes/gone", [](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content(R"({"kind":"Status","status":"Failure","reason":"NotFound","code":404})", "application/json");
    });
    server_.Patch("/api/v1/nodes/n1", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lk(mu_);
      ++puts_;
      EXPECT_EQ(req.get_header_value("Content-Type"), "application/merge-patch+json");
      json patch = json::parse(req.body);
      json body = node_;
      body.merge_patch(patch);
      // Like kube-apiserver: a resourceVersion in the patch is a precondition.
      if (patch["metadata"].value("resourceVersion", "") != node_["metadata"]["resourceVersion"]) {
        res.status = 409;
        res.set_content(R"({"kind":"Status","status":"Failure","reason":"Conflict","code":409,)"
                        R"("message":"Operation cannot be fulfilled on nodes \"n1\": the object has been modified"})",
                        "application/json");
        return;
      }
      node_ = body;
      bump();
      res.set_content(node_.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
    kube::ConnectionConfig cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(port_);
    kube::ClientOptions opts;
    opts.max_retries = 0;
    tainter_ = client_tainter(*kube::Client::create(cfg, opts), common::Logger("test"));
  }
  void TearDown() override {
    tainter_.reset();
    server_.stop();
    thread_.join();
  }
  void bump() {
    node_["metadata"]["resourceVersion"] =
        std::to_string(std::stoi(node_["metadata"]["resourceVersion"].get<std::string>()) + 1);
  }
  json taints() {
    std::lock_guard lk(mu_);
    return node_["spec"].value("taints", json::array());
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  json node_;
  int interleave_ = 0;
  int puts_ = 0;
  std::shared_ptr<Tainter> tainter_;
};

TEST_F(TainterTest, AddsTheConsolidationTaintKeepingOthers) {  // CON-7 (1), SPEC §2 key
  TaintResult r = tainter_->add("n1", "pool-a");
  EXPECT_EQ(r.outcome, Outcome::kApplied) << r.message;
  EXPECT_EQ(taints(), json::parse(R"([{"key":"dedicated","value":"x","effect":"NoSchedule"},
      {"key":"rightsizing.kubex.ai/consolidating","value":"pool-a","effect":"NoSchedule"}])"));
  // Again: nothing written.
  EXPECT_EQ(tainter_->add("n1", "pool-a").outcome, Outcome::kUnchanged);
  EXPECT_EQ(puts_, 1);
}

TEST_F(TainterTest, NodeTaintedByAnotherPolicyIsSkipped) {  // CON-7 (1), CON-9
  ASSERT_TRUE(tainter_->add("n1", "pool-a").ok());
  TaintResult r = tainter_->add("n1", "pool-b");
  EXPECT_EQ(r.outcome, Outcome::kHeld);
  EXPECT_EQ(r.holder, "pool-a");
  EXPECT_EQ(puts_, 1);
  // Removing another policy's taint is a no-op too.
  EXPECT_EQ(tainter_->remove("n1", "pool-b").outcome, Outcome::kUnchanged);
  EXPECT_EQ(taints().size(), 2u);
}

TEST_F(TainterTest, AddIsGuardedByResourceVersion) {  // CON-7 (1): 409 is reported, not overwritten
  interleave_ = 1;
  TaintResult r = tainter_->add("n1", "pool-a");
  EXPECT_EQ(r.outcome, Outcome::kConflict);
  EXPECT_EQ(taints().size(), 1u);
  EXPECT_EQ(puts_, 1);
}

TEST_F(TainterTest, RemoveTakesOnlyItsOwnTaintAndRetriesConflicts) {  // CON-8, CON-9
  ASSERT_TRUE(tainter_->add("n1", "pool-a").ok());
  interleave_ = 1;  // the first attempt conflicts; the second (fresh GET) succeeds
  TaintResult r = tainter_->remove("n1", "pool-a");
  EXPECT_EQ(r.outcome, Outcome::kApplied) << r.message;
  EXPECT_EQ(taints(), json::parse(R"([{"key":"dedicated","value":"x","effect":"NoSchedule"}])"));
  EXPECT_EQ(tainter_->remove("n1", "pool-a").outcome, Outcome::kUnchanged);
}

TEST_F(TainterTest, MissingNode) {
  EXPECT_EQ(tainter_->add("gone", "pool-a").outcome, Outcome::kNotFound);
  EXPECT_EQ(tainter_->remove("gone", "pool-a").outcome, Outcome::kNotFound);
}

}  // namespace
}  // namespace kubex::act
