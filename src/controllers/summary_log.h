// OBS-4: a recommender's or actuation's `rightsizing summary` lines, at info when the summary is news (its
// decide::summary_identity differs from that workload's previous summary of the same phase) and at debug
// otherwise, so an idle cluster logs next to nothing while each reconcile still writes its one line.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kubex::common {
class Logger;
}
namespace kubex::decide {
struct Summary;
}

namespace kubex::controllers {

class SummaryLog {
 public:
  // Workloads remembered at most; past it the memory starts over (each workload's next line is at info once),
  // so workloads that are deleted cost nothing for long.
  static constexpr std::size_t kMaxRemembered = 100000;

  // Writes `s` as one `rightsizing summary` line of `log` (nothing when info is off).
  void write(const common::Logger& log, const decide::Summary& s);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::size_t> last_;  // "phase/namespace/owner" -> hash of its identity
};

}  // namespace kubex::controllers
