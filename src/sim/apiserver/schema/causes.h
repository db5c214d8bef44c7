// field.Error values as k8s.io/apimachinery builds and prints them (Required, Forbidden, Invalid,
// NotSupported, Duplicate, TooLong, TooMany), values rendered by go_format.h.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "sim/apiserver/schema.h"

namespace kubex::sim::schema {

// `field: body`, with the bad value as the body renders it.
Cause make_cause(std::string reason, std::string field, const std::string& body, std::string bad_value = {});
// `s: detail`, or `s` when detail is empty.
std::string with_detail(std::string s, const std::string& detail);

Cause required_cause(std::string field, const std::string& detail);
Cause forbidden_cause(std::string field, const std::string& detail);
// Invalid value with the bad value already rendered.
Cause invalid_rendered(std::string field, std::string bad, const std::string& detail,
                       std::string reason = "FieldValueInvalid");
Cause invalid_cause(std::string field, const nlohmann::json& value, const std::string& detail,
                    std::string reason = "FieldValueInvalid");
Cause not_supported_cause(std::string field, const nlohmann::json& value,
                          const std::vector<std::string>& supported);
Cause duplicate_cause(std::string field, const nlohmann::json& value);
Cause too_long_cause(std::string field, int64_t max);
Cause too_many_cause(std::string field, int64_t actual, int64_t max);

}  // namespace kubex::sim::schema
