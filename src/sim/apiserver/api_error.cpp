#include "sim/apiserver/api_error.h"

#include <nlohmann/json.hpp>

#include "sim/apiserver/resource.h"

namespace kubex::sim {

nlohmann::json ApiError::to_status() const {
  nlohmann::json s = {{"kind", "Status"},       {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                      {"status", "Failure"},    {"message", message}, {"reason", reason},
                      {"code", code}};
  nlohmann::json details = nlohmann::json::object();
  if (!name.empty()) details["name"] = name;
  if (!group.empty()) details["group"] = group;
  if (!kind.empty()) details["kind"] = kind;
  if (!causes.empty()) {
    auto arr = nlohmann::json::array();
    for (const auto& c : causes) {
      // Causes carry the message body; the field goes in its own member (like field.Error.ErrorBody()).
      std::string body = c.message;
      if (!c.field.empty() && body.rfind(c.field + ": ", 0) == 0) body = body.substr(c.field.size() + 2);
      nlohmann::json jc = {{"reason", c.reason}, {"message", body}};
      if (!c.field.empty()) jc["field"] = c.field;
      arr.push_back(std::move(jc));
    }
    details["causes"] = std::move(arr);
  }
  if (retry_after_seconds > 0) details["retryAfterSeconds"] = retry_after_seconds;
  if (!details.empty()) s["details"] = std::move(details);
  if (reason.empty()) s.erase("reason");
  return s;
}

ApiError not_found(const ResourceInfo& r, const std::string& name) {
  return {404, "NotFound", r.qualified_plural() + " \"" + name + "\" not found", name, r.group, r.plural, {}, 0};
}

ApiError already_exists(const ResourceInfo& r, const std::string& name) {
  return {409, "AlreadyExists", r.qualified_plural() + " \"" + name + "\" already exists", name, r.group, r.plural,
          {}, 0};
}

ApiError conflict(const ResourceInfo& r, const std::string& name, const std::string& why) {
  return {409,     "Conflict", "Operation cannot be fulfilled on " + r.qualified_plural() + " \"" + name + "\": " + why,
          name,    r.group,    r.plural,
          {},      0};
}

ApiError invalid(const ResourceInfo& r, const std::string& name, std::vector<StatusCause> causes) {
  std::string msg = r.qualified_kind() + " \"" + name + "\" is invalid: ";
  if (causes.size() == 1) {
    msg += causes[0].message;
  } else {
    msg += "[";
    for (std::size_t i = 0; i < causes.size(); ++i) {
      if (i) msg += ", ";
      msg += causes[i].message;
    }
    msg += "]";
  }
  return {422, "Invalid", msg, name, r.group, r.kind, std::move(causes), 0};
}

ApiError bad_request(std::string message) { return {400, "BadRequest", std::move(message), "", "", "", {}, 0}; }
ApiError forbidden(std::string message) { return {403, "Forbidden", std::move(message), "", "", "", {}, 0}; }

ApiError method_not_supported(const ResourceInfo& r, const std::string& verb) {
  return {405, "MethodNotAllowed", verb + " is not supported on resources of kind \"" + r.qualified_plural() + "\"",
          "", r.group, r.plural, {}, 0};
}

ApiError unsupported_media_type(std::string message) {
  return {415, "UnsupportedMediaType", std::move(message), "", "", "", {}, 0};
}

ApiError not_acceptable(std::string message) { return {406, "NotAcceptable", std::move(message), "", "", "", {}, 0}; }
ApiError expired(std::string message) { return {410, "Expired", std::move(message), "", "", "", {}, 0}; }

ApiError too_many_requests(std::string message, int retry_after_seconds) {
  return {429, "TooManyRequests", std::move(message), "", "", "", {}, retry_after_seconds};
}

ApiError internal_error(std::string message) {
  return {500, "InternalError", "Internal error occurred: " + message, "", "", "", {}, 0};
}

ApiError unauthorized() { return {401, "Unauthorized", "Unauthorized", "", "", "", {}, 0}; }
ApiError page_not_found() { return {404, "NotFound", "the server could not find the requested resource", "", "", "", {}, 0}; }

}  // namespace kubex::sim
