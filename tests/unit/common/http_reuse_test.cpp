// Client-side connection reuse (issue 12, item 1): idle connections the peer closed are not reused, idle
// ones are dropped before a server's keep-alive timeout, and only safe requests are sent again.
#include "common/http_reuse.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kubex::common {
namespace {

using namespace std::chrono_literals;

TEST(IdleConnectionOpen, IdleSocketIsOpenUntilThePeerClosesOrSpeaks) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  EXPECT_TRUE(idle_connection_open(fds[0]));
  ASSERT_EQ(::write(fds[1], "x", 1), 1);  // stray bytes (a TLS close_notify looks like this)
  EXPECT_FALSE(idle_connection_open(fds[0]));
  ::close(fds[0]);
  ::close(fds[1]);

  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  ::close(fds[1]);  // the server closed its end (keep-alive timeout)
  EXPECT_FALSE(idle_connection_open(fds[0]));
  ::close(fds[0]);
  EXPECT_TRUE(idle_connection_open(-1));  // not connected yet: the client connects on its own
}

TEST(ResendOnFreshConnection, UnwrittenAlwaysWrittenOnlyIdempotent) {
  for (const char* m : {"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH"}) {
    EXPECT_TRUE(resend_on_fresh_connection(m, false)) << m;
  }
  for (const char* m : {"GET", "HEAD", "OPTIONS", "PUT", "DELETE"}) EXPECT_TRUE(resend_on_fresh_connection(m, true)) << m;
  EXPECT_FALSE(resend_on_fresh_connection("POST", true));
  EXPECT_FALSE(resend_on_fresh_connection("PATCH", true));
}

TEST(IdlePool, MostRecentFirstAndIdleOnesDropped) {
  using Clock = IdlePool<int>::Clock;
  auto t0 = Clock::time_point{} + 1h;
  auto open = [](const int&) { return true; };
  IdlePool<int> pool(2, 4s);
  pool.put(std::make_shared<int>(1), t0);
  pool.put(std::make_shared<int>(2), t0 + 1s);
  pool.put(std::make_shared<int>(3), t0 + 2s);  // over capacity: the longest idle (1) goes
  EXPECT_EQ(pool.size(), 2u);
  auto c = pool.take(t0 + 3s, open);
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, 3);
  // 2 has been idle for 5 s > 4 s: dropped, not handed out.
  EXPECT_EQ(pool.take(t0 + 6s, open), nullptr);
  EXPECT_EQ(pool.size(), 0u);
}

TEST(IdlePool, ClosedConnectionsAreSkipped) {
  auto t0 = IdlePool<int>::Clock::time_point{} + 1h;
  IdlePool<int> pool;
  pool.put(std::make_shared<int>(1), t0);
  pool.put(std::make_shared<int>(2), t0);
  auto c = pool.take(t0, [](const int& v) { return v != 2; });  // 2 was closed by the peer
  ASSERT_TRUE(c);
  EXPECT_EQ(*c, 1);
}

TEST(IdlePool, DefaultIdleLimitIsBelowCommonServerTimeouts) {
  // cpp-httplib servers and many others close idle connections after 5 s, kubex-sim's API server after 10 s.
  EXPECT_LT(kIdleConnectionTimeout, 5s);
}

}  // namespace
}  // namespace kubex::common
