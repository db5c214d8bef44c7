#include "decide/admission/constraints.h"

#include <nlohmann/json.hpp>

namespace kubex::decide {

void Constraints::add_pod(std::string_view reason) {
  by_reason_[std::string(reason)];
}

void Constraints::add(std::string_view reason, ConstraintTarget target) {
  by_reason_[std::string(reason)].insert(std::move(target));
}

void Constraints::merge(const Constraints& other) {
  for (const auto& [reason, targets] : other.by_reason_)
    by_reason_[reason].insert(targets.begin(), targets.end());
}

std::vector<std::string> Constraints::reasons() const {
  std::vector<std::string> out;
  out.reserve(by_reason_.size());
  for (const auto& [reason, targets] : by_reason_) out.push_back(reason);
  return out;
}

std::vector<Constraint> Constraints::entries() const {
  std::vector<Constraint> out;
  out.reserve(by_reason_.size());
  for (const auto& [reason, targets] : by_reason_) out.push_back({reason, {targets.begin(), targets.end()}});
  return out;
}

std::string Constraints::to_json() const {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [reason, targets] : by_reason_) {
    nlohmann::json ts = nlohmann::json::array();
    for (const auto& t : targets) {
      nlohmann::json j = nlohmann::json::object();
      if (!t.container.empty()) j["container"] = t.container;
      if (!t.resource.empty()) j["resource"] = t.resource;
      if (!t.usage.empty()) j["usage"] = t.usage;
      if (!t.direction.empty()) j["direction"] = t.direction;
      ts.push_back(std::move(j));
    }
    arr.push_back({{"reason", reason}, {"targets", std::move(ts)}});
  }
  return arr.dump();
}

}  // namespace kubex::decide
