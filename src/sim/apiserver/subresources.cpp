// Subresources: pods/eviction (honouring PodDisruptionBudgets), pods/binding, */scale.
#include <nlohmann/json.hpp>

#include "common/label_selector.h"
#include "common/time_format.h"
#include "sim/apiserver/admission.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/pdb.h"
#include "sim/apiserver/managed_fields.h"
#include "sim/apiserver/patch.h"

namespace kubex::sim {

using nlohmann::json;

ApiResponse ApiServer::do_eviction(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  json body = json::object();
  if (!req.body.empty()) {  // JSON, YAML or protobuf (client-go's typed clients, e.g. kubectl drain)
    auto decoded = decode_body(req);
    if (!decoded || !decoded->is_object()) return ApiResponse::error(bad_request("invalid Eviction body"));
    body = std::move(*decoded);
  }
  std::string body_name = body.contains("metadata") ? body["metadata"].value("name", "") : "";
  if (!body_name.empty() && body_name != ri.name) {
    return ApiResponse::error(bad_request("name in URL does not match name in Eviction object"));
  }
  auto pod = read(r, ri.ns, ri.name);
  if (!pod) return ApiResponse::error(not_found(r, ri.name));
  bool dry_run = req.param("dryRun").has_value() ||
                 (body.contains("deleteOptions") && body["deleteOptions"].contains("dryRun") &&
                  body["deleteOptions"]["dryRun"].is_array() && !body["deleteOptions"]["dryRun"].empty());
  std::vector<std::string> warnings;
  {
    Admission::Attributes attrs{&r, "eviction", "CREATE", ri.ns, ri.name, req.user, dry_run};
    if (body.value("apiVersion", "").empty()) body["apiVersion"] = "policy/v1";
    if (body.value("kind", "").empty()) body["kind"] = "Eviction";
    if (auto e = admission_->mutate(attrs, body, nullptr, warnings); !e) return ApiResponse::error(e.error());
    if (auto e = admission_->validate(attrs, body, nullptr, warnings); !e) return ApiResponse::error(e.error());
  }
  auto decision = pdb::check_eviction(*this, *pod, dry_run);
  if (!decision) return ApiResponse::error(decision.error());
  DeleteOptions opts;
  opts.user = req.user;
  opts.dry_run = dry_run;
  if (body.contains("deleteOptions") && body["deleteOptions"].is_object()) {
    const json& d = body["deleteOptions"];
    if (d.contains("gracePeriodSeconds") && d["gracePeriodSeconds"].is_number_integer()) {
      opts.grace_period_seconds = d["gracePeriodSeconds"].get<std::int64_t>();
    }
    if (d.contains("preconditions") && d["preconditions"].is_object()) {
      opts.precondition_uid = d["preconditions"].value("uid", "");
      opts.precondition_rv = d["preconditions"].value("resourceVersion", "");
    }
  }
  bool removed = false;
  auto out = delete_object(r, ri.ns, ri.name, opts, removed);
  if (!out) {
    if (out.error().code == 404) return ApiResponse::error(out.error());
    return ApiResponse::error(out.error());
  }
  json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"},
                 {"code", 201}};
  ApiResponse res = ApiResponse::json(201, status);
  res.warnings = std::move(warnings);
  return res;
}

ApiResponse ApiServer::do_binding(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  json body = json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return ApiResponse::error(bad_request("invalid Binding body"));
  std::string node = body.contains("target") && body["target"].is_object() ? body["target"].value("name", "") : "";
  if (node.empty()) {
    return ApiResponse::error(invalid(r, ri.name, {{"FieldValueRequired", "target.name: Required value", "target.name"}}));
  }
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto so = store_.get(storage_of(r), object_key(ri.ns, ri.name));
    if (!so) return ApiResponse::error(not_found(r, ri.name));
    json pod = json::parse(*so->text);
    if (so->index->deleting) {
      return ApiResponse::error(conflict(r, ri.name, "pod " + ri.name + " is being deleted, cannot be assigned to a host"));
    }
    std::string current = pod["spec"].value("nodeName", "");
    if (!current.empty()) {
      return ApiResponse::error(conflict(r, ri.name, "pod " + ri.name + " is already assigned to node \"" + current + "\""));
    }
    pod["spec"]["nodeName"] = node;
    if (body.contains("metadata") && body["metadata"].contains("annotations") && body["metadata"]["annotations"].is_object()) {
      for (auto& [k, v] : body["metadata"]["annotations"].items()) pod["metadata"]["annotations"][k] = v;
    }
    auto& conds = pod["status"]["conditions"];
    if (!conds.is_array()) conds = json::array();
    bool found = false;
    for (auto& c : conds) {
      if (c.value("type", "") == "PodScheduled") {
        c = {{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr},
             {"lastTransitionTime", common::format_rfc3339(now())}};
        found = true;
      }
    }
    if (!found) {
      conds.push_back({{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr},
                       {"lastTransitionTime", common::format_rfc3339(now())}});
    }
    if (req.param("dryRun")) break;
    auto res = store_.update(storage_of(r), object_key(ri.ns, ri.name), pod, so->rv, r.selectable_fields);
    if (res.status == Store::WriteStatus::kConflict) continue;
    if (res.status == Store::WriteStatus::kNotFound) return ApiResponse::error(not_found(r, ri.name));
    break;
  }
  json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"},
                 {"code", 201}};
  return ApiResponse::json(201, status);
}

namespace {

std::string selector_string(const json& obj) {
  const json* sel = nullptr;
  if (obj.contains("spec") && obj["spec"].contains("selector")) sel = &obj["spec"]["selector"];
  if (!sel) return "";
  auto parsed = common::LabelSelector::from_json(*sel, "spec.selector");
  if (!parsed) return "";
  return parsed->str();
}

json to_scale(const json& obj) {
  const json& m = obj["metadata"];
  json scale = {{"kind", "Scale"},
                {"apiVersion", "autoscaling/v1"},
                {"metadata",
                 {{"name", m.value("name", "")},
                  {"namespace", m.value("namespace", "")},
                  {"uid", m.value("uid", "")},
                  {"resourceVersion", m.value("resourceVersion", "")},
                  {"creationTimestamp", m.value("creationTimestamp", "")}}},
                {"spec", {{"replicas", obj["spec"].value("replicas", 1)}}},
                {"status",
                 {{"replicas", obj.contains("status") && obj["status"].is_object() ? obj["status"].value("replicas", 0) : 0},
                  {"selector", selector_string(obj)}}}};
  return scale;
}

}  // namespace

ApiResponse ApiServer::do_scale(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  if (ri.verb != "get" && ri.verb != "update" && ri.verb != "patch") {
    return ApiResponse::error(method_not_supported(r, ri.verb));
  }
  std::vector<std::string> warnings;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto so = store_.get(storage_of(r), object_key(ri.ns, ri.name));
    if (!so) return ApiResponse::error(not_found(r, ri.name));
    json obj = json::parse(*so->text);
    json scale = to_scale(obj);
    if (ri.verb == "get") return ApiResponse::json(200, scale);
    json wanted;
    if (ri.verb == "update") {
      wanted = json::parse(req.body, nullptr, false);
      if (wanted.is_discarded()) return ApiResponse::error(bad_request("invalid Scale body"));
      std::string rv = wanted.contains("metadata") ? wanted["metadata"].value("resourceVersion", "") : "";
      if (!rv.empty() && rv != std::to_string(so->rv)) {
        return ApiResponse::error(conflict(r, ri.name, "the object has been modified; please apply your changes to the latest version and try again"));
      }
    } else {
      auto type = patch_type_from_content_type(req.content_type);
      if (!type) return ApiResponse::error(unsupported_media_type("unsupported patch type"));
      auto patched = apply_patch(scale, req.body, *type, "Scale");
      if (!patched) return ApiResponse::error(bad_request(patched.error().message));
      wanted = std::move(*patched);
    }
    if (!wanted.contains("spec") || !wanted["spec"].contains("replicas") || !wanted["spec"]["replicas"].is_number_integer() ||
        wanted["spec"]["replicas"].get<std::int64_t>() < 0) {
      return ApiResponse::error(invalid(r, ri.name, {{"FieldValueInvalid", "spec.replicas: Invalid value: must be greater than or equal to 0", "spec.replicas"}}));
    }
    obj["spec"]["replicas"] = wanted["spec"]["replicas"];
    WriteOptions opts{req.param("dryRun").has_value(), "Ignore", "", req.user, true,
                      req.param("fieldManager").value_or(ssa::manager_from_user_agent(req.user_agent)), nullptr};
    auto out = write_update(r, ri.ns, ri.name, obj, json::parse(*so->text), so->rv, opts, warnings);
    if (!out) {
      if (out.error().code == 409) continue;
      return ApiResponse::error(out.error());
    }
    ApiResponse res = ApiResponse::json(200, to_scale(*out));
    res.warnings = warnings;
    return res;
  }
  return ApiResponse::error(conflict(r, ri.name, "too many concurrent writes"));
}

}  // namespace kubex::sim
