// Controller result handling (issue 4 item 2, DESIGN §7 controller-runtime): what happens to a key after
// success, error, requeue, requeue_after and an exception, and the reconcile metrics.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>

#include "kube/runtime/controller.h"
#include "kube/runtime/metrics.h"

namespace kubex::kube {
namespace {

using namespace std::chrono_literals;

struct ControllerFixture : ::testing::Test {
  common::FakeClock clock;
  Metrics metrics;
  ReconcileOutcome next = ReconcileResult{};
  bool throw_next = false;
  std::vector<std::string> seen;

  std::unique_ptr<Controller> make() {
    ControllerOptions o;
    o.clock = &clock;
    o.metrics = &metrics;
    o.rate_limiter = std::make_unique<ItemExponentialRateLimiter>(5ms, 1000s);
    return std::make_unique<Controller>(
        "widgets",
        [this](const std::string& key) -> ReconcileOutcome {
          seen.push_back(key);
          if (throw_next) throw std::runtime_error("boom");
          return next;
        },
        std::move(o));
  }

  // Takes the key from the queue (non-blocking) and reconciles it as a worker would.
  std::string_view step(Controller& c, const std::string& key) {
    auto k = c.queue().try_get();
    EXPECT_EQ(k, key);
    if (!k) return "";
    auto r = c.reconcile_key(*k);
    c.queue().done(*k);
    return r;
  }
};

TEST_F(ControllerFixture, SuccessForgetsTheKey) {
  auto c = make();
  c->queue().add_rate_limited("ns/a");  // a history of one failure
  clock.advance(5ms);
  EXPECT_EQ(step(*c, "ns/a"), "success");
  EXPECT_EQ(c->queue().num_requeues("ns/a"), 0);
  EXPECT_EQ(c->queue().len() + c->queue().waiting_len(), 0u);
}

TEST_F(ControllerFixture, ErrorRequeuesWithGrowingBackoff) {
  auto c = make();
  next = std::unexpected(std::string("API unavailable"));
  c->enqueue("ns/a");
  EXPECT_EQ(step(*c, "ns/a"), "error");
  EXPECT_EQ(c->queue().num_requeues("ns/a"), 1);
  EXPECT_EQ(c->queue().waiting_len(), 1u);
  clock.advance(4ms);
  EXPECT_EQ(c->queue().try_get(), std::nullopt);
  clock.advance(1ms);
  EXPECT_EQ(step(*c, "ns/a"), "error");
  EXPECT_EQ(c->queue().num_requeues("ns/a"), 2);
  clock.advance(9ms);  // second back-off is 10 ms
  EXPECT_EQ(c->queue().try_get(), std::nullopt);
  clock.advance(1ms);
  next = ReconcileResult{};
  EXPECT_EQ(step(*c, "ns/a"), "success");
  EXPECT_EQ(c->queue().num_requeues("ns/a"), 0);
}

TEST_F(ControllerFixture, RequeueIsRateLimited) {
  auto c = make();
  next = ReconcileResult{.requeue = true};
  c->enqueue("ns/a");
  EXPECT_EQ(step(*c, "ns/a"), "requeue");
  EXPECT_EQ(c->queue().num_requeues("ns/a"), 1);
  EXPECT_EQ(c->queue().waiting_len(), 1u);
}

TEST_F(ControllerFixture, RequeueAfterForgetsAndWaitsExactly) {
  auto c = make();
  c->queue().add_rate_limited("ns/a");
  clock.advance(5ms);
  next = ReconcileResult{.requeue = true, .requeue_after = 30s};  // requeue_after wins over requeue
  EXPECT_EQ(step(*c, "ns/a"), "requeue_after");
  EXPECT_EQ(c->queue().num_requeues("ns/a"), 0);
  clock.advance(30s - 1ms);
  EXPECT_EQ(c->queue().try_get(), std::nullopt);
  clock.advance(1ms);
  next = ReconcileResult{};
  EXPECT_EQ(step(*c, "ns/a"), "success");
}

TEST_F(ControllerFixture, ExceptionIsCaughtAndCountedAsError) {
  auto c = make();
  throw_next = true;
  c->enqueue("ns/a");
  EXPECT_EQ(step(*c, "ns/a"), "error");
  EXPECT_EQ(c->queue().num_requeues("ns/a"), 1);
  std::string text = metrics.render();
  EXPECT_NE(text.find(R"(controller_runtime_reconcile_total{controller="widgets",result="error"} 1)"),
            std::string::npos)
      << text;
}

TEST_F(ControllerFixture, MetricsCountEveryResult) {
  auto c = make();
  std::string text = metrics.render();
  // All four results exist at 0 as soon as the controller does (like controller-runtime).
  for (const char* r : {"success", "error", "requeue", "requeue_after"}) {
    EXPECT_NE(text.find(std::string(R"(controller_runtime_reconcile_total{controller="widgets",result=")") +
                        r + "\"} 0"),
              std::string::npos)
        << r;
  }
  c->enqueue("ns/a");
  c->enqueue("ns/b");
  step(*c, "ns/a");
  step(*c, "ns/b");
  text = metrics.render();
  EXPECT_NE(text.find(R"(controller_runtime_reconcile_total{controller="widgets",result="success"} 2)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(controller_runtime_reconcile_time_seconds_count{controller="widgets"} 2)"),
            std::string::npos);
  EXPECT_NE(text.find(R"(workqueue_adds_total{name="widgets"} 2)"), std::string::npos);
  EXPECT_NE(text.find(R"(workqueue_depth{name="widgets"} 0)"), std::string::npos);
}

TEST(Controller, WorkersProcessUntilStopped) {
  std::atomic<int> done{0};
  ControllerOptions o;
  o.workers = 2;
  Controller live(
      "live",
      [&](const std::string&) -> ReconcileOutcome {
        ++done;
        return ReconcileResult{};
      },
      std::move(o));
  for (int i = 0; i < 10; ++i) live.enqueue("k" + std::to_string(i));
  live.start();
  while (done < 10) std::this_thread::yield();
  live.stop();
  EXPECT_EQ(done, 10);
  EXPECT_TRUE(live.queue().shutting_down());
  live.enqueue("late");  // ignored after stop
  EXPECT_EQ(live.queue().len(), 0u);
}

}  // namespace
}  // namespace kubex::kube
