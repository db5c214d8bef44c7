// Reusing kept-alive HTTP connections safely on the client side, the way Go's net/http Transport does it:
// an idle connection the peer has already closed is never handed out again, connections are dropped before
// they have idled long enough for a server to close them, and a request that failed on a reused
// connection before the server could have acted on it is sent once more on a fresh connection.
//
// Without this, a request that follows an idle gap longer than the server's keep-alive timeout (5 s for
// many HTTP servers, 10 s for kubex-sim) is written into a closed connection and fails with "Write" or
// "Read" although the server is healthy (issue 12: lost webhook calls and events).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace kubex::common {

// How long a client keeps an unused connection for reuse: below the 5 s keep-alive timeout that many HTTP
// servers (and cpp-httplib's) default to, so that a server closing an idle connection and a client reusing
// it cannot cross on the wire. Go's Transport achieves the same with a background reader per connection.
inline constexpr std::chrono::seconds kIdleConnectionTimeout{4};

// True when an idle kept-alive connection's socket shows no sign of having been closed by the peer. An idle
// HTTP/1.1 connection has nothing to read: readable means an EOF or a TLS close_notify (or stray bytes),
// and a hang-up or error means the same. A descriptor < 0 (no connection yet) counts as usable.
bool idle_connection_open(int fd);

// Whether a request that failed on a REUSED connection is sent again, once, on a fresh connection:
// always when the request was not completely written (the server cannot have acted on it), and otherwise
// only for idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE), as RFC 9110 §9.2.2 allows.
bool resend_on_fresh_connection(std::string_view method, bool request_written);

// The idle connections of one endpoint, most recently used first out. take() drops those idle longer
// than `max_idle` and those `open` rejects; put() keeps at most `capacity`.
template <class Conn>
class IdlePool {
 public:
  using Clock = std::chrono::steady_clock;
  using Ptr = std::shared_ptr<Conn>;

  explicit IdlePool(std::size_t capacity = 16, Clock::duration max_idle = kIdleConnectionTimeout)
      : capacity_(capacity), max_idle_(max_idle) {}

  // The most recently returned connection that is still fit for reuse, or null. `open(const Conn&)` says
  // whether its socket is still open (idle_connection_open on its descriptor).
  template <class Open>
  Ptr take(Clock::time_point now, Open&& open) {
    while (!idle_.empty()) {
      auto [conn, since] = std::move(idle_.back());
      idle_.pop_back();
      if (now - since <= max_idle_ && open(*conn)) return conn;
    }
    return nullptr;
  }

  void put(Ptr conn, Clock::time_point now) {
    if (idle_.size() >= capacity_) idle_.erase(idle_.begin());  // the longest idle goes first
    idle_.emplace_back(std::move(conn), now);
  }

  std::size_t size() const { return idle_.size(); }

 private:
  std::size_t capacity_;
  Clock::duration max_idle_;
  std::vector<std::pair<Ptr, Clock::time_point>> idle_;
};

}  // namespace kubex::common
