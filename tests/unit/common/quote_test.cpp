// The quoting of user input in the messages of duration, quantity and label-selector parsing.
#include "common/quote.h"

#include <gtest/gtest.h>

#include <string>

using kubex::common::quote;

TEST(Quote, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(quote("1d"), "\"1d\"");
  EXPECT_EQ(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quote(std::string("\n\x7f", 2)), "\"\\x0a\\x7f\"");
  EXPECT_EQ(quote("\xC2\xB5s"), "\"\xC2\xB5s\"");  // UTF-8 is kept
}
