#include "common/log.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <shared_mutex>

#include "common/clock.h"
#include "common/json_write.h"
#include "common/time_format.h"

namespace kubex::common {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<std::FILE*> g_out{nullptr};
// Lines up to PIPE_BUF go out in one write(2) each, which pipes and O_APPEND files keep whole, so writers
// share the lock; a longer line (or a FILE without a descriptor) takes it alone.
std::shared_mutex g_mu;

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
    default:
      return "off";
  }
}

// Fields named like the line's own keys overwrite them in place: the general path handles that.
bool has_reserved_key(const nlohmann::json& fields) {
  for (const char* k : {"ts", "level", "logger", "msg"}) {
    if (fields.contains(k)) return true;
  }
  return false;
}

}  // namespace

bool parse_log_level(std::string_view s, LogLevel& out) {
  if (s == "debug")
    out = LogLevel::kDebug;
  else if (s == "info")
    out = LogLevel::kInfo;
  else if (s == "warn" || s == "warning")
    out = LogLevel::kWarn;
  else if (s == "error")
    out = LogLevel::kError;
  else if (s == "off" || s == "none")
    out = LogLevel::kOff;
  else
    return false;
  return true;
}

void set_log_level(LogLevel level) {
  g_level.store(static_cast<int>(level));
}
LogLevel log_level() {
  return static_cast<LogLevel>(g_level.load());
}
void set_log_output(std::FILE* f) {
  g_out.store(f);
}

bool Logger::enabled(LogLevel level) const {
  return static_cast<int>(level) >= g_level.load();
}

namespace {

std::string line_head(std::string_view ts, const char* level, const std::string& logger,
                      std::string_view msg) {
  std::string text;
  text.reserve(160 + msg.size());
  text += R"({"ts":)";
  append_json_string(text, ts);
  text += R"(,"level":)";
  append_json_string(text, level);
  text += R"(,"logger":)";
  append_json_string(text, logger);
  text += R"(,"msg":)";
  append_json_string(text, msg);
  return text;
}

// The whole of `text` to `fd`, until done or an error other than EINTR / EAGAIN.
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n > 0) {
      text.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 100);
    } else if (n == 0 || errno != EINTR) {
      return;
    }
  }
}

// One line per call, never interleaved with another. The line is written with write(2) on the FILE's
// descriptor; a short line holds the lock only shared across the system call, so threads writing lines at
// once (the webhook writes one per review) do not queue behind each other. What stdio holds for the same
// FILE is flushed first, so its order is kept.
void write_line(std::string& text) {
  text += '\n';
  std::FILE* out = g_out.load();
  if (!out) out = stdout;
  std::fflush(out);
  const int fd = ::fileno(out);
  if (fd < 0) {  // e.g. fmemopen: stdio only
    std::unique_lock lk(g_mu);
    std::fwrite(text.data(), 1, text.size(), out);
    std::fflush(out);
  } else if (text.size() <= PIPE_BUF) {
    std::shared_lock lk(g_mu);
    write_all(fd, text);  // a line that cannot be written is dropped, as stdio would
  } else {
    std::unique_lock lk(g_mu);
    write_all(fd, text);
  }
}

}  // namespace

void Logger::log(LogLevel level, std::string_view msg, const nlohmann::json* fields) const {
  if (!enabled(level)) return;
  const std::string ts = format_rfc3339_milli(RealClock::instance().now());
  std::string text;
  if (fields && fields->is_object() && !has_reserved_key(*fields)) {
    // Written directly: the fields are not copied into a line object first. Same bytes as the general path.
    text = line_head(ts, level_name(level), name_, msg);
    nlohmann::detail::serializer<nlohmann::json> out(nlohmann::detail::output_adapter<char>(text), ' ',
                                                     nlohmann::json::error_handler_t::replace);
    for (auto it = fields->begin(); it != fields->end(); ++it) {
      text += ',';
      append_json_string(text, it.key());
      text += ':';
      out.dump(it.value(), false, false, 0);
    }
    text += '}';
  } else {
    nlohmann::ordered_json line;
    line["ts"] = ts;
    line["level"] = level_name(level);
    line["logger"] = name_;
    line["msg"] = std::string(msg);
    if (fields && fields->is_object()) {
      for (auto it = fields->begin(); it != fields->end(); ++it) line[it.key()] = it.value();
    }
    text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  write_line(text);
}

void Logger::log_members(LogLevel level, std::string_view msg, std::string_view members) const {
  if (!enabled(level)) return;
  std::string text =
      line_head(format_rfc3339_milli(RealClock::instance().now()), level_name(level), name_, msg);
  if (!members.empty()) {
    text += ',';
    text += members;
  }
  text += '}';
  write_line(text);
}

void Logger::debug(std::string_view msg) const {
  log(LogLevel::kDebug, msg, nullptr);
}
void Logger::debug(std::string_view msg, const nlohmann::json& f) const {
  log(LogLevel::kDebug, msg, &f);
}
void Logger::info(std::string_view msg) const {
  log(LogLevel::kInfo, msg, nullptr);
}
void Logger::info(std::string_view msg, const nlohmann::json& f) const {
  log(LogLevel::kInfo, msg, &f);
}
void Logger::warn(std::string_view msg) const {
  log(LogLevel::kWarn, msg, nullptr);
}
void Logger::warn(std::string_view msg, const nlohmann::json& f) const {
  log(LogLevel::kWarn, msg, &f);
}
void Logger::error(std::string_view msg) const {
  log(LogLevel::kError, msg, nullptr);
}
void Logger::error(std::string_view msg, const nlohmann::json& f) const {
  log(LogLevel::kError, msg, &f);
}

}  // namespace kubex::common
