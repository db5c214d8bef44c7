#include "controllers/log_news.h"

#include <functional>

namespace kubex::controllers {

bool LogNews::changed(std::string subject, std::string_view identity) {
  const std::size_t h = std::hash<std::string_view>{}(identity);
  std::lock_guard<std::mutex> lock(mu_);
  if (last_.size() >= kMaxRemembered && !last_.count(subject)) last_.clear();
  auto [it, inserted] = last_.try_emplace(std::move(subject), h);
  if (inserted) return true;
  const bool news = it->second != h;
  it->second = h;
  return news;
}

void LogNews::forget(const std::string& subject) {
  std::lock_guard<std::mutex> lock(mu_);
  last_.erase(subject);
}

}  // namespace kubex::controllers
