#include "net/deadlines.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace kubex::net {

struct Deadlines::Core {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::pair<Clock::time_point, Token>, std::function<void()>> due;
  std::map<Token, Clock::time_point> when;
  Token next = 1;
  Token running = 0;  // the token whose fn runs now
  // When the thread wakes next (max: only when told). arm() wakes it only for an earlier deadline, so a
  // steady stream of requests with equal deadlines costs the thread no wake-up per request.
  Clock::time_point wake = Clock::time_point::max();
  bool stop = false, started = false;
  std::thread::id thread_id;

  static void run(std::shared_ptr<Core> core) {
    Core& c = *core;
    std::unique_lock lk(c.mu);
    while (!c.stop) {
      if (c.due.empty()) {
        c.wake = Clock::time_point::max();
        c.cv.wait(lk);
        continue;
      }
      auto first = c.due.begin();
      if (Clock::now() < first->first.first) {
        c.wake = first->first.first;
        c.cv.wait_until(lk, c.wake);
        continue;
      }
      Token t = first->first.second;
      std::function<void()> fn = std::move(first->second);
      c.due.erase(first);
      c.when.erase(t);
      c.running = t;
      lk.unlock();
      try {
        fn();
      } catch (...) {
      }
      fn = nullptr;  // its captures go before the lock is taken again
      lk.lock();
      c.running = 0;
      c.cv.notify_all();
    }
  }
};

Deadlines::Deadlines() : core_(std::make_shared<Core>()) {}

Deadlines::~Deadlines() {
  std::map<std::pair<Clock::time_point, Token>, std::function<void()>> dropped;
  {
    std::lock_guard lk(core_->mu);
    core_->stop = true;
    dropped.swap(core_->due);
    core_->when.clear();
  }
  core_->cv.notify_all();  // the thread ends by itself; it holds the core
}

Deadlines::Token Deadlines::arm(Clock::time_point when, std::function<void()> fn) {
  Core& c = *core_;
  std::lock_guard lk(c.mu);
  Token t = c.next++;
  c.due.emplace(std::make_pair(when, t), std::move(fn));
  c.when.emplace(t, when);
  if (!c.started) {
    c.started = true;
    std::thread th(&Core::run, core_);
    c.thread_id = th.get_id();
    th.detach();
  } else if (when < c.wake) {
    c.wake = when;
    c.cv.notify_all();
  }
  return t;
}

bool Deadlines::cancel(Token token) {
  Core& c = *core_;
  std::unique_lock lk(c.mu);
  if (auto it = c.when.find(token); it != c.when.end()) {
    c.due.erase({it->second, token});
    c.when.erase(it);
    return true;
  }
  if (c.running == token && c.thread_id != std::this_thread::get_id()) {
    c.cv.wait(lk, [&] { return c.running != token; });
  }
  return false;
}

}  // namespace kubex::net
