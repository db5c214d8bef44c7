#include "decide/summary.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kubex::decide {

namespace {

std::string side(const std::vector<Change>& changes, Usage usage) {
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::string>> values;
  for (const Change& c : changes) {
    if (c.usage != usage) continue;
    if (!values.count(c.container)) order.push_back(c.container);
    values[c.container][resource_name(c.resource)] = c.desired;
  }
  if (order.empty()) return "none";
  std::string out;
  for (const auto& name : order) {
    if (!out.empty()) out += ' ';
    out += name + ":[";
    bool first = true;
    for (const auto& [resource, value] : values[name]) {
      if (!first) out += ' ';
      first = false;
      out += resource + "=" + value;
    }
    out += ']';
  }
  return out;
}

}  // namespace

const char* result_name(AdmissionResult r) {
  switch (r) {
    case AdmissionResult::kMutated:
      return "MUTATED";
    case AdmissionResult::kUnchanged:
      return "UNCHANGED";
    case AdmissionResult::kSkipped:
      return "SKIPPED";
  }
  return "SKIPPED";
}

std::string summary_text(const std::vector<Change>& changes) {
  if (changes.empty()) return "No rightsizing changes";
  return "Applied rightsizing requests [" + side(changes, Usage::kRequest) + "] limits [" +
         side(changes, Usage::kLimit) + "]";
}

nlohmann::json summary_fields(const Summary& s) {
  nlohmann::json changes = nlohmann::json::array();
  for (const Change& c : s.changes) {
    changes.push_back({{"container", c.container},
                       {"resource", resource_name(c.resource)},
                       {"usage", usage_name(c.usage)},
                       {"from", c.from},
                       {"to", c.to}});
  }
  nlohmann::json policies = nlohmann::json::object();
  for (const auto& [slot, ref] : s.policies) policies[slot] = ref;
  return {{"phase", s.phase},
          {"pass", s.pass},
          {"namespace", s.ns},
          {"pod", s.pod},
          {"owner", s.owner},
          {"policies", std::move(policies)},
          {"strategy", s.strategy},
          {"mode", s.mode},
          {"rightsizingResult", result_name(s.result)},
          {"changes", std::move(changes)},
          {"appliedFilters", s.applied_filters},
          {"failedChecks", s.failed_checks},
          {"dryRun", s.dry_run},
          {"summary", s.text}};
}

}  // namespace kubex::decide
