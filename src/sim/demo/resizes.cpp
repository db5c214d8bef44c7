#include "sim/demo/resizes.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/cluster/json_fields.h"

namespace kubex::sim::demo {

using nlohmann::json;

namespace {

const json& member(const json& obj, const char* key) { return cluster::json_at(obj, key); }
std::string str(const json& obj, const char* key) { return cluster::json_str(obj, key); }
const json& items(const json& list) { return cluster::json_array_at(list, "items"); }

// The event's time: lastTimestamp, else eventTime, else creationTimestamp (RFC3339 sorts as text).
std::string event_time(const json& e) {
  for (const char* k : {"lastTimestamp", "eventTime"}) {
    if (std::string t = str(e, k); !t.empty()) return t;
  }
  return str(member(e, "metadata"), "creationTimestamp");
}

// "0.72" from a label value `value` of the line `name{...} value`.
bool label_of(const std::string& line, const std::string& label, std::string& out) {
  const std::string key = label + "=\"";
  auto a = line.find(key);
  if (a == std::string::npos) return false;
  a += key.size();
  auto b = line.find('"', a);
  if (b == std::string::npos) return false;
  out = line.substr(a, b - a);
  return true;
}

}  // namespace

std::map<std::string, std::string> eviction_notes(const json& event_list) {
  static const std::map<std::string, std::string> kPrefix = {{"PolicyEvaluationEvictResize", "resize: "},
                                                             {"PolicyEvaluationEvictRollback", "rollback: "},
                                                             {"EvictionBlocked", "blocked by a PDB: "},
                                                             {"WouldEvict", "dry run: "}};
  std::map<std::string, std::pair<std::string, std::string>> newest;  // pod -> (time, note)
  for (const json& e : items(event_list)) {
    auto p = kPrefix.find(str(e, "reason"));
    const json& obj = member(e, "involvedObject");
    if (p == kPrefix.end() || str(obj, "kind") != "Pod") continue;
    std::string key = str(obj, "namespace") + "/" + str(obj, "name");
    std::string t = event_time(e);
    auto it = newest.find(key);
    if (it == newest.end() || it->second.first <= t) newest[key] = {t, p->second + str(e, "message")};
  }
  std::map<std::string, std::string> out;
  for (auto& [k, v] : newest) out[k] = std::move(v.second);
  return out;
}

std::vector<std::string> pdb_refusals(const json& event_list) {
  std::vector<std::string> out;
  for (const json& e : items(event_list)) {
    if (str(e, "reason") != "EvictionBlocked") continue;
    const json& obj = member(e, "involvedObject");
    out.push_back(str(obj, "namespace") + "/" + str(obj, "name") + ": " + str(e, "message"));
  }
  return out;
}

double EvictionCounts::total(const std::string& result) const {
  double t = 0;
  for (const auto& [reason, results] : by_reason) {
    auto it = results.find(result);
    if (it != results.end()) t += it->second;
  }
  return t;
}

EvictionCounts eviction_counts(const std::string& text) {
  EvictionCounts c;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.rfind("kubex_evictions_total{", 0) != 0) continue;
    std::string reason, result;
    if (!label_of(line, "reason", reason) || !label_of(line, "result", result)) continue;
    auto sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    try {
      c.by_reason[reason][result] += std::stod(line.substr(sp + 1));
    } catch (...) {
    }
  }
  return c;
}

std::string render_evictions(const EvictionCounts& ev, const std::vector<std::string>& refusals) {
  std::string out;
  char buf[200];
  std::snprintf(buf, sizeof buf, "Evictions: %.0f done, %.0f refused by a PodDisruptionBudget, %.0f failed\n",
                ev.total("success"), ev.total("pdb_blocked"), ev.total("error"));
  out += buf;
  for (const auto& [reason, results] : ev.by_reason) {
    double n = 0;
    for (const auto& [result, v] : results) n += v;
    if (n == 0) continue;
    std::snprintf(buf, sizeof buf, "  %s: %.0f\n", reason.c_str(), n);
    out += buf;
  }
  for (const auto& r : refusals) out += "  refused: " + r + "\n";
  return out;
}

}  // namespace kubex::sim::demo
