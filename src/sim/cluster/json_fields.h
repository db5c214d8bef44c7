// Reading fields of stored objects without throwing: objects from users may hold anything, and an odd one
// must not crash a reconcile, a scheduling pass or the kubelet. Absent or mistyped fields give the default.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace kubex::sim::cluster {

const nlohmann::json& json_at(const nlohmann::json& obj, const char* key);         // null when absent
const nlohmann::json& json_object_at(const nlohmann::json& obj, const char* key);  // {} unless an object
const nlohmann::json& json_array_at(const nlohmann::json& obj, const char* key);   // [] unless an array
std::int64_t json_int(const nlohmann::json& obj, const char* key, std::int64_t def);
std::string json_str(const nlohmann::json& obj, const char* key, const std::string& def = "");
bool json_bool(const nlohmann::json& obj, const char* key, bool def);
std::map<std::string, std::string> json_string_map(const nlohmann::json& obj, const char* key);

}  // namespace kubex::sim::cluster
