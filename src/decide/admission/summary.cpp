#include "decide/admission/summary.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json_write.h"

namespace kubex::decide {

namespace {

std::string side(const std::vector<Change>& changes, Usage usage) {
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::string>> values;
  for (const Change& c : changes) {
    if (c.usage != usage) continue;
    if (!values.count(c.container)) order.push_back(c.container);
    values[c.container][change_resource_name(c.resource, c.usage)] = c.desired;
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

void append_strings(std::string& out, const std::vector<std::string>& list) {
  out += '[';
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) out += ',';
    common::append_json_string(out, list[i]);
  }
  out += ']';
}

void append_member(std::string& out, const char* key, std::string_view value) {
  out += key;
  common::append_json_string(out, value);
}

// `key` then a JSON object of strings, keys in map order.
void append_string_map(std::string& out, const char* key, const std::map<std::string, std::string>& m) {
  out += key;
  out += '{';
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ',';
    first = false;
    common::append_json_string(out, k);
    out += ':';
    common::append_json_string(out, v);
  }
  out += '}';
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

std::vector<Change> recommendation_changes(const std::map<std::string, std::string>& before,
                                           const std::map<std::string, std::string>& after, const std::string& source) {
  std::vector<Change> out;
  for (const auto& [c, to] : after) {
    auto it = before.find(c);
    std::string from = it == before.end() ? kUnspecified : it->second;
    if (from == to) continue;
    Change ch;
    ch.container = c;
    ch.from = std::move(from);
    ch.to = to;
    ch.desired = to;
    ch.source = source;
    out.push_back(std::move(ch));
  }
  return out;
}

std::string summary_text(const std::vector<Change>& changes, const std::vector<Edit>& edits) {
  std::string out = changes.empty() ? std::string("No rightsizing changes")
                                    : "Applied rightsizing requests [" + side(changes, Usage::kRequest) +
                                          "] limits [" + side(changes, Usage::kLimit) + "]";
  std::string kai, vllm;
  for (const Edit& e : edits) {
    if (e.target == EditTarget::kVllmGpuMemoryUtilization) {
      vllm += (vllm.empty() ? "" : " ") + e.container + ":" + e.to;
    } else {
      kai += (kai.empty() ? "" : " ") + std::string(edit_resource_name(e.target)) + "=" + e.to;
    }
  }
  if (!kai.empty()) out += "; kai [" + kai + "]";
  if (!vllm.empty()) out += "; vllm [" + vllm + "]";
  return out;
}

// Keys sorted, as nlohmann's dump of the same object orders them.
std::string summary_members(const Summary& s, const std::vector<std::string>& ignored_sources) {
  std::string out;
  out.reserve(512);
  out += R"("appliedFilters":)";
  append_strings(out, s.applied_filters);
  out += R"(,"changes":[)";
  for (std::size_t i = 0; i < s.changes.size(); ++i) {
    const Change& c = s.changes[i];
    if (i > 0) out += ',';
    append_member(out, R"({"container":)", c.container);
    append_member(out, R"(,"from":)", c.from);
    append_member(out, R"(,"resource":)", change_resource_name(c.resource, c.usage));
    append_member(out, R"(,"to":)", c.to);
    append_member(out, R"(,"usage":)", usage_name(c.usage));
    out += '}';
  }
  for (std::size_t i = 0; i < s.edits.size(); ++i) {
    const Edit& e = s.edits[i];
    if (i > 0 || !s.changes.empty()) out += ',';
    append_member(out, R"({"container":)", e.container);
    if (e.from) {
      append_member(out, R"(,"from":)", *e.from);
    } else {
      out += R"(,"from":null)";
    }
    append_member(out, R"(,"resource":)", edit_resource_name(e.target));
    append_member(out, R"(,"to":)", e.to);
    append_member(out, R"(,"usage":)", edit_usage_name(e.target));
    out += '}';
  }
  out += s.dry_run ? R"(],"dryRun":true,"failedChecks":)" : R"(],"dryRun":false,"failedChecks":)";
  append_strings(out, s.failed_checks);
  if (!ignored_sources.empty()) {
    out += R"(,"ignoredSources":)";
    append_strings(out, ignored_sources);
  }
  if (!s.kai_mode.empty()) append_member(out, R"(,"kaiMode":)", s.kai_mode);
  append_member(out, R"(,"mode":)", s.mode);
  append_member(out, R"(,"namespace":)", s.ns);
  append_member(out, R"(,"owner":)", s.owner);
  append_member(out, R"(,"pass":)", s.pass);
  append_member(out, R"(,"phase":)", s.phase);
  append_member(out, R"(,"pod":)", s.pod);
  append_string_map(out, R"(,"policies":)", s.policies);
  append_member(out, R"(,"rightsizingResult":)", s.result_text.empty() ? result_name(s.result) : s.result_text);
  if (!s.sources.empty()) append_string_map(out, R"(,"source":)", s.sources);
  append_member(out, R"(,"strategy":)", s.strategy);
  append_member(out, R"(,"summary":)", s.text);
  return out;
}

nlohmann::json summary_fields(const Summary& s) {
  return nlohmann::json::parse("{" + summary_members(s) + "}");
}

std::string summary_identity(const Summary& s) {
  std::string out = s.result_text.empty() ? std::string(result_name(s.result)) : s.result_text;
  const auto field = [&out](std::string_view v) {
    out += '\x1f';
    out += v;
  };
  for (const Change& c : s.changes) {
    field(c.container);
    field(change_resource_name(c.resource, c.usage));
    field(c.from);
    field(c.to);
    field(c.desired);
  }
  out += '\x1d';  // the lists end where they end, so [a b][c] and [a][b c] differ
  for (const Edit& e : s.edits) {
    field(e.container);
    field(edit_resource_name(e.target));
    field(e.from ? *e.from : "\x1e");
    field(e.to);
  }
  if (s.phase == "actuation" || s.phase == "rollback") {
    out += '\x1d';
    field(s.pod);
    for (const auto& c : s.failed_checks) field(c);
  }
  return out;
}

}  // namespace kubex::decide
