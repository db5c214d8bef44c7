// The AdmissionReview v1 codec: every VAL-9 envelope failure, typed decoding of a request, uid echo,
// base64 JSONPatch encoding and robustness against garbage input.
#include "webhook/admission_review.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "common/base64.h"
#include "common/json_projection.h"
#include "decide/admission/pod_mutation.h"

namespace kubex::webhook {
namespace {

using nlohmann::json;

json review(json request) {
  return {
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", std::move(request)}};
}

json pod_request() {
  return {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
          {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
          {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
          {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
          {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
          {"name", "web-0"},
          {"namespace", "team-a"},
          {"operation", "CREATE"},
          {"userInfo",
           {{"username", "system:serviceaccount:kube-system:replicaset-controller"},
            {"uid", "u-1"},
            {"groups", {"system:serviceaccounts", "system:authenticated"}}}},
          {"object", {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "web-0"}}}}},
          {"oldObject", nullptr},
          {"dryRun", false},
          {"options", {{"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}}}};
}

std::string decode_error(std::string_view body) {
  auto r = decode_admission_review(body);
  EXPECT_FALSE(r.has_value()) << body;
  return r ? "" : r.error().message();
}

// VAL-9: the body is not JSON.
TEST(AdmissionReviewDecode, BodyNotJson) {
  EXPECT_EQ(decode_error(""), "invalid AdmissionReview: request body is empty");
  EXPECT_EQ(decode_error("   \n"), "invalid AdmissionReview: request body is empty");
  std::string msg = decode_error("{\"apiVersion\": ");
  EXPECT_EQ(msg.rfind("invalid AdmissionReview: request body is not JSON: parse error", 0), 0u) << msg;
  EXPECT_EQ(decode_error("<html>").rfind("invalid AdmissionReview: request body is not JSON", 0), 0u);
  EXPECT_EQ(decode_error("[1,2]"), "invalid AdmissionReview: request body is not a JSON object");
  EXPECT_EQ(decode_error("\"text\""), "invalid AdmissionReview: request body is not a JSON object");
  EXPECT_EQ(decode_error("null"), "invalid AdmissionReview: request body is not a JSON object");
}

// VAL-9: apiVersion is not admission.k8s.io/v1.
TEST(AdmissionReviewDecode, WrongApiVersion) {
  json r = review(pod_request());
  r["apiVersion"] = "admission.k8s.io/v1beta1";
  EXPECT_EQ(decode_error(r.dump()),
            "invalid AdmissionReview: apiVersion \"admission.k8s.io/v1beta1\" is not supported, expected "
            "\"admission.k8s.io/v1\"");
  r["apiVersion"] = 1;
  EXPECT_EQ(decode_error(r.dump()),
            "invalid AdmissionReview: apiVersion 1 is not supported, expected \"admission.k8s.io/v1\"");
  r.erase("apiVersion");
  EXPECT_EQ(decode_error(r.dump()),
            "invalid AdmissionReview: apiVersion is missing, expected \"admission.k8s.io/v1\"");
}

// VAL-9: kind is not AdmissionReview.
TEST(AdmissionReviewDecode, WrongKind) {
  json r = review(pod_request());
  r["kind"] = "AdmissionRequest";
  EXPECT_EQ(decode_error(r.dump()),
            "invalid AdmissionReview: kind \"AdmissionRequest\" is not \"AdmissionReview\"");
  r.erase("kind");
  EXPECT_EQ(decode_error(r.dump()), "invalid AdmissionReview: kind is missing, expected \"AdmissionReview\"");
}

// VAL-9: request or request.uid is missing.
TEST(AdmissionReviewDecode, MissingRequestOrUid) {
  json r = review(pod_request());
  r.erase("request");
  EXPECT_EQ(decode_error(r.dump()), "invalid AdmissionReview: request is missing");
  r["request"] = nullptr;
  EXPECT_EQ(decode_error(r.dump()), "invalid AdmissionReview: request is missing");
  r["request"] = "x";
  EXPECT_EQ(decode_error(r.dump()), "invalid AdmissionReview: request is not an object");
  json q = pod_request();
  q.erase("uid");
  EXPECT_EQ(decode_error(review(q).dump()), "invalid AdmissionReview: request.uid is missing");
  q["uid"] = "";
  EXPECT_EQ(decode_error(review(q).dump()),
            "invalid AdmissionReview: request.uid must be a non-empty string");
  q["uid"] = 7;
  EXPECT_EQ(decode_error(review(q).dump()),
            "invalid AdmissionReview: request.uid must be a non-empty string");
}

TEST(AdmissionReviewDecode, TooDeeplyNestedIsRefused) {
  json q = pod_request();
  std::string deep(kMaxJsonDepth + 10, '[');
  deep += std::string(kMaxJsonDepth + 10, ']');
  std::string body = review(q).dump();
  body.insert(body.size() - 2, ",\"x\":" + deep);
  EXPECT_EQ(decode_error(body).rfind("invalid AdmissionReview: request body is nested deeper than", 0), 0u);
  // Brackets inside strings do not count.
  q["object"]["metadata"]["annotations"] = {{"a", std::string(2000, '[')}};
  EXPECT_TRUE(decode_admission_review(review(q).dump()).has_value());
}

TEST(AdmissionReviewDecode, TypedFields) {
  json q = pod_request();
  q["dryRun"] = true;
  q["subResource"] = "status";
  q["requestSubResource"] = "status";
  auto r = decode_admission_review(review(q).dump());
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
  EXPECT_EQ(r->kind, (GroupVersionKind{"", "v1", "Pod"}));
  EXPECT_EQ(r->resource, (GroupVersionResource{"", "v1", "pods"}));
  ASSERT_TRUE(r->request_kind.has_value());
  EXPECT_EQ(*r->request_kind, (GroupVersionKind{"", "v1", "Pod"}));
  ASSERT_TRUE(r->request_resource.has_value());
  EXPECT_EQ(r->sub_resource, "status");
  EXPECT_EQ(r->request_sub_resource, "status");
  EXPECT_EQ(r->name, "web-0");
  EXPECT_EQ(r->ns, "team-a");
  EXPECT_EQ(r->operation, Operation::kCreate);
  EXPECT_EQ(r->operation_text, "CREATE");
  EXPECT_EQ(r->user_info.username, "system:serviceaccount:kube-system:replicaset-controller");
  EXPECT_EQ(r->user_info.uid, "u-1");
  EXPECT_EQ(r->user_info.groups,
            (std::vector<std::string>{"system:serviceaccounts", "system:authenticated"}));
  EXPECT_TRUE(r->dry_run);
  ASSERT_TRUE(r->object && r->old_object && r->options);
  EXPECT_EQ(*r->object, q["object"]);
  EXPECT_TRUE(r->old_object->is_null());
  EXPECT_EQ((*r->options)["kind"], "CreateOptions");
}

TEST(AdmissionReviewDecode, OperationsAndLenientOptionalFields) {
  for (const char* op : {"CREATE", "UPDATE", "DELETE", "CONNECT"}) {
    json q = pod_request();
    q["operation"] = op;
    auto r = decode_admission_review(review(q).dump());
    ASSERT_TRUE(r.has_value());
    EXPECT_STREQ(operation_name(r->operation), op);
  }
  // A minimal request: only the uid. Wrongly typed optional fields read as absent.
  json q = {{"uid", "u"}, {"kind", "Pod"}, {"operation", 3}, {"userInfo", "x"}, {"dryRun", "true"}};
  auto r = decode_admission_review(review(q).dump());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->kind, GroupVersionKind{});
  EXPECT_FALSE(r->request_kind.has_value());
  EXPECT_EQ(r->operation, Operation::kUnknown);
  EXPECT_STREQ(operation_name(r->operation), "");
  EXPECT_FALSE(r->dry_run);
  ASSERT_TRUE(r->object && r->old_object && r->options);
  EXPECT_TRUE(r->object->is_null());
  // DELETE carries oldObject only.
  json d = pod_request();
  d["operation"] = "DELETE";
  d["oldObject"] = d["object"];
  d["object"] = nullptr;
  auto del = decode_admission_review(review(d).dump());
  ASSERT_TRUE(del.has_value());
  EXPECT_TRUE(del->object->is_null());
  EXPECT_EQ((*del->old_object)["kind"], "Pod");
}

// The pod paths decode only what admission reads of the pod (PodAdmission::handler_options): the object
// is exactly the projection of the whole object, the rest of the request is untouched, and a body is
// accepted or refused (with the same VAL-9 answer) exactly as without the projection.
TEST(AdmissionReviewDecode, PodFieldsProjection) {
  const common::JsonProjection fields = review_fields(decide::admission_pod_fields());
  json q = pod_request();
  q["object"] = {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata",
                  {{"generateName", "web-"},
                   {"labels", {{"app", "web"}}},
                   {"annotations", {{"a", "b"}}},
                   {"ownerReferences", json::array({{{"kind", "ReplicaSet"}, {"name", "web-1"}}})},
                   {"managedFields", json::array({{{"manager", "kubectl"}}})}}},
                 {"spec",
                  {{"schedulerName", "default-scheduler"},
                   {"volumes", json::array({{{"name", "v"}, {"emptyDir", json::object()}}})},
                   {"containers", json::array({{{"name", "c"},
                                                {"image", "vllm/vllm-openai"},
                                                {"args", {"--x"}},
                                                {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}},
                                                {"env", json::array({{{"name", "E"}, {"value", "1"}}})},
                                                {"livenessProbe", {{"httpGet", {{"port", 80}}}}}}})}}},
                 {"status", json::object()}};
  q["oldObject"] = q["object"];
  auto whole = decode_admission_review(review(q).dump());
  auto cut = decode_admission_review(review(q).dump(), &fields);
  ASSERT_TRUE(whole.has_value() && cut.has_value());
  EXPECT_EQ(*cut->object, common::project(*whole->object, decide::admission_pod_fields()));
  EXPECT_EQ(*cut->old_object, *cut->object);
  EXPECT_EQ((*cut->object)["spec"]["containers"][0],
            json({{"name", "c"},
                  {"image", "vllm/vllm-openai"},
                  {"args", {"--x"}},
                  {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}));
  EXPECT_FALSE((*cut->object)["metadata"].contains("managedFields"));
  EXPECT_FALSE((*cut->object)["spec"].contains("volumes"));
  EXPECT_FALSE(cut->object->contains("status"));
  EXPECT_EQ(cut->uid, whole->uid);
  EXPECT_EQ(cut->user_info.groups, whole->user_info.groups);
  EXPECT_EQ(*cut->options, *whole->options);

  // Bad JSON in a part that is not built is refused as it is without the projection.
  std::string text = review(q).dump();
  text.replace(text.find("\"emptyDir\":{}"), 13, "\"emptyDir\":{,}");
  auto bad_whole = decode_admission_review(text);
  auto bad_cut = decode_admission_review(text, &fields);
  ASSERT_FALSE(bad_whole.has_value());
  ASSERT_FALSE(bad_cut.has_value());
  EXPECT_EQ(bad_cut.error().message(), bad_whole.error().message());
  // A number beyond the fast parser's range in a dropped part: nlohmann parses, then the projection applies.
  q["object"]["spec"]["volumes"][0]["size"] = 1e300;
  text = review(q).dump();
  text.replace(text.find("1e+300"), 6, "18446744073709551616");
  auto big = decode_admission_review(text, &fields);
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(*big->object, *cut->object);
}

json encoded(const std::string& uid, const AdmissionResponse& r) {
  auto text = encode_admission_review(uid, r);
  EXPECT_TRUE(text.has_value()) << (text ? "" : text.error().str());
  return text ? json::parse(*text) : json();
}

TEST(AdmissionReviewEncode, AllowEchoesUidWithoutPatch) {
  json out = encoded("uid-42", AdmissionResponse::allow());
  EXPECT_EQ(out, (json{{"apiVersion", "admission.k8s.io/v1"},
                       {"kind", "AdmissionReview"},
                       {"response", {{"uid", "uid-42"}, {"allowed", true}}}}));
}

// VAL-1: a denial carries status code, reason and message.
TEST(AdmissionReviewEncode, DenyCarriesStatus) {
  auto r = AdmissionResponse::deny(422, "Invalid", "spec.weight: must be >= 0");
  json out = encoded("u", r)["response"];
  EXPECT_EQ(out["allowed"], false);
  EXPECT_EQ(out["status"],
            (json{{"code", 422}, {"reason", "Invalid"}, {"message", "spec.weight: must be >= 0"}}));
  EXPECT_FALSE(out.contains("patch"));
  // A denial without status gets 403 Forbidden; a patch on a denial is never sent.
  AdmissionResponse bare;
  bare.allowed = false;
  bare.set_patch(json::array({{{"op", "remove"}, {"path", "/a"}}}));
  out = encoded("u", bare)["response"];
  EXPECT_EQ(out["status"]["code"], 403);
  EXPECT_FALSE(out.contains("patch"));
  EXPECT_FALSE(out.contains("patchType"));
}

// ADM-2 / DESIGN §4: the patch is an RFC 6902 JSONPatch, base64-encoded, with patchType JSONPatch.
TEST(AdmissionReviewEncode, PatchIsBase64JsonPatchThatApplies) {
  json before = {{"metadata", {{"name", "p"}, {"labels", {{"a", "1"}}}}},
                 {"spec", {{"containers", json::array()}}}};
  json after = before;
  after["metadata"]["labels"]["kubex"] = "yes";
  after["metadata"]["annotations"] = {{"gpu-fraction", "0.5"}};
  AdmissionResponse r;
  r.set_patch(json::diff(before, after));
  r.warnings = {"first", "second"};
  ASSERT_TRUE(r.has_patch());
  json out = encoded("u-1", r)["response"];
  EXPECT_EQ(out["uid"], "u-1");
  EXPECT_EQ(out["allowed"], true);
  EXPECT_EQ(out["patchType"], "JSONPatch");
  auto raw = common::base64_decode(out["patch"].get<std::string>());
  ASSERT_TRUE(raw.has_value());
  json ops = json::parse(*raw);
  ASSERT_TRUE(ops.is_array());
  EXPECT_EQ(before.patch(ops), after);
  EXPECT_EQ(out["warnings"], (json{"first", "second"}));
}

TEST(AdmissionReviewEncode, EmptyPatchMeansNoPatch) {
  AdmissionResponse r;
  r.set_patch(json::array());
  EXPECT_FALSE(r.has_patch());
  r.patch = " [ ] ";
  EXPECT_FALSE(r.has_patch());
  json out = encoded("u", r)["response"];
  EXPECT_FALSE(out.contains("patch"));
  EXPECT_FALSE(out.contains("patchType"));
  json same = {{"a", 1}};
  r.set_patch(json::diff(same, same));
  EXPECT_FALSE(r.has_patch());
}

TEST(AdmissionReviewEncode, MalformedPatchIsAnErrorNotAThrow) {
  AdmissionResponse r;
  r.patch = "{\"op\":\"add\"}";
  EXPECT_FALSE(encode_admission_review("u", r).has_value());
  r.patch = "[not json";
  EXPECT_FALSE(encode_admission_review("u", r).has_value());
  r.patch = "[{\"op\":\"add\"}]";
  EXPECT_FALSE(encode_admission_review("u", r).has_value());
  r.patch = "[1]";
  EXPECT_FALSE(encode_admission_review("u", r).has_value());
}

TEST(AdmissionReviewEncode, InvalidUtf8IsReplacedNotThrown) {
  AdmissionResponse r = AdmissionResponse::deny(422, "Invalid", std::string("bad \xff\xfe byte"));
  r.warnings = {std::string("\xc3")};
  auto text = encode_admission_review("u", r);
  ASSERT_TRUE(text.has_value());
  EXPECT_TRUE(json::accept(*text));
}

// Round trip: the uid of every decoded request comes back in the response, whatever its characters.
TEST(AdmissionReviewRoundTrip, UidEchoed) {
  for (std::string uid :
       {"a", "705ab4f5-6393-11e8-b7cc-42010a800002", "with \"quotes\" and \\ and \n", "ünï"}) {
    json q = pod_request();
    q["uid"] = uid;
    auto req = decode_admission_review(review(q).dump());
    ASSERT_TRUE(req.has_value());
    json out = encoded(req->uid, AdmissionResponse::allow());
    EXPECT_EQ(out["response"]["uid"], uid);
  }
}

// Garbage of every kind: decoding never throws, and either succeeds or names a VAL-9 reason.
TEST(AdmissionReviewDecode, GarbageNeverThrows) {
  std::mt19937 rng(12345);
  std::string base = review(pod_request()).dump();
  for (int i = 0; i < 3000; ++i) {
    std::string body = base;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !body.empty(); ++e) {
      std::size_t pos = rng() % body.size();
      switch (rng() % 3) {
        case 0:
          body[pos] = static_cast<char>(rng() % 256);
          break;
        case 1:
          body.erase(pos, 1 + rng() % 16);
          break;
        default:
          body.insert(pos, 1, "{}[]\",:\\0e-"[rng() % 12]);
      }
    }
    std::expected<AdmissionRequest, DecodeError> r = std::unexpected(DecodeError{});
    EXPECT_NO_THROW(r = decode_admission_review(body));
    if (!r) {
      EXPECT_EQ(r.error().message().rfind("invalid AdmissionReview: ", 0), 0u);
    } else {
      EXPECT_FALSE(r->uid.empty());
      EXPECT_NO_THROW((void)encode_admission_review(r->uid, AdmissionResponse::allow()));
    }
  }
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary.push_back(static_cast<char>(rng()));
  EXPECT_FALSE(decode_admission_review(binary).has_value());
}

}  // namespace
}  // namespace kubex::webhook

namespace kubex::webhook {
namespace {

// The answer is written directly: the same bytes as dumping the AdmissionReview object it stands for.
TEST(AdmissionReviewEncode, SameBytesAsTheDumpedObject) {
  std::vector<std::pair<std::string, AdmissionResponse>> cases;
  cases.emplace_back("u-1", AdmissionResponse::allow());
  cases.emplace_back("with \"quotes\" \\ \n ünï",
                     AdmissionResponse::deny(422, "Invalid", "spec.x: bad \xff"));
  AdmissionResponse patched;
  patched.set_patch(json::array({{{"op", "add"}, {"path", "/metadata/labels/a"}, {"value", "b"}}}));
  patched.warnings = {"one", "two \"2\""};
  cases.emplace_back("u-3", patched);
  AdmissionResponse unchecked;
  unchecked.patch = R"([ {"op":"remove", "path":"/a"} ])";
  cases.emplace_back("u-4", unchecked);
  AdmissionResponse bare;
  bare.allowed = false;
  cases.emplace_back("u-5", bare);
  AdmissionResponse partial = AdmissionResponse::deny(0, "", "only a message");
  cases.emplace_back("u-6", partial);
  for (const auto& [uid, r] : cases) {
    json response = {{"uid", uid}, {"allowed", r.allowed}};
    if (r.status) {
      json st = json::object();
      if (r.status->code != 0) st["code"] = r.status->code;
      if (!r.status->reason.empty()) st["reason"] = r.status->reason;
      if (!r.status->message.empty()) st["message"] = r.status->message;
      response["status"] = st;
    } else if (!r.allowed) {
      response["status"] = {{"code", 403}, {"reason", "Forbidden"}};
    }
    if (r.allowed && r.has_patch()) {
      response["patchType"] = "JSONPatch";
      response["patch"] = common::base64_encode(json::parse(r.patch).dump());
    }
    if (!r.warnings.empty()) response["warnings"] = r.warnings;
    json review = {
        {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"response", response}};
    auto text = encode_admission_review(uid, r);
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(*text, review.dump(-1, ' ', false, json::error_handler_t::replace)) << uid;
  }
}

}  // namespace
}  // namespace kubex::webhook
