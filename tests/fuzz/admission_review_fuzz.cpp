// libFuzzer target for the AdmissionReview codec (VAL-9): decoding arbitrary bytes never throws or crashes;
// decoding with the pod paths' projection accepts and refuses exactly the same bodies (with the same answer)
// and gives the projection of the whole object; a decoded request's uid is echoed by the encoder, and a
// patch built from its object round-trips.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/base64.h"
#include "common/json_projection.h"
#include "decide/admission/pod_mutation.h"
#include "webhook/admission_review.h"

namespace {

[[noreturn]] void violated() {
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kubex::webhook::AdmissionResponse;
  using nlohmann::json;
  std::string_view body(reinterpret_cast<const char*>(data), size);
  auto request = kubex::webhook::decode_admission_review(body);
  static const kubex::common::JsonProjection fields =
      kubex::webhook::review_fields(kubex::decide::admission_pod_fields());
  auto cut = kubex::webhook::decode_admission_review(body, &fields);
  if (cut.has_value() != request.has_value()) violated();
  if (!request) {
    if (request.error().message().rfind("invalid AdmissionReview: ", 0) != 0) violated();
    if (cut.error().message() != request.error().message()) violated();
    return 0;
  }
  if (*cut->object != kubex::common::project(*request->object, kubex::decide::admission_pod_fields()) ||
      cut->uid != request->uid || *cut->options != *request->options) {
    violated();
  }
  if (request->uid.empty() || !request->object || !request->old_object || !request->options) violated();

  AdmissionResponse response;
  json after = request->object->is_object() ? *request->object : json::object();
  after["metadata"]["labels"]["fuzz"] = "yes";
  response.set_patch(json::diff(*request->object, after));
  response.warnings = {request->name, request->ns};
  auto encoded = kubex::webhook::encode_admission_review(request->uid, response);
  if (!encoded) violated();
  json review = json::parse(*encoded, nullptr, false);
  if (review.is_discarded() || review["response"]["uid"] != request->uid) violated();
  if (review["response"].contains("patch")) {
    auto raw = kubex::common::base64_decode(review["response"]["patch"].get<std::string>());
    if (!raw) violated();
    json ops = json::parse(*raw, nullptr, false);
    if (!ops.is_array()) violated();
    json patched = request->object->patch(ops);
    if (patched != after) violated();
  }
  auto denial = kubex::webhook::encode_admission_review(
      request->uid, AdmissionResponse::deny(422, "Invalid", request->operation_text));
  if (!denial) violated();
  return 0;
}
