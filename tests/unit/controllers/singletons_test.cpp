// API-4: the singleton bootstrap against a fake act::SingletonWriter: both singletons are ensured at start,
// retried while the answer is "cannot tell yet", and ensured again when one is deleted later (issue 12 item 9).
#include "controllers/singletons.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "act/singletons.h"

namespace kubex::controllers {
namespace {

using namespace std::chrono_literals;

class FakeSingletonWriter final : public act::SingletonWriter {
 public:
  act::EnsureOutcome ensure(api::Kind k, const std::string& name, std::string* detail) override {
    std::lock_guard lk(mu);
    calls.push_back(name);
    if (retries_left > 0) {
      --retries_left;
      if (detail) *detail = "the server could not find the requested resource";
      return act::EnsureOutcome::kRetry;
    }
    (void)k;
    return exists ? act::EnsureOutcome::kExists : act::EnsureOutcome::kCreated;
  }
  std::vector<std::string> seen() {
    std::lock_guard lk(mu);
    return calls;
  }
  std::mutex mu;
  std::vector<std::string> calls;
  int retries_left = 0;
  bool exists = false;
};

// Waits (with a deadline, never as an assertion of time) until the fake saw `n` calls.
std::vector<std::string> wait_calls(FakeSingletonWriter& w, std::size_t n) {
  auto until = std::chrono::steady_clock::now() + 60s;  // bounds a hang only
  while (w.seen().size() < n && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  return w.seen();
}

SingletonOptions fast() {
  SingletonOptions o;
  o.backoff_base = 1ms;
  o.backoff_cap = 2ms;
  return o;
}

TEST(SingletonBootstrap, EnsuresBothRetriesThenWaits) {  // API-4
  auto w = std::make_shared<FakeSingletonWriter>();
  w->retries_left = 1;  // the first answer: the CRD is not served yet
  SingletonBootstrap b(w, fast());
  b.start();
  auto calls = wait_calls(*w, 3);
  EXPECT_EQ(calls, (std::vector<std::string>{"global-config", "policy-evaluation", "global-config"}));
  auto until = std::chrono::steady_clock::now() + 60s;  // bounds a hang only
  while (!b.done() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(b.done());
  b.stop();
}

TEST(SingletonBootstrap, ADeletedSingletonIsEnsuredAgain) {  // API-4, issue 12 item 9
  auto w = std::make_shared<FakeSingletonWriter>();
  SingletonBootstrap b(w, fast());
  b.start();
  EXPECT_EQ(wait_calls(*w, 2).size(), 2u);
  b.singleton_deleted("global-config");
  auto calls = wait_calls(*w, 4);
  EXPECT_EQ(calls, (std::vector<std::string>{"global-config", "policy-evaluation", "global-config",
                                             "policy-evaluation"}));
  b.stop();
}

}  // namespace
}  // namespace kubex::controllers
