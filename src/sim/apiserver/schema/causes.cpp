#include "sim/apiserver/schema/causes.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "sim/apiserver/go_format.h"

namespace kubex::sim::schema {

using nlohmann::json;

Cause make_cause(std::string reason, std::string field, const std::string& body, std::string bad_value) {
  Cause c;
  c.reason = std::move(reason);
  c.message = field + ": " + body;
  c.field = std::move(field);
  c.bad_value = std::move(bad_value);
  return c;
}

std::string with_detail(std::string s, const std::string& detail) {
  if (!detail.empty()) s += ": " + detail;
  return s;
}

Cause required_cause(std::string field, const std::string& detail) {
  return make_cause("FieldValueRequired", std::move(field), with_detail("Required value", detail));
}

Cause forbidden_cause(std::string field, const std::string& detail) {
  return make_cause("FieldValueForbidden", std::move(field), with_detail("Forbidden", detail));
}

Cause invalid_rendered(std::string field, std::string bad, const std::string& detail,
                       std::string reason) {
  std::string body = with_detail("Invalid value: " + bad, detail);
  return make_cause(std::move(reason), std::move(field), body, std::move(bad));
}

Cause invalid_cause(std::string field, const json& value, const std::string& detail,
                    std::string reason) {
  return invalid_rendered(std::move(field), go_value(value), detail, std::move(reason));
}

Cause not_supported_cause(std::string field, const json& value, const std::vector<std::string>& supported) {
  std::string bad = go_value(value);
  std::string detail;
  for (const auto& s : supported) {
    detail += detail.empty() ? "supported values: " : ", ";
    detail += go_quote(s);
  }
  return make_cause("FieldValueNotSupported", std::move(field),
                    with_detail("Unsupported value: " + bad, detail), bad);
}

Cause duplicate_cause(std::string field, const json& value) {
  std::string bad = go_value(value);
  return make_cause("FieldValueDuplicate", std::move(field), "Duplicate value: " + bad, bad);
}

Cause too_long_cause(std::string field, int64_t max) {
  std::string detail = "may not be more than " + std::to_string(max) + (max == 1 ? " byte" : " bytes");
  return make_cause("FieldValueTooLong", std::move(field), "Too long: " + detail);
}

Cause too_many_cause(std::string field, int64_t actual, int64_t max) {
  std::string detail = "must have at most " + std::to_string(max) + (max == 1 ? " item" : " items");
  std::string bad = std::to_string(actual);
  return make_cause("FieldValueTooMany", std::move(field), "Too many: " + bad + ": " + detail, bad);
}

}  // namespace kubex::sim::schema
