// Handler deadlines (the webhook server's ADM-2 8 s, webhook/server.h): one thread calls a function when
// its time comes, unless it was cancelled first. Lets a handler run on the thread that read its request and
// still be answered on time when it overruns.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace kubex::net {

class Deadlines {
 public:
  using Clock = std::chrono::steady_clock;
  using Token = std::uint64_t;

  Deadlines();
  ~Deadlines();  // deadlines not yet due are dropped (safe also from inside a deadline's fn)
  Deadlines(const Deadlines&) = delete;
  Deadlines& operator=(const Deadlines&) = delete;

  // `fn` runs on the deadline thread at `when` unless cancel(token) comes first.
  Token arm(Clock::time_point when, std::function<void()> fn);
  // true: cancelled before it was due, `fn` will not run. false: it was due; returns after `fn` returned.
  bool cancel(Token token);

 private:
  struct Core;  // shared with the deadline thread, which may outlive this object
  std::shared_ptr<Core> core_;
};

}  // namespace kubex::net
