#include "sizing/trace_csv.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

namespace kubex::bench {

namespace {

using decide::sizing::ContainerSeries;
using decide::sizing::UsageSample;

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    if (!cell.empty() && cell.back() == '\r') cell.pop_back();
    out.push_back(cell);
  }
  return out;
}

// (container, timestamp in ms) -> value
using Column = std::map<std::pair<std::string, std::int64_t>, double>;

common::Result<Column> read_column(const std::string& path) {
  std::ifstream in(path);
  if (!in) return common::fail("cannot open " + path);
  std::string line;
  if (!std::getline(in, line)) return common::fail(path + ": empty file");
  const std::vector<std::string> header = split_csv(line);
  int ts = -1, value = -1, ip = -1;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    if (header[i] == "timestamp_anon") ts = i;
    if (header[i] == "value") value = i;
    if (header[i] == "container_ip") ip = i;
  }
  if (ts < 0 || value < 0 || ip < 0) {
    return common::fail(path + ": line 1: the header needs timestamp_anon, value and container_ip");
  }
  Column out;
  for (int n = 2; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv(line);
    const auto at = [&](int i) { return i < static_cast<int>(cells.size()) ? cells[i] : std::string(); };
    try {
      std::size_t used = 0;
      const double t = std::stod(at(ts), &used);
      const double v = std::stod(at(value));
      if (at(ip).empty() || !std::isfinite(t)) throw std::invalid_argument("field");
      // NaN/Inf values count as missing (VAL-8): the sample is left out.
      if (std::isfinite(v)) out[{at(ip), std::llround(t * 1000.0)}] = v;
    } catch (const std::exception&) {
      return common::fail(path + ": line " + std::to_string(n) + ": not a timestamp,value,container row: " + line);
    }
  }
  return out;
}

}  // namespace

common::Result<std::vector<ContainerSeries>> read_trace(const std::string& memory_csv, const std::string& duty_csv,
                                                        double device_mib) {
  auto memory = read_column(memory_csv);
  if (!memory) return std::unexpected(memory.error());
  auto duty = read_column(duty_csv);
  if (!duty) return std::unexpected(duty.error());
  const double device_bytes = device_mib * 1024.0 * 1024.0;
  std::map<std::string, std::map<std::int64_t, UsageSample>> by_container;
  const auto sample = [&](const std::pair<std::string, std::int64_t>& key) -> UsageSample& {
    UsageSample& s = by_container[key.first][key.second];
    s.at = std::chrono::system_clock::time_point(std::chrono::milliseconds(key.second));
    return s;
  };
  for (const auto& [key, v] : *memory) sample(key).memory = std::max(v, 0.0) / device_bytes;
  for (const auto& [key, v] : *duty) sample(key).compute = std::max(v, 0.0) / 100.0;
  std::vector<ContainerSeries> out;
  for (auto& [id, samples] : by_container) {
    ContainerSeries series;
    series.id = id;
    for (auto& [t, s] : samples) series.samples.push_back(s);
    out.push_back(std::move(series));
  }
  return out;
}

}  // namespace kubex::bench
