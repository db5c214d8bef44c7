#include "controllers/summary_log.h"

#include <functional>

#include "common/log.h"
#include "decide/admission/summary.h"

namespace kubex::controllers {

void SummaryLog::write(const common::Logger& log, const decide::Summary& s) {
  if (!log.enabled(common::LogLevel::kInfo)) return;
  const std::size_t identity = std::hash<std::string>{}(decide::summary_identity(s));
  std::string key = s.phase + '/' + s.ns + '/' + s.owner;
  bool news = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (last_.size() >= kMaxRemembered && !last_.count(key)) last_.clear();
    auto [it, inserted] = last_.try_emplace(std::move(key), identity);
    if (!inserted) {
      news = it->second != identity;
      it->second = identity;
    }
  }
  const common::LogLevel level = news ? common::LogLevel::kInfo : common::LogLevel::kDebug;
  if (log.enabled(level)) log.log_members(level, "rightsizing summary", decide::summary_members(s));
}

}  // namespace kubex::controllers
