#include "sim/cluster/json_fields.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace kubex::sim::cluster {

using nlohmann::json;

namespace {
const json kNull = nullptr;
const json kEmptyObject = json::object();
const json kEmptyArray = json::array();
}  // namespace

const json& json_at(const json& obj, const char* key) {
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

const json& json_object_at(const json& obj, const char* key) {
  const json& v = json_at(obj, key);
  return v.is_object() ? v : kEmptyObject;
}

const json& json_array_at(const json& obj, const char* key) {
  const json& v = json_at(obj, key);
  return v.is_array() ? v : kEmptyArray;
}

std::int64_t json_int(const json& obj, const char* key, std::int64_t def) {
  const json& v = json_at(obj, key);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_unsigned())
    return static_cast<std::int64_t>(std::min<std::uint64_t>(v.get<std::uint64_t>(), INT64_MAX));
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && std::abs(d) < 9e18) return static_cast<std::int64_t>(d);
  }
  return def;
}

std::string json_str(const json& obj, const char* key, const std::string& def) {
  const json& v = json_at(obj, key);
  return v.is_string() ? v.get<std::string>() : def;
}

bool json_bool(const json& obj, const char* key, bool def) {
  const json& v = json_at(obj, key);
  return v.is_boolean() ? v.get<bool>() : def;
}

std::map<std::string, std::string> json_string_map(const json& obj, const char* key) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : json_object_at(obj, key).items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace kubex::sim::cluster
