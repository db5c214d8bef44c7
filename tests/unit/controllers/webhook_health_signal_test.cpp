#include "controllers/webhook_health_signal.h"

#include <gtest/gtest.h>

namespace kubex::controllers {
namespace {

using decide::WebhookHealth;

// Issue 27 item 4: listeners hear each turn to True, once per turn, never a verdict that stays True or is not True.
TEST(WebhookHealthSignal, ListenersHearEachTurnToHealthy) {
  WebhookHealthSignal s;
  int heard = 0;
  const WebhookHealthSignal& reader = s;
  reader.on_healthy([&] { ++heard; });
  EXPECT_FALSE(s.healthy());  // starts Unknown: nothing is evicted before the first verdict
  s.set(WebhookHealth::kUnknown);
  EXPECT_EQ(heard, 0);
  s.set(WebhookHealth::kHealthy);
  EXPECT_EQ(heard, 1);
  s.set(WebhookHealth::kHealthy);  // still True: no new turn
  EXPECT_EQ(heard, 1);
  s.set(WebhookHealth::kUnhealthy);
  EXPECT_EQ(heard, 1);
  s.set(WebhookHealth::kHealthy);
  EXPECT_EQ(heard, 2);
  EXPECT_TRUE(s.healthy());
}

}  // namespace
}  // namespace kubex::controllers
