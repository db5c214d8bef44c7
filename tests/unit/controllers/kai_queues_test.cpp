// QUE-1 / QUE-2: the queue objects, and one check of the kaiqueues controller against a fake Queue API (a map
// of queues plus discovery), the real status logic (act::apply_status_change) and the real EventRecorder.
#include "controllers/kai_queues.h"

#include "act/kai_queues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "global_config_fakes.h"

namespace kubex::controllers {
namespace {

using namespace std::chrono_literals;
using namespace test;

class FakeQueueApi final : public act::QueueWriter {
 public:
  bool served = true;
  std::optional<kube::ApiStatus> discovery_error, get_error, create_error;
  std::map<std::string, json> queues;
  std::vector<std::string> calls;

  kube::KResult<bool> queues_served() override {
    calls.push_back("discovery");
    if (discovery_error) return std::unexpected(*discovery_error);
    return served;
  }
  kube::KResult<bool> queue_exists(const std::string& name) override {
    calls.push_back("get " + name);
    if (get_error) return std::unexpected(*get_error);
    return queues.count(name) > 0;
  }
  kube::KResult<void> create_queue(const json& q) override {
    std::string name = q["metadata"]["name"];
    calls.push_back("create " + name);
    if (create_error) return std::unexpected(*create_error);
    if (queues.count(name)) return std::unexpected(kube::ApiStatus{409, "AlreadyExists", "exists"});
    queues[name] = q;
    return {};
  }
};

const json kUnlimited = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};

TEST(KaiQueueObject, ParentAndChildAsQue1Says) {  // QUE-1
  json parent = kai_queue_object("kubex-parent-queue", "");
  EXPECT_EQ(parent["apiVersion"], "scheduling.run.ai/v2");
  EXPECT_EQ(parent["kind"], "Queue");
  EXPECT_EQ(parent["metadata"]["name"], "kubex-parent-queue");
  EXPECT_FALSE(parent["metadata"].contains("namespace"));  // cluster-scoped
  EXPECT_EQ(parent["metadata"]["labels"],
            json({{"app.kubernetes.io/managed-by", "kubex-automation-engine"}}));
  EXPECT_FALSE(parent["spec"].contains("parentQueue"));  // no parent
  EXPECT_EQ(parent["spec"]["resources"],
            json({{"cpu", kUnlimited}, {"gpu", kUnlimited}, {"memory", kUnlimited}}));

  json child = kai_queue_object("kubex-unlimited-gpu-queue", "kubex-parent-queue");
  EXPECT_EQ(child["metadata"]["name"], "kubex-unlimited-gpu-queue");
  EXPECT_EQ(child["spec"]["parentQueue"], "kubex-parent-queue");
  EXPECT_EQ(child["spec"]["resources"], parent["spec"]["resources"]);
  EXPECT_EQ(child["metadata"]["labels"], parent["metadata"]["labels"]);

  // The parent is created before its child.
  ASSERT_EQ(builtin_kai_queues().size(), 2u);
  EXPECT_EQ(builtin_kai_queues()[0], std::make_pair(std::string("kubex-parent-queue"), std::string()));
  EXPECT_EQ(builtin_kai_queues()[1],
            std::make_pair(std::string("kubex-unlimited-gpu-queue"), std::string("kubex-parent-queue")));
}

struct Fixture {
  common::FakeClock clock{kT0};
  std::shared_ptr<FakeQueueApi> api = std::make_shared<FakeQueueApi>();
  std::shared_ptr<FakeStatus> status = std::make_shared<FakeStatus>();
  FakeGlobalConfig gc;
  std::vector<RecordedEvent> events;
  std::unique_ptr<kube::EventRecorder> recorder = test::recorder(&events, &clock);
  std::unique_ptr<KaiQueuesController> ctrl;

  explicit Fixture(bool enabled) {
    gc.set(json::object());
    KaiQueuesOptions o;
    o.enabled = enabled;
    o.clock = &clock;
    ctrl = std::make_unique<KaiQueuesController>(api, status, gc, recorder.get(), o);
  }
  kube::ReconcileResult run() {
    auto r = ctrl->reconcile();
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error());
    recorder->flush();
    return r ? *r : kube::ReconcileResult{};
  }
};

TEST(KaiQueuesController, CreatesBothQueuesParentFirstWithEvents) {  // QUE-1, QUE-2, OBS-2
  Fixture f(true);
  auto r = f.run();
  EXPECT_EQ(f.api->calls,
            (std::vector<std::string>{"discovery", "get kubex-parent-queue", "create kubex-parent-queue",
                                      "get kubex-unlimited-gpu-queue", "create kubex-unlimited-gpu-queue"}));
  EXPECT_EQ(f.api->queues["kubex-unlimited-gpu-queue"],
            kai_queue_object("kubex-unlimited-gpu-queue", "kubex-parent-queue"));
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "True/QueuesReady");
  EXPECT_EQ((*f.status->condition("KaiQueuesReady"))["observedGeneration"], 1);
  EXPECT_EQ(r.requeue_after, std::chrono::duration_cast<common::Duration>(5min));  // every 5m
  ASSERT_EQ(f.events.size(), 2u);
  for (const auto& e : f.events) {
    EXPECT_EQ(e.type, "Normal");
    EXPECT_EQ(e.reason, "QueueCreated");
    EXPECT_EQ(e.kind, "GlobalConfiguration");
    EXPECT_EQ(e.name, "global-config");
    EXPECT_EQ(e.uid, "uid-gc");
  }
  EXPECT_NE(f.events[0].message.find("kubex-parent-queue"), std::string::npos);
  EXPECT_NE(f.events[1].message.find("kubex-unlimited-gpu-queue"), std::string::npos);

  // The next check finds both: nothing created, no event, no status write.
  f.api->calls.clear();
  int writes = f.status->writes;
  f.run();
  EXPECT_EQ(f.api->calls, (std::vector<std::string>{"discovery", "get kubex-parent-queue",
                                                    "get kubex-unlimited-gpu-queue"}));
  EXPECT_EQ(f.events.size(), 2u);
  EXPECT_EQ(f.status->writes, writes);
}

TEST(KaiQueuesController, ExistingQueueIsNeverModifiedAndDeletedOneIsRecreated) {  // QUE-1
  Fixture f(true);
  json custom = {{"metadata", {{"name", "kubex-unlimited-gpu-queue"}}},
                 {"spec", {{"parentQueue", "team-a"}}}};
  f.api->queues["kubex-unlimited-gpu-queue"] = custom;
  f.run();
  EXPECT_EQ(f.api->queues["kubex-unlimited-gpu-queue"], custom);  // untouched (the fake has no update at all)
  EXPECT_EQ(f.api->queues.count("kubex-parent-queue"), 1u);
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "True/QueuesReady");

  f.api->queues.erase("kubex-parent-queue");
  f.run();
  EXPECT_EQ(f.api->queues.count("kubex-parent-queue"), 1u);
  // The same event again: the recorder aggregates it into the first Event (count 2).
  ASSERT_EQ(f.events.size(), 1u);
  EXPECT_EQ(f.events[0].count, 2);
  EXPECT_EQ(f.api->queues["kubex-unlimited-gpu-queue"], custom);
}

TEST(KaiQueuesController, NoQueueApiIsReportedAndCheckedAgain) {  // QUE-2
  Fixture f(true);
  f.api->served = false;
  auto r = f.run();
  EXPECT_EQ(f.api->calls, std::vector<std::string>{"discovery"});  // nothing created
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "False/QueueAPINotInstalled");
  EXPECT_GT(r.requeue_after, common::Duration::zero());  // keeps checking
  EXPECT_LE(r.requeue_after, std::chrono::duration_cast<common::Duration>(1min));
  EXPECT_TRUE(f.events.empty());

  // KAI gets installed: the next check creates the queues and flips the condition.
  f.api->served = true;
  f.run();
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "True/QueuesReady");
  EXPECT_EQ(f.api->queues.size(), 2u);
}

TEST(KaiQueuesController, FailedCreateCarriesTheError) {  // QUE-2: False/QueueCreateFailed
  Fixture f(true);
  f.api->create_error = kube::ApiStatus{403, "Forbidden", "queues.scheduling.run.ai is forbidden"};
  auto r = f.run();
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "False/QueueCreateFailed");
  std::string msg = (*f.status->condition("KaiQueuesReady"))["message"];
  EXPECT_NE(msg.find("kubex-parent-queue"), std::string::npos) << msg;
  EXPECT_NE(msg.find("queues.scheduling.run.ai is forbidden"), std::string::npos) << msg;
  // The child is not attempted without its parent; retried within a minute.
  EXPECT_EQ(std::count(f.api->calls.begin(), f.api->calls.end(), "create kubex-unlimited-gpu-queue"), 0);
  EXPECT_LE(r.requeue_after, std::chrono::duration_cast<common::Duration>(1min));
  EXPECT_TRUE(f.events.empty());
}

TEST(KaiQueuesController, ConcurrentCreateCountsAsPresent) {  // QUE-1 (another replica or user won the race)
  Fixture f(true);
  f.api->create_error = kube::ApiStatus{409, "AlreadyExists", "queues \"kubex-parent-queue\" already exists"};
  f.run();
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "True/QueuesReady");
  EXPECT_TRUE(f.events.empty());  // this engine created nothing
}

TEST(KaiQueuesController, ApiErrorsAreRetriedWithoutTouchingTheCondition) {  // ENG-2
  Fixture f(true);
  f.run();
  ASSERT_EQ(f.status->condition_text("KaiQueuesReady"), "True/QueuesReady");
  f.api->discovery_error = kube::ApiStatus{503, "ServiceUnavailable", "etcd down"};
  auto r = f.ctrl->reconcile();
  ASSERT_FALSE(r.has_value());  // an error: the work queue backs off
  EXPECT_NE(r.error().find("etcd down"), std::string::npos);
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "True/QueuesReady");
  f.api->discovery_error.reset();
  f.api->get_error = kube::ApiStatus{0, "Transport", "connection reset"};
  EXPECT_FALSE(f.ctrl->reconcile().has_value());
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "True/QueuesReady");
}

TEST(KaiQueuesController, MissingGlobalConfigIsRetriedSoonAndWhenItAppears) {  // QUE-2 with API-4 pending
  Fixture f(true);
  f.status->exists = false;
  f.gc.remove();
  auto r = f.run();
  EXPECT_EQ(f.api->queues.size(), 2u);  // the queues do not wait for global-config
  EXPECT_EQ(r.requeue_after, std::chrono::duration_cast<common::Duration>(10s));
  // The object appears: the informer event queues a check at once.
  f.status->exists = true;
  f.gc.set(json::object());
  ASSERT_EQ(f.ctrl->queue().len(), 0u);
  f.ctrl->global_config_changed();
  EXPECT_EQ(f.ctrl->queue().len(), 1u);
  f.run();
  EXPECT_EQ(f.status->condition_text("KaiQueuesReady"), "True/QueuesReady");
}

TEST(KaiQueuesController, OwnStatusWritesDoNotRetrigger) {  // no loop on our own global-config updates
  Fixture f(true);
  f.run();
  // The informer now shows what this controller wrote: no new check.
  f.gc.set(json::object(), f.status->status);
  f.ctrl->global_config_changed();
  EXPECT_EQ(f.ctrl->queue().len(), 0u);
  // Someone removed the condition (or recreated the object): check again.
  f.gc.set(json::object(), json::object());
  f.ctrl->global_config_changed();
  EXPECT_EQ(f.ctrl->queue().len(), 1u);
}

TEST(KaiQueuesController, DisabledOnlyRemovesTheCondition) {  // QUE-2: feature off; QUE-1: nothing deleted
  Fixture f(false);
  f.status->status = {
      {"conditions",
       json::array(
           {{{"type", "KaiQueuesReady"}, {"status", "True"}, {"reason", "QueuesReady"}, {"message", ""}},
            {{"type", "PodAdmissionWebhookHealthy"},
             {"status", "True"},
             {"reason", "ProbeSucceeded"},
             {"message", ""}}})}};
  f.gc.set(json::object(), f.status->status);
  f.api->queues["kubex-parent-queue"] = kai_queue_object("kubex-parent-queue", "");
  auto r = f.run();
  EXPECT_TRUE(f.api->calls.empty());  // no discovery, no create, and the API has no delete at all
  EXPECT_EQ(f.status->condition("KaiQueuesReady"), nullptr);
  EXPECT_EQ(f.status->condition_text("PodAdmissionWebhookHealthy"), "True/ProbeSucceeded");  // others kept
  EXPECT_EQ(r.requeue_after, common::Duration::zero());
  EXPECT_FALSE(r.requeue);

  // Without the condition there is nothing to write.
  f.gc.set(json::object(), f.status->status);
  int calls = f.status->calls;
  f.run();
  EXPECT_EQ(f.status->calls, calls);
  f.ctrl->global_config_changed();
  EXPECT_EQ(f.ctrl->queue().len(), 0u);
}

}  // namespace
}  // namespace kubex::controllers
