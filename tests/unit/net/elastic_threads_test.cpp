// Reused, growing threads (net/elastic_threads.h): an idle thread is reused, threads grow beyond the kept
// ones up to the maximum, and shutdown finishes what runs (what the webhook server does with them is in
// tests/unit/webhook/listener_test.cpp). Waits use deadlines, never bare sleeps.
#include "net/elastic_threads.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <set>
#include <thread>
#include <vector>

namespace kubex::net {
namespace {

using namespace std::chrono_literals;

// Counts tasks running at once; each task blocks until released.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0, peak = 0, done = 0;
  bool open = false;
  std::function<void()> task() {
    return [this] {
      std::unique_lock lk(mu);
      peak = std::max(peak, ++running);
      cv.notify_all();
      cv.wait(lk, [this] { return open; });
      --running;
      ++done;
      cv.notify_all();
    };
  }
  bool wait_running(int n) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, 5s, [&] { return running == n; });
  }
  bool wait_done(int n) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, 5s, [&] { return done == n; });
  }
  void release() {
    std::lock_guard lk(mu);
    open = true;
    cv.notify_all();
  }
};

TEST(ElasticThreads, ReusesAnIdleThread) {
  ElasticThreads threads(2, 8);
  std::set<std::thread::id> ids;
  for (int i = 0; i < 20; ++i) {
    std::promise<std::thread::id> p;
    auto f = p.get_future();
    ASSERT_TRUE(threads.run([&p] { p.set_value(std::this_thread::get_id()); }));
    ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
    ids.insert(f.get());
    // The worker becomes idle just after setting the value.
    auto until = std::chrono::steady_clock::now() + 60s;  // bounds a hang only
    while (threads.idle_threads() < 1 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    ASSERT_EQ(threads.idle_threads(), 1u);
  }
  EXPECT_EQ(ids.size(), 1u);  // sequential tasks run on the kept thread, not on a new thread each
  threads.shutdown();
  threads.wait();
}

TEST(ElasticThreads, GrowsBeyondTheKeptThreadsUpToTheMaximum) {
  ElasticThreads threads(1, 4);
  Gate gate;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(threads.run(gate.task()));
  EXPECT_TRUE(gate.wait_running(4));  // four at once, although only one thread is kept
  gate.release();
  EXPECT_TRUE(gate.wait_done(6));  // the two queued tasks ran when threads became free
  EXPECT_EQ(gate.peak, 4);
  threads.shutdown();
  threads.wait();
}

TEST(ElasticThreads, ShutdownFinishesRunningTasksAndWaitWaitsForThem) {
  ElasticThreads threads(2, 2);
  Gate gate;
  ASSERT_TRUE(threads.run(gate.task()));
  ASSERT_TRUE(threads.run(gate.task()));
  ASSERT_TRUE(threads.run(gate.task()));  // queued: two threads at most
  ASSERT_TRUE(gate.wait_running(2));
  threads.shutdown();
  auto waited = std::async(std::launch::async, [&] { threads.wait(); });
  EXPECT_EQ(waited.wait_for(50ms), std::future_status::timeout);  // tasks still blocked
  gate.release();
  EXPECT_EQ(waited.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(gate.done, 3);  // the queued task ran too
  // After shutdown a task still runs, on a thread of its own.
  std::promise<void> ran;
  ASSERT_TRUE(threads.run([&] { ran.set_value(); }));
  EXPECT_EQ(ran.get_future().wait_for(5s), std::future_status::ready);
  threads.wait();
}

}  // namespace
}  // namespace kubex::net
