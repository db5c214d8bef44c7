// Work queue semantics (issue 4 item 1; controller-runtime lessons, DESIGN §7): de-duplication, re-add while
// processing, rate-limited back-off growth and forget, add_after ordering, shutdown. Time is a FakeClock.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kube/runtime/workqueue.h"

namespace kubex::kube {
namespace {

using namespace std::chrono_literals;

class RecordingMetrics : public QueueMetrics {
 public:
  void depth(std::size_t n) override { last_depth = n; }
  void added() override { ++adds; }
  void retried() override { ++retries; }
  std::size_t last_depth = 0;
  int adds = 0, retries = 0;
};

struct QueueFixture : ::testing::Test {
  common::FakeClock clock;
  std::shared_ptr<RecordingMetrics> metrics = std::make_shared<RecordingMetrics>();
  std::unique_ptr<WorkQueue> make(std::unique_ptr<QueueRateLimiter> limiter = nullptr) {
    WorkQueueOptions o;
    o.name = "test";
    o.clock = &clock;
    o.metrics = metrics;
    o.rate_limiter = limiter ? std::move(limiter) : default_controller_rate_limiter(clock);
    return std::make_unique<WorkQueue>(std::move(o));
  }
};

TEST_F(QueueFixture, DeduplicatesQueuedKeys) {
  auto q = make();
  q->add("a");
  q->add("b");
  q->add("a");
  EXPECT_EQ(q->len(), 2u);
  EXPECT_EQ(metrics->adds, 2);  // a duplicate is not an add
  EXPECT_EQ(metrics->last_depth, 2u);
  EXPECT_EQ(q->try_get(), "a");
  EXPECT_EQ(q->try_get(), "b");
  EXPECT_EQ(q->try_get(), std::nullopt);
  EXPECT_EQ(metrics->last_depth, 0u);
}

TEST_F(QueueFixture, KeyAddedWhileProcessingIsQueuedAgainAfterDone) {
  auto q = make();
  q->add("a");
  ASSERT_EQ(q->try_get(), "a");
  EXPECT_TRUE(q->is_processing("a"));
  q->add("a");  // dirty while processing: not handed to a second worker
  q->add("a");
  EXPECT_EQ(q->len(), 0u);
  EXPECT_EQ(q->try_get(), std::nullopt);
  q->done("a");
  EXPECT_EQ(q->len(), 1u);
  EXPECT_EQ(q->try_get(), "a");
  q->done("a");
  EXPECT_EQ(q->len(), 0u);
}

TEST_F(QueueFixture, DoneWithoutReAddDoesNotRequeue) {
  auto q = make();
  q->add("a");
  ASSERT_EQ(q->try_get(), "a");
  q->done("a");
  EXPECT_EQ(q->len(), 0u);
  EXPECT_FALSE(q->is_processing("a"));
}

TEST_F(QueueFixture, AddAfterHoldsKeysUntilTheirTimeInOrder) {
  auto q = make();
  q->add_after("late", 300ms);
  q->add_after("early", 100ms);
  q->add_after("mid", 200ms);
  q->add_after("now", 0ms);
  EXPECT_EQ(q->waiting_len(), 3u);
  EXPECT_EQ(q->try_get(), "now");
  EXPECT_EQ(q->try_get(), std::nullopt);
  clock.advance(99ms);
  EXPECT_EQ(q->try_get(), std::nullopt);
  clock.advance(250ms);  // all three are due: they come out in ready-time order
  EXPECT_EQ(q->try_get(), "early");
  EXPECT_EQ(q->try_get(), "mid");
  EXPECT_EQ(q->try_get(), "late");
  EXPECT_EQ(q->waiting_len(), 0u);
}

TEST_F(QueueFixture, AddAfterKeepsTheEarlierTimeForAWaitingKey) {
  auto q = make();
  q->add_after("a", 500ms);
  q->add_after("a", 100ms);  // moves earlier
  q->add_after("a", 900ms);  // ignored: already due earlier
  EXPECT_EQ(q->waiting_len(), 1u);
  clock.advance(100ms);
  EXPECT_EQ(q->try_get(), "a");
  q->done("a");
  clock.advance(1s);
  EXPECT_EQ(q->try_get(), std::nullopt);
}

TEST_F(QueueFixture, DueKeyAlreadyQueuedIsNotDuplicated) {
  auto q = make();
  q->add("a");
  q->add_after("a", 10ms);
  clock.advance(10ms);
  EXPECT_EQ(q->try_get(), "a");
  EXPECT_EQ(q->try_get(), std::nullopt);
}

TEST(ItemExponentialRateLimiter, DoublesPerFailureUpToTheCapAndForgets) {
  ItemExponentialRateLimiter l(5ms, 1000s);
  std::vector<common::Duration> got;
  for (int i = 0; i < 5; ++i) got.push_back(l.when("k"));
  EXPECT_EQ(got, (std::vector<common::Duration>{5ms, 10ms, 20ms, 40ms, 80ms}));
  EXPECT_EQ(l.num_requeues("k"), 5);
  EXPECT_EQ(l.when("other"), common::Duration(5ms));  // per item
  for (int i = 0; i < 40; ++i) l.when("k");
  EXPECT_EQ(l.when("k"), common::Duration(1000s));  // capped (and no overflow)
  l.forget("k");
  EXPECT_EQ(l.num_requeues("k"), 0);
  EXPECT_EQ(l.when("k"), common::Duration(5ms));
}

TEST(BucketRateLimiter, BurstThenOneTokenPerInterval) {
  common::FakeClock clock;
  BucketRateLimiter l(10, 3, clock);
  EXPECT_EQ(l.when("a"), common::Duration::zero());
  EXPECT_EQ(l.when("b"), common::Duration::zero());
  EXPECT_EQ(l.when("c"), common::Duration::zero());
  EXPECT_EQ(l.when("d"), common::Duration(100ms));  // the next token in 1/qps
  EXPECT_EQ(l.when("e"), common::Duration(200ms));  // reservations queue up
  clock.advance(1s);                                // refills to the burst (minus what was reserved)
  EXPECT_EQ(l.when("f"), common::Duration::zero());
  EXPECT_EQ(l.num_requeues("f"), 0);
}

TEST(DefaultControllerRateLimiter, IsTheMaxOfItemBackoffAndBucket) {
  common::FakeClock clock;
  auto l = default_controller_rate_limiter(clock);
  EXPECT_EQ(l->when("k"), common::Duration(5ms));  // bucket has burst 100: item back-off dominates
  EXPECT_EQ(l->when("k"), common::Duration(10ms));
  for (int i = 0; i < 98; ++i) l->when("x" + std::to_string(i));  // exhaust the burst (100 in total)
  // The bucket (10 qps) now dominates a fresh key's 5 ms.
  EXPECT_EQ(l->when("fresh"), common::Duration(100ms));
  EXPECT_EQ(l->num_requeues("k"), 2);
  l->forget("k");
  EXPECT_EQ(l->num_requeues("k"), 0);
}

TEST_F(QueueFixture, RateLimitedAddBacksOffAndForgetResets) {
  auto q = make(std::make_unique<ItemExponentialRateLimiter>(5ms, 1000s));
  std::vector<common::Duration> waits;
  for (int attempt = 0; attempt < 4; ++attempt) {
    q->add_rate_limited("k");
    EXPECT_EQ(q->num_requeues("k"), attempt + 1);
    // Find how long the key waits: it is not ready 1 ms before its time, and is at its time.
    common::Duration expected = 5ms * (1 << attempt);
    clock.advance(expected - 1ms);
    EXPECT_EQ(q->try_get(), std::nullopt) << "attempt " << attempt;
    clock.advance(1ms);
    ASSERT_EQ(q->try_get(), "k") << "attempt " << attempt;
    q->done("k");
  }
  EXPECT_EQ(metrics->retries, 4);
  q->forget("k");
  EXPECT_EQ(q->num_requeues("k"), 0);
  q->add_rate_limited("k");
  clock.advance(5ms);
  EXPECT_EQ(q->try_get(), "k");
}

TEST_F(QueueFixture, ShutdownStopsHandingOutKeysAndIgnoresAdds) {
  auto q = make();
  q->add("a");
  q->shutdown();
  EXPECT_TRUE(q->shutting_down());
  EXPECT_EQ(q->get(), std::nullopt);  // does not block
  EXPECT_EQ(q->try_get(), std::nullopt);
  q->add("b");
  q->add_after("c", 1ms);
  q->add_rate_limited("d");
  EXPECT_EQ(q->waiting_len(), 0u);
}

TEST_F(QueueFixture, ShutdownWakesABlockedGet) {
  auto q = make();
  std::optional<std::string> got = "unset";
  std::thread t([&] { got = q->get(); });
  q->shutdown();
  t.join();
  EXPECT_EQ(got, std::nullopt);
}

TEST_F(QueueFixture, BlockedGetReceivesAnAdd) {
  auto q = make();
  std::optional<std::string> got;
  std::thread t([&] { got = q->get(); });
  q->add("x");
  t.join();
  EXPECT_EQ(got, "x");
}

TEST(WorkQueueRealClock, BlockedGetReceivesADelayedKey) {
  WorkQueueOptions o;
  o.name = "real";
  WorkQueue q(std::move(o));
  q.add_after("x", 20ms);
  EXPECT_EQ(q.get(), "x");  // no time assertion: it only has to arrive
}

}  // namespace
}  // namespace kubex::kube
