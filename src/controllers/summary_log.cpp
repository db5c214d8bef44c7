#include "controllers/summary_log.h"

#include "common/log.h"
#include "decide/admission/summary.h"

namespace kubex::controllers {

void SummaryLog::write(const common::Logger& log, const decide::Summary& s) {
  if (!log.enabled(common::LogLevel::kInfo)) return;
  const bool news = news_.changed(s.phase + '/' + s.ns + '/' + s.owner, decide::summary_identity(s));
  const common::LogLevel level = news ? common::LogLevel::kInfo : common::LogLevel::kDebug;
  if (log.enabled(level)) log.log_members(level, "rightsizing summary", decide::summary_members(s));
}

}  // namespace kubex::controllers
