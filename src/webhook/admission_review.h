// The admission.k8s.io/v1 AdmissionReview envelope (DESIGN §3 webhook/, VAL-9): decodes a request body into a
// typed AdmissionRequest and encodes an AdmissionResponse (uid echoed, JSONPatch as base64 RFC 6902 with
// patchType JSONPatch, warnings). Neither function throws on any input.
#pragma once

#include <expected>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kubex::common {
class JsonProjection;
}

namespace kubex::webhook {

inline constexpr const char* kAdmissionApiVersion = "admission.k8s.io/v1";
inline constexpr const char* kAdmissionReviewKind = "AdmissionReview";
// Bodies nested deeper than this are refused as bad requests: later stages (diff, dump) recurse per level.
inline constexpr int kMaxJsonDepth = 512;

struct GroupVersionKind {
  std::string group, version, kind;
  bool operator==(const GroupVersionKind&) const = default;
};

struct GroupVersionResource {
  std::string group, version, resource;
  bool operator==(const GroupVersionResource&) const = default;
};

enum class Operation { kUnknown, kCreate, kUpdate, kDelete, kConnect };
// "CREATE", "UPDATE", "DELETE", "CONNECT"; "" for kUnknown.
const char* operation_name(Operation op);
Operation parse_operation(std::string_view name);

struct UserInfo {
  std::string username, uid;
  std::vector<std::string> groups;
};

// `request` of an AdmissionReview. Fields of the wrong JSON type are treated as absent (only the envelope
// checks of VAL-9 reject a request).
struct AdmissionRequest {
  std::string uid;
  GroupVersionKind kind;
  GroupVersionResource resource;
  std::string sub_resource;
  std::optional<GroupVersionKind> request_kind;
  std::optional<GroupVersionResource> request_resource;
  std::string request_sub_resource;
  std::string name, ns;
  Operation operation = Operation::kUnknown;
  std::string operation_text;  // as sent, e.g. "CREATE" (also for operations this enum does not know)
  UserInfo user_info;
  bool dry_run = false;
  // The objects and options as sent; JSON null when absent. Never null pointers.
  std::shared_ptr<const nlohmann::json> object, old_object, options;
};

// Why a body is not an acceptable AdmissionReview; message() is the VAL-9 answer body.
struct DecodeError {
  std::string reason;
  std::string message() const { return "invalid AdmissionReview: " + reason; }
};

// VAL-9: fails when the body is not JSON (or is nested deeper than kMaxJsonDepth), apiVersion is not
// admission.k8s.io/v1, kind is not AdmissionReview, or request / request.uid is missing.
//
// `fields` (from review_fields): the parts of the review to build; the rest is checked as JSON exactly as
// without it, but not built. nullptr: the whole review.
std::expected<AdmissionRequest, DecodeError> decode_admission_review(
    std::string_view body, const common::JsonProjection* fields = nullptr);

// The review cut to what a handler reads: request.object and request.oldObject cut down to `object_fields`
// (e.g. decide::admission_pod_fields()), everything else whole.
common::JsonProjection review_fields(const common::JsonProjection& object_fields);

struct AdmissionStatus {
  int code = 0;        // HTTP-style code, e.g. 422 (VAL-1) or 403
  std::string reason;  // "Invalid", "Forbidden", ...
  std::string message;
};

struct AdmissionResponse {
  bool allowed = true;
  std::optional<AdmissionStatus> status;
  // RFC 6902 JSON Patch as JSON text (an array); empty or "[]" means no patch. Use set_patch().
  std::string patch;
  // set_patch() checked the operations already, so encoding need not parse `patch` again.
  bool patch_checked = false;
  std::vector<std::string> warnings;
  // Not encoded: the handler answered fail-open because of an internal problem (e.g. an object that does
  // not decode as a Pod, VAL-9), so the request counts as result="error".
  bool internal_error = false;
  // Not encoded: the request was kubex's own webhook health probe (WHH-1), counted as result="probe".
  bool probe = false;

  static AdmissionResponse allow();
  static AdmissionResponse deny(int code, std::string reason, std::string message);
  // Stores `ops` (a JSON array of patch operations, e.g. nlohmann::json::diff(before, after)).
  void set_patch(const nlohmann::json& ops);
  bool has_patch() const;
};

// The response AdmissionReview as JSON text: apiVersion admission.k8s.io/v1, kind AdmissionReview,
// response {uid, allowed, status?, patchType: JSONPatch + patch (base64) when allowed with a non-empty
// patch, warnings?}. Fails (without throwing) when `patch` is not a JSON array or a string is not UTF-8.
common::Result<std::string> encode_admission_review(const std::string& uid,
                                                    const AdmissionResponse& response);

}  // namespace kubex::webhook
