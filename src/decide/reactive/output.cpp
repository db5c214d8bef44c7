#include "decide/desired_annotations.h"
#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

std::map<std::string, Hundredths> split(const Candidate& win, const PodInput& sel) {
  std::map<std::string, Hundredths> out;
  Hundredths a_sel = 0;
  for (const ContainerInput& c : sel.containers) {
    if (c.allocation > 0) a_sel += c.allocation;
  }
  if (a_sel <= 0) return out;
  for (const ContainerInput& c : sel.containers) {
    if (c.allocation <= 0) continue;  // left out of the output (REA-2)
    out[c.name] = desired_value(win.exact * static_cast<double>(c.allocation) / static_cast<double>(a_sel));
  }
  return out;
}

std::string format_requests(const std::map<std::string, Hundredths>& requests) {
  DesiredValues values;
  for (const auto& [container, gpu] : requests) values[container]["gpu"] = format_gpu(desired_value(gpu));
  return format_desired(values);
}

common::Result<std::map<std::string, Hundredths>> parse_requests(std::string_view json) {
  auto gpu = parse_desired_gpu(json);
  if (!gpu) return common::fail("desired-resource-requests: not a JSON object");
  return *std::move(gpu);
}

}  // namespace kubex::decide::reactive
