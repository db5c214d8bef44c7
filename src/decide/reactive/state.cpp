#include <nlohmann/json.hpp>

#include "common/time_format.h"
#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

common::Result<State> parse_state(std::string_view json) {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (doc.is_discarded()) return common::fail("reactive-state: not valid JSON");
  if (!doc.is_object()) return common::fail("reactive-state: must be a JSON object");
  State s;
  if (auto b = doc.find("baseline"); b != doc.end()) {
    if (!b->is_object()) return common::fail("must be an object", "baseline");
    for (auto it = b->begin(); it != b->end(); ++it) {
      auto h = parse_gpu_json(it.value());
      if (!h) return common::fail(h.error().message, "baseline." + it.key());
      s.baseline[it.key()] = *h;
    }
  }
  if (auto d = doc.find("driver"); d != doc.end()) {
    if (!d->is_string()) return common::fail("must be a string", "driver");
    s.driver = d->get<std::string>();
    if (!s.driver.empty() && s.driver != kCompute && s.driver != kMemory) {
      return common::fail("must be \"compute\" or \"memory\"", "driver");
    }
  }
  if (auto u = doc.find("updatedAt"); u != doc.end()) {
    if (!u->is_string()) return common::fail("must be a string", "updatedAt");
    s.updated_at = u->get<std::string>();
    if (!s.updated_at.empty() && !common::parse_rfc3339(s.updated_at)) {
      return common::fail("must be an RFC3339 time", "updatedAt");
    }
  }
  return s;
}

std::string format_state(const State& s) {
  nlohmann::json doc = nlohmann::json::object();
  nlohmann::json& baseline = doc["baseline"];
  baseline = nlohmann::json::object();
  for (const auto& [container, gpu] : s.baseline) baseline[container] = format_gpu(desired_value(gpu));
  if (!s.driver.empty()) doc["driver"] = s.driver;
  if (!s.updated_at.empty()) doc["updatedAt"] = s.updated_at;
  return doc.dump();
}

}  // namespace kubex::decide::reactive
