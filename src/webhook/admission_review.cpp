#include "webhook/admission_review.h"

#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/json_parse.h"
#include "common/json_projection.h"
#include "common/json_write.h"

namespace kubex::webhook {

using nlohmann::json;

namespace {

const auto kNull = std::make_shared<const json>(nullptr);

// Deepest array/object nesting of a JSON text (strings skipped); stops counting past `limit`.
int nesting_depth(std::string_view text, int limit) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) max_depth = depth;
      if (max_depth > limit) return max_depth;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

std::string str_field(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<GroupVersionKind> gvk(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_object()) return std::nullopt;
  return GroupVersionKind{str_field(*it, "group"), str_field(*it, "version"), str_field(*it, "kind")};
}

std::optional<GroupVersionResource> gvr(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_object()) return std::nullopt;
  return GroupVersionResource{str_field(*it, "group"), str_field(*it, "version"), str_field(*it, "resource")};
}

std::shared_ptr<const json> take(json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return kNull;
  return std::make_shared<const json>(std::move(*it));
}

std::string describe(const json& j) {
  if (j.is_string()) return "\"" + j.get<std::string>() + "\"";
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// "" when `ops` is a JSON array of operations with a string op and path; else why not.
std::string check_patch_ops(const json& ops) {
  if (ops.is_discarded() || !ops.is_array()) return "patch is not a JSON array";
  for (const auto& op : ops) {
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string() || !op.contains("path") ||
        !op["path"].is_string()) {
      return "patch operation " + describe(op) + " lacks a string op and path";
    }
  }
  return "";
}

std::unexpected<DecodeError> bad(std::string reason) {
  return std::unexpected(DecodeError{std::move(reason)});
}

}  // namespace

const char* operation_name(Operation op) {
  switch (op) {
    case Operation::kCreate:
      return "CREATE";
    case Operation::kUpdate:
      return "UPDATE";
    case Operation::kDelete:
      return "DELETE";
    case Operation::kConnect:
      return "CONNECT";
    case Operation::kUnknown:
      break;
  }
  return "";
}

Operation parse_operation(std::string_view name) {
  if (name == "CREATE") return Operation::kCreate;
  if (name == "UPDATE") return Operation::kUpdate;
  if (name == "DELETE") return Operation::kDelete;
  if (name == "CONNECT") return Operation::kConnect;
  return Operation::kUnknown;
}

common::JsonProjection review_fields(const common::JsonProjection& object_fields) {
  using P = common::JsonProjection;
  return P::members(
      {{"request", P::members({{"object", object_fields}, {"oldObject", object_fields}}, true)}}, true);
}

std::expected<AdmissionRequest, DecodeError> decode_admission_review(std::string_view body,
                                                                     const common::JsonProjection* fields) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return bad("request body is empty");
  json review;
  try {
    // The fast parser builds the same value and refuses deeper nesting; nlohmann's parse explains what it
    // refuses.
    if (!common::parse_json_fast(body, review, kMaxJsonDepth, fields)) {
      if (nesting_depth(body, kMaxJsonDepth) > kMaxJsonDepth) {
        return bad("request body is nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      }
      review = json::parse(body);
      if (fields) review = common::project(review, *fields);
    }
  } catch (const json::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> drop the exception id.
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return bad("request body is not JSON: " + what);
  } catch (const std::exception& e) {
    return bad(std::string("request body is not JSON: ") + e.what());
  }
  if (!review.is_object()) return bad("request body is not a JSON object");
  auto api_version = review.find("apiVersion");
  if (api_version == review.end()) return bad("apiVersion is missing, expected \"admission.k8s.io/v1\"");
  if (*api_version != kAdmissionApiVersion) {
    return bad("apiVersion " + describe(*api_version) +
               " is not supported, expected \"admission.k8s.io/v1\"");
  }
  auto kind = review.find("kind");
  if (kind == review.end()) return bad("kind is missing, expected \"AdmissionReview\"");
  if (*kind != kAdmissionReviewKind) return bad("kind " + describe(*kind) + " is not \"AdmissionReview\"");
  auto rq = review.find("request");
  if (rq == review.end() || rq->is_null()) return bad("request is missing");
  if (!rq->is_object()) return bad("request is not an object");
  json& r = *rq;
  auto uid = r.find("uid");
  if (uid == r.end() || uid->is_null()) return bad("request.uid is missing");
  if (!uid->is_string() || uid->get_ref<const std::string&>().empty()) {
    return bad("request.uid must be a non-empty string");
  }

  AdmissionRequest out;
  out.uid = uid->get<std::string>();
  out.kind = gvk(r, "kind").value_or(GroupVersionKind{});
  out.resource = gvr(r, "resource").value_or(GroupVersionResource{});
  out.sub_resource = str_field(r, "subResource");
  out.request_kind = gvk(r, "requestKind");
  out.request_resource = gvr(r, "requestResource");
  out.request_sub_resource = str_field(r, "requestSubResource");
  out.name = str_field(r, "name");
  out.ns = str_field(r, "namespace");
  out.operation_text = str_field(r, "operation");
  out.operation = parse_operation(out.operation_text);
  if (auto u = r.find("userInfo"); u != r.end() && u->is_object()) {
    out.user_info.username = str_field(*u, "username");
    out.user_info.uid = str_field(*u, "uid");
    if (auto g = u->find("groups"); g != u->end() && g->is_array()) {
      for (const auto& v : *g) {
        if (v.is_string()) out.user_info.groups.push_back(v.get<std::string>());
      }
    }
  }
  if (auto d = r.find("dryRun"); d != r.end() && d->is_boolean()) out.dry_run = d->get<bool>();
  out.object = take(r, "object");
  out.old_object = take(r, "oldObject");
  out.options = take(r, "options");
  return out;
}

AdmissionResponse AdmissionResponse::allow() {
  return AdmissionResponse{};
}

AdmissionResponse AdmissionResponse::deny(int code, std::string reason, std::string message) {
  AdmissionResponse r;
  r.allowed = false;
  r.status = AdmissionStatus{code, std::move(reason), std::move(message)};
  return r;
}

void AdmissionResponse::set_patch(const json& ops) {
  patch = ops.is_array() && !ops.empty() ? ops.dump(-1, ' ', false, json::error_handler_t::replace) : "";
  // A patch with a malformed operation stays unchecked: encoding then reports it (never a silent bad patch).
  patch_checked = patch.empty() || check_patch_ops(ops).empty();
}

bool AdmissionResponse::has_patch() const {
  if (patch.empty()) return false;
  auto first = patch.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return false;
  if (patch[first] != '[') return true;  // not an array: encode_admission_review reports it
  auto next = patch.find_first_not_of(" \t\r\n", first + 1);
  return next == std::string::npos || patch[next] != ']';
}

common::Result<std::string> encode_admission_review(const std::string& uid, const AdmissionResponse& r) {
  std::string patch;  // base64
  const bool with_patch = r.allowed && r.has_patch();
  if (with_patch) {
    if (r.patch_checked) {
      patch = common::base64_encode(r.patch);
    } else {
      json ops = json::parse(r.patch, nullptr, false);
      if (auto why = check_patch_ops(ops); !why.empty()) return common::fail(why);
      patch = common::base64_encode(ops.dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  // Written directly, keys in the order nlohmann's dump of the same object gives (sorted).
  std::string out;
  out.reserve(160 + patch.size() + uid.size());
  out += R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":)";
  out += r.allowed ? "true" : "false";
  if (with_patch) {
    out += R"(,"patch":")";
    out += patch;
    out += R"(","patchType":"JSONPatch")";
  }
  if (r.status) {
    out += R"(,"status":{)";
    const char* sep = "";
    if (r.status->code != 0) {
      out += R"("code":)";
      out += std::to_string(r.status->code);
      sep = ",";
    }
    if (!r.status->message.empty()) {
      out += sep;
      out += R"("message":)";
      common::append_json_string(out, r.status->message);
      sep = ",";
    }
    if (!r.status->reason.empty()) {
      out += sep;
      out += R"("reason":)";
      common::append_json_string(out, r.status->reason);
    }
    out += '}';
  } else if (!r.allowed) {
    out += R"(,"status":{"code":403,"reason":"Forbidden"})";
  }
  out += R"(,"uid":)";
  common::append_json_string(out, uid);
  if (!r.warnings.empty()) {
    out += R"(,"warnings":[)";
    for (std::size_t i = 0; i < r.warnings.size(); ++i) {
      if (i > 0) out += ',';
      common::append_json_string(out, r.warnings[i]);
    }
    out += ']';
  }
  out += "}}";
  return out;
}

}  // namespace kubex::webhook
