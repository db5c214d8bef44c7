// OBS-4: remembers, per subject (a workload and phase, a consolidation policy), what the last periodic log line
// about it said, so that the line goes out at info only when it says something new and at debug otherwise.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace kubex::controllers {

class LogNews {
 public:
  // Subjects remembered at most; past it the memory starts over (each subject's next line is news once), so
  // deleted workloads and policies cost nothing for long.
  static constexpr std::size_t kMaxRemembered = 100000;

  // True when `identity` differs from the last one of `subject`, or there was none; remembers it. Thread-safe.
  bool changed(std::string subject, std::string_view identity);
  // The next line about `subject` is news again.
  void forget(const std::string& subject);

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::size_t> last_;  // subject -> hash of its last identity
};

}  // namespace kubex::controllers
