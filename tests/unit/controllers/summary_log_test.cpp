// OBS-4: each reconcile still writes its one `rightsizing summary` line, at info only when it is news for that
// workload and phase, so an idle cluster's info log stays quiet while debug keeps every line.
#include "controllers/summary_log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/log.h"
#include "decide/admission/summary.h"

namespace kubex::controllers {
namespace {

// The levels of the summary lines `fn` writes with the process at `level`.
std::vector<std::string> levels(common::LogLevel level, const std::function<void()>& fn) {
  const common::LogLevel before = common::log_level();
  common::set_log_level(level);
  std::FILE* f = std::tmpfile();
  common::set_log_output(f);
  fn();
  common::set_log_output(nullptr);
  common::set_log_level(before);
  std::fflush(f);
  std::rewind(f);
  std::vector<std::string> out;
  char buf[8192];
  while (std::fgets(buf, sizeof buf, f)) {
    auto line = nlohmann::json::parse(buf);
    EXPECT_EQ(line["msg"], "rightsizing summary");
    out.push_back(line["level"].get<std::string>() + " " + line["phase"].get<std::string>() + " " +
                  line["owner"].get<std::string>());
  }
  std::fclose(f);
  return out;
}

decide::Summary summary(const std::string& phase, const std::string& owner, const std::string& result) {
  decide::Summary s;
  s.phase = phase;
  s.ns = "ml";
  s.owner = owner;
  s.result_text = result;
  return s;
}

TEST(SummaryLog, RepeatsGoToDebugPerWorkloadAndPhase) {
  const common::Logger log("controller.test");
  SummaryLog summaries;
  auto lines = levels(common::LogLevel::kDebug, [&] {
    summaries.write(log, summary("reactive", "Deployment/a", "UNCHANGED"));
    summaries.write(log, summary("reactive", "Deployment/a", "UNCHANGED"));    // repeat
    summaries.write(log, summary("reactive", "Deployment/b", "UNCHANGED"));    // another workload
    summaries.write(log, summary("actuation", "Deployment/a", "UNCHANGED"));   // another phase
    summaries.write(log, summary("reactive", "Deployment/a", "RECOMMENDED"));  // news
    summaries.write(log, summary("reactive", "Deployment/a", "UNCHANGED"));    // news again
    summaries.write(log, summary("reactive", "Deployment/a", "UNCHANGED"));
  });
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "info reactive Deployment/a", "debug reactive Deployment/a", "info reactive Deployment/b",
                       "info actuation Deployment/a", "info reactive Deployment/a", "info reactive Deployment/a",
                       "debug reactive Deployment/a"}));
}

TEST(SummaryLog, AtInfoOnlyTheNewsIsWritten) {
  const common::Logger log("controller.test");
  SummaryLog summaries;
  auto lines = levels(common::LogLevel::kInfo, [&] {
    for (int cycle = 0; cycle < 5; ++cycle) summaries.write(log, summary("reactive", "Deployment/a", "UNCHANGED"));
  });
  EXPECT_EQ(lines, std::vector<std::string>{"info reactive Deployment/a"});
}

}  // namespace
}  // namespace kubex::controllers
