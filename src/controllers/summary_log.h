// OBS-4: a recommender's or actuation's `rightsizing summary` lines, at info when the summary is news (its
// decide::summary_identity differs from that workload's previous summary of the same phase) and at debug
// otherwise, so an idle cluster logs next to nothing while each reconcile still writes its one line.
#pragma once

#include "controllers/log_news.h"

namespace kubex::common {
class Logger;
}
namespace kubex::decide {
struct Summary;
}

namespace kubex::controllers {

class SummaryLog {
 public:
  // Writes `s` as one `rightsizing summary` line of `log` (nothing when info is off).
  void write(const common::Logger& log, const decide::Summary& s);

 private:
  LogNews news_;  // "phase/namespace/owner"
};

}  // namespace kubex::controllers
