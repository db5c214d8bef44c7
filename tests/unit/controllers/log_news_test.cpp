// OBS-4: a periodic line is news (info) the first time and whenever it says something new for its subject,
// and not (debug) when it repeats; forgetting a subject makes its next line news again.
#include "controllers/log_news.h"

#include <gtest/gtest.h>

namespace kubex::controllers {
namespace {

TEST(LogNews, NewsOnlyWhenTheSubjectSaysSomethingNew) {
  LogNews news;
  EXPECT_TRUE(news.changed("pool-a", "no candidate: node-1 busy"));
  EXPECT_FALSE(news.changed("pool-a", "no candidate: node-1 busy"));
  EXPECT_TRUE(news.changed("pool-b", "no candidate: node-1 busy")) << "another subject";
  EXPECT_TRUE(news.changed("pool-a", "no candidate: node-2 busy"));
  EXPECT_TRUE(news.changed("pool-a", "no candidate: node-1 busy")) << "back to the earlier answer is news too";
  news.forget("pool-a");
  EXPECT_TRUE(news.changed("pool-a", "no candidate: node-1 busy")) << "after a drain";
}

TEST(LogNews, MemoryIsBoundedAndStartsOver) {
  LogNews news;
  for (std::size_t i = 0; i < LogNews::kMaxRemembered; ++i) news.changed("w" + std::to_string(i), "same");
  EXPECT_FALSE(news.changed("w0", "same"));
  EXPECT_TRUE(news.changed("one-too-many", "same"));
  EXPECT_TRUE(news.changed("w0", "same")) << "the memory started over";
}

}  // namespace
}  // namespace kubex::controllers
