// Event recorder (OBS-2 plumbing): aggregation keys, the Event's shape, aggregation into count patches,
// the per-object rate limit and the bounded queue. A fake sink; a FakeClock.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kube/runtime/event_recorder.h"

namespace kubex::kube {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

ObjectReference pod(const std::string& name = "web-0") {
  return {"v1", "Pod", "team-a", name, "uid-" + name, "", ""};
}

class FakeSink : public EventSink {
 public:
  struct Call {
    std::string verb, ns, name;
    json body;
  };
  std::vector<Call>* calls;
  bool patch_not_found = false;
  explicit FakeSink(std::vector<Call>* c) : calls(c) {}
  std::string create(const std::string& ns, const json& ev) override {
    calls->push_back({"create", ns, ev["metadata"]["name"], ev});
    return "";
  }
  std::string patch(const std::string& ns, const std::string& name, const json& p, bool& not_found) override {
    calls->push_back({"patch", ns, name, p});
    not_found = patch_not_found;
    return patch_not_found ? "not found" : "";
  }
};

TEST(EventAggregationKey, SameObjectTypeReasonMessageAggregate) {
  auto k = event_aggregation_key(pod(), EventType::kNormal, "WouldEvict", "would evict");
  EXPECT_EQ(k, event_aggregation_key(pod(), EventType::kNormal, "WouldEvict", "would evict"));
  EXPECT_NE(k, event_aggregation_key(pod(), EventType::kWarning, "WouldEvict", "would evict"));
  EXPECT_NE(k, event_aggregation_key(pod(), EventType::kNormal, "EvictionBlocked", "would evict"));
  EXPECT_NE(k, event_aggregation_key(pod(), EventType::kNormal, "WouldEvict", "would evict now"));
  EXPECT_NE(k, event_aggregation_key(pod("web-1"), EventType::kNormal, "WouldEvict", "would evict"));
  auto other_uid = pod();
  other_uid.uid = "uid-new";  // a recreated pod of the same name is another object
  EXPECT_NE(k, event_aggregation_key(other_uid, EventType::kNormal, "WouldEvict", "would evict"));
  // Field boundaries cannot be confused.
  EXPECT_NE(event_aggregation_key(pod(), EventType::kNormal, "ab", "c"),
            event_aggregation_key(pod(), EventType::kNormal, "a", "bc"));
}

TEST(BuildEvent, IsACoreV1EventFromTheEngine) {
  EventRecorderOptions o;
  o.instance = "host_0000abcd";
  o.host = "host";
  common::FakeClock clock;
  json ev = build_event(pod(), EventType::kWarning, "EvictionBlocked", "PDB web blocks", clock.now(), o);
  EXPECT_EQ(ev["apiVersion"], "v1");
  EXPECT_EQ(ev["kind"], "Event");
  EXPECT_EQ(ev["metadata"]["namespace"], "team-a");
  EXPECT_EQ(ev["metadata"]["name"].get<std::string>().rfind("web-0.", 0), 0u);
  EXPECT_EQ(ev["involvedObject"]["kind"], "Pod");
  EXPECT_EQ(ev["involvedObject"]["uid"], "uid-web-0");
  EXPECT_EQ(ev["type"], "Warning");
  EXPECT_EQ(ev["reason"], "EvictionBlocked");
  EXPECT_EQ(ev["count"], 1);
  EXPECT_EQ(ev["firstTimestamp"], ev["lastTimestamp"]);
  EXPECT_EQ(ev["source"]["component"], "kubex-automation-engine");
  EXPECT_EQ(ev["reportingComponent"], "kubex-automation-engine");
  EXPECT_EQ(ev["reportingInstance"], "host_0000abcd");
  ObjectReference node{"v1", "Node", "", "gpu-1", "uid-n", "", ""};
  EXPECT_EQ(
      build_event(node, EventType::kNormal, "DrainStarted", "m", clock.now(), o)["metadata"]["namespace"],
      "default");
}

struct RecorderFixture : ::testing::Test {
  common::FakeClock clock;
  std::vector<FakeSink::Call> calls;
  FakeSink* sink = nullptr;
  std::unique_ptr<EventRecorder> make(std::size_t capacity = 100, int burst = 25) {
    auto s = std::make_unique<FakeSink>(&calls);
    sink = s.get();
    EventRecorderOptions o;
    o.clock = &clock;
    o.queue_capacity = capacity;
    o.per_object_burst = burst;
    return std::make_unique<EventRecorder>(std::move(s), o);
  }
};

TEST_F(RecorderFixture, RepeatsPatchCountAndLastTimestamp) {
  auto r = make();
  r->event(pod(), EventType::kNormal, "WouldEvict", "m");
  r->flush();
  clock.advance(10s);
  r->event(pod(), EventType::kNormal, "WouldEvict", "m");
  clock.advance(10s);
  r->event(pod(), EventType::kNormal, "WouldEvict", "m");
  r->event(pod(), EventType::kNormal, "WouldEvict", "other message");
  r->flush();
  ASSERT_EQ(calls.size(), 4u);
  EXPECT_EQ(calls[0].verb, "create");
  EXPECT_EQ(calls[1].verb, "patch");
  EXPECT_EQ(calls[1].name, calls[0].name);
  EXPECT_EQ(calls[1].body["count"], 2);
  EXPECT_EQ(calls[2].body["count"], 3);
  EXPECT_NE(calls[2].body["lastTimestamp"], calls[1].body["lastTimestamp"]);
  EXPECT_EQ(calls[3].verb, "create");  // a different message is a different event
  auto st = r->stats();
  EXPECT_EQ(st.created, 2u);
  EXPECT_EQ(st.aggregated, 2u);
}

TEST_F(RecorderFixture, AVanishedEventIsWrittenAgain) {
  auto r = make();
  r->event(pod(), EventType::kNormal, "R", "m");
  r->flush();
  sink->patch_not_found = true;
  r->event(pod(), EventType::kNormal, "R", "m");
  r->flush();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[1].verb, "patch");
  EXPECT_EQ(calls[2].verb, "create");
  EXPECT_EQ(calls[2].body["count"], 1);
}

TEST_F(RecorderFixture, PerObjectRateLimitDropsAStormThenRefills) {
  auto r = make(100, 3);
  for (int i = 0; i < 5; ++i) r->event(pod(), EventType::kNormal, "R", "m" + std::to_string(i));
  EXPECT_TRUE(r->event(pod("web-1"), EventType::kNormal, "R", "m"));  // other objects are unaffected
  EXPECT_EQ(r->stats().dropped_rate_limited, 2u);
  clock.advance(5min);  // one token back
  EXPECT_TRUE(r->event(pod(), EventType::kNormal, "R", "later"));
  EXPECT_FALSE(r->event(pod(), EventType::kNormal, "R", "later2"));
  r->flush();
  EXPECT_EQ(calls.size(), 5u);
}

TEST_F(RecorderFixture, FullQueueDropsWithoutBlocking) {
  auto r = make(2);
  EXPECT_TRUE(r->event(pod("a"), EventType::kNormal, "R", "m"));
  EXPECT_TRUE(r->event(pod("b"), EventType::kNormal, "R", "m"));
  EXPECT_FALSE(r->event(pod("c"), EventType::kNormal, "R", "m"));
  EXPECT_EQ(r->stats().dropped_queue_full, 1u);
  r->flush();
  EXPECT_EQ(calls.size(), 2u);
}

TEST_F(RecorderFixture, BackgroundWriterDrainsOnStop) {
  auto r = make();
  r->start();
  for (int i = 0; i < 10; ++i) r->event(pod("p" + std::to_string(i)), EventType::kNormal, "R", "m");
  r->stop(std::chrono::milliseconds(5000));
  EXPECT_EQ(calls.size(), 10u);
}

}  // namespace
}  // namespace kubex::kube
