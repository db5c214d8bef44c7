#include "common/json_projection.h"

#include <nlohmann/json.hpp>

namespace kubex::common {

namespace {

const JsonProjection kWhole;

}  // namespace

JsonProjection JsonProjection::members(std::initializer_list<std::pair<std::string, JsonProjection>> members,
                                       bool keep_others) {
  JsonProjection p;
  p.kind_ = Kind::kMembers;
  p.keep_others_ = keep_others;
  p.members_.assign(members.begin(), members.end());
  return p;
}

JsonProjection JsonProjection::elements(JsonProjection each) {
  JsonProjection p;
  p.kind_ = Kind::kElements;
  p.element_ = std::make_shared<const JsonProjection>(std::move(each));
  return p;
}

const JsonProjection* JsonProjection::member(std::string_view key) const {
  for (const auto& [name, projection] : members_) {
    if (name == key) return &projection;
  }
  return keep_others_ ? &kWhole : nullptr;
}

nlohmann::json project(const nlohmann::json& value, const JsonProjection& projection) {
  using Kind = JsonProjection::Kind;
  if (projection.kind() == Kind::kMembers && value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (const JsonProjection* p = projection.member(it.key())) out[it.key()] = project(it.value(), *p);
    }
    return out;
  }
  if (projection.kind() == Kind::kElements && value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : value) out.push_back(project(e, projection.element()));
    return out;
  }
  return value;
}

}  // namespace kubex::common
