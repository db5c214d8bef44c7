// kube-apiserver style failures, rendered as metav1.Status objects.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace kubex::sim {

struct ResourceInfo;

struct StatusCause {
  std::string reason;   // FieldValueInvalid, FieldValueRequired, ...
  std::string message;  // full text, "field: detail" (the Status cause carries only the detail)
  std::string field;
};

struct ApiError {
  int code = 500;
  std::string reason;   // NotFound, AlreadyExists, Conflict, Invalid, BadRequest, ...
  std::string message;
  std::string name;     // details.name
  std::string group;    // details.group
  std::string kind;     // details.kind (plural resource name for most errors, like kube-apiserver)
  std::vector<StatusCause> causes;
  int retry_after_seconds = 0;

  nlohmann::json to_status() const;
};

ApiError not_found(const ResourceInfo& r, const std::string& name);
ApiError already_exists(const ResourceInfo& r, const std::string& name);
ApiError conflict(const ResourceInfo& r, const std::string& name, const std::string& why);
// `Kind.group "name" is invalid: <causes joined>`
ApiError invalid(const ResourceInfo& r, const std::string& name, std::vector<StatusCause> causes);
ApiError bad_request(std::string message);
ApiError forbidden(std::string message);
ApiError method_not_supported(const ResourceInfo& r, const std::string& verb);
ApiError unsupported_media_type(std::string message);
ApiError not_acceptable(std::string message);
ApiError expired(std::string message);  // 410 Gone, reason Expired
ApiError too_many_requests(std::string message, int retry_after_seconds);
ApiError internal_error(std::string message);
ApiError unauthorized();
ApiError page_not_found();

}  // namespace kubex::sim
