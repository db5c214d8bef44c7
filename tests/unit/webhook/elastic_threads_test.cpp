// The webhook server's reused, growing threads (elastic_threads.h), and what they are for: every open
// keep-alive connection is served at once, also beyond the kept threads (ADM-2: answers within 8 s), and
// handler threads are reused between requests. Waits use deadlines, never bare sleeps.
#include "webhook/elastic_threads.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "common/x509.h"
#include "webhook/certs.h"
#include "webhook/server.h"

namespace kubex::webhook {
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
    auto until = std::chrono::steady_clock::now() + 5s;
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

std::string review(const std::string& uid) {
  return nlohmann::json{{"apiVersion", "admission.k8s.io/v1"},
                        {"kind", "AdmissionReview"},
                        {"request",
                         {{"uid", uid},
                          {"operation", "CREATE"},
                          {"object", {{"metadata", {{"name", "p"}}}}},
                          {"kind", {{"kind", "Pod"}}}}}}
      .dump();
}

// ADM-2: more open keep-alive connections than kept threads are all answered at once; before, a connection
// beyond `threads` waited until another one closed (5 s keep-alive), longer than the API server waits.
TEST(ElasticThreads, ServerAnswersMoreKeepAliveConnectionsThanKeptThreads) {
  auto certs = generate_self_signed({});
  ASSERT_TRUE(certs.has_value());
  auto cert = ServingCertificate::from_pem(certs->serving);
  ASSERT_TRUE(cert.has_value());
  ServerOptions so;
  so.bind_address = "127.0.0.1:0";
  so.threads = 2;
  Server server(so, *cert);
  std::set<std::thread::id> handler_threads;
  std::mutex mu;
  server.handle("/mutate", [&](const AdmissionRequest&) {
    std::lock_guard lk(mu);
    handler_threads.insert(std::this_thread::get_id());
    return AdmissionResponse::allow();
  });
  ASSERT_TRUE(server.start().has_value());

  constexpr int kConnections = 6;
  std::vector<std::unique_ptr<httplib::SSLClient>> clients;
  for (int i = 0; i < kConnections; ++i) {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", server.port());
    c->set_ca_cert_store(common::make_store(certs->ca.cert_pem)->release());
    c->enable_server_certificate_verification(true);
    c->set_keep_alive(true);
    c->set_read_timeout(3, 0);  // well below the 5 s keep-alive a starved connection waited for
    clients.push_back(std::move(c));
  }
  // Every connection answers one request and stays open; then each answers again on the same connection.
  for (int round = 0; round < 2; ++round) {
    std::vector<std::future<int>> answers;
    for (int i = 0; i < kConnections; ++i) {
      answers.push_back(std::async(std::launch::async, [&, i] {
        auto res = clients[static_cast<std::size_t>(i)]->Post("/mutate", review("u" + std::to_string(i)),
                                                              "application/json");
        return res ? res->status : -1;
      }));
    }
    for (auto& a : answers) {
      ASSERT_EQ(a.wait_for(5s), std::future_status::ready);
      EXPECT_EQ(a.get(), 200);
    }
  }
  clients.clear();  // closes the connections, so that stop() does not wait for their keep-alive to end
  server.stop();
  EXPECT_GE(handler_threads.size(), 1u);
}

}  // namespace
}  // namespace kubex::webhook
