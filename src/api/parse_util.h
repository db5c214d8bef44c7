// Internal to src/api: tolerant typed reads for the parsers (parse*.cpp). The parsers run on a defaulted copy
// of an object that may still be invalid, so every read falls back to the SPEC default when a value is absent
// or of the wrong type; the validator reports the problem separately.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/objects.h"

namespace kubex::api::detail {

// parent[key] when parent is an object and the value is present and not null.
const nlohmann::json* child(const nlohmann::json& parent, std::string_view key);
// parent[key] when it is an object; else an empty object.
const nlohmann::json& child_object(const nlohmann::json& parent, std::string_view key);

bool read_bool(const nlohmann::json& parent, std::string_view key, bool fallback);
std::int32_t read_int32(const nlohmann::json& parent, std::string_view key, std::int32_t fallback);
std::int64_t read_int64(const nlohmann::json& parent, std::string_view key, std::int64_t fallback);
std::string read_string(const nlohmann::json& parent, std::string_view key, const std::string& fallback = "");
Duration read_duration(const nlohmann::json& parent, std::string_view key, Duration fallback);
// int-or-string (integers and strings only, like the CRD schema).
std::optional<Quantity> read_quantity(const nlohmann::json& parent, std::string_view key);
std::vector<std::string> read_strings(const nlohmann::json& parent, std::string_view key);
std::map<std::string, std::string> read_string_map(const nlohmann::json& parent, std::string_view key);
// metav1.LabelSelector; `present` is false when the field is absent.
LabelSelector read_selector(const nlohmann::json& parent, std::string_view key);

// The object's kind, when it names one of the rightsizing.kubex.ai kinds.
std::optional<Kind> kind_of(const nlohmann::json& obj);

}  // namespace kubex::api::detail
