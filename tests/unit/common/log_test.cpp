// JSON-lines logging (DESIGN §6): one object per line with ts, level, logger and msg first, then the fields
// in key order; strings escaped as JSON (invalid UTF-8 replaced by U+FFFD, never a broken line); a field
// named like one of the line's own keys overwrites it in place; lines below the level are not written.
#include "common/log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kubex::common {
namespace {

using nlohmann::json;

std::vector<std::string> capture(const std::function<void()>& fn) {
  std::FILE* f = std::tmpfile();
  set_log_output(f);
  fn();
  set_log_output(nullptr);
  std::fflush(f);
  std::rewind(f);
  std::vector<std::string> lines;
  char buf[8192];
  while (std::fgets(buf, sizeof buf, f)) lines.emplace_back(buf);
  std::fclose(f);
  return lines;
}

TEST(Log, LineShapeAndFieldOrder) {
  auto lines = capture([] {
    Logger("webhook").info("rightsizing summary", {{"zeta", 1},
                                                   {"alpha", "a\"b\\c\n\x01"},
                                                   {"nested", {{"k", json::array({1, "\xc3\xa9"})}}},
                                                   {"bad", std::string("\xff\xfe")},
                                                   {"unicode", "caf\xc3\xa9 \xe2\x82\xac"}});
  });
  ASSERT_EQ(lines.size(), 1u);
  const std::string& line = lines[0];
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.rfind(R"({"ts":")", 0), 0u) << line;
  auto tail = line.substr(line.find(R"(,"level")"));
  EXPECT_EQ(tail,
            R"(,"level":"info","logger":"webhook","msg":"rightsizing summary","alpha":"a\"b\\c\n\u0001",)"
            R"("bad":")"
            "\xef\xbf\xbd\xef\xbf\xbd"
            R"(","nested":{"k":[1,"é"]},"unicode":"café €","zeta":1})"
            "\n");
  json parsed = json::parse(line);
  EXPECT_EQ(parsed["alpha"], "a\"b\\c\n\x01");
}

TEST(Log, ReservedFieldNamesOverwriteInPlace) {
  auto lines = capture([] { Logger("x").warn("m\xc3\xa9ssage", {{"msg", "override"}, {"extra", true}}); });
  ASSERT_EQ(lines.size(), 1u);
  auto tail = lines[0].substr(lines[0].find(R"(,"level")"));
  EXPECT_EQ(tail, R"(,"level":"warn","logger":"x","msg":"override","extra":true})"
                  "\n");
}

TEST(Log, BelowTheLevelNothingIsWritten) {
  auto lines = capture([] {
    set_log_level(LogLevel::kWarn);
    Logger("x").info("hidden", {{"a", 1}});
    Logger("x").error("shown");
    set_log_level(LogLevel::kInfo);
  });
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find(R"("msg":"shown")"), std::string::npos);
}

}  // namespace
}  // namespace kubex::common
