// JSON-lines logging (OBS-4): one object per line with ts, level, logger, msg, then fields.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace kubex::common {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

// Parses "debug", "info", "warn"/"warning", "error", "off"; returns false on anything else.
bool parse_log_level(std::string_view s, LogLevel& out);
void set_log_level(LogLevel level);
LogLevel log_level();
// Redirects log output (default stdout). The file is not closed by the logger.
void set_log_output(std::FILE* f);

// A named logger. Cheap to copy; all loggers share one output. Lines are written whole, one write(2) each
// (log.cpp), never interleaved.
class Logger {
 public:
  explicit Logger(std::string name) : name_(std::move(name)) {}
  void debug(std::string_view msg) const;
  void debug(std::string_view msg, const nlohmann::json& fields) const;
  void info(std::string_view msg) const;
  void info(std::string_view msg, const nlohmann::json& fields) const;
  void warn(std::string_view msg) const;
  void warn(std::string_view msg, const nlohmann::json& fields) const;
  void error(std::string_view msg) const;
  void error(std::string_view msg, const nlohmann::json& fields) const;
  void log(LogLevel level, std::string_view msg, const nlohmann::json* fields) const;
  // `members`: the fields already written as JSON object members (`"a":1,"b":"x"`, keys in order, none of
  // ts/level/logger/msg), for a line written once per admission review without building a JSON value.
  void log_members(LogLevel level, std::string_view msg, std::string_view members) const;
  bool enabled(LogLevel level) const;
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

}  // namespace kubex::common
