// Server-side apply on the REST surface: PATCH with Content-Type application/apply-patch+yaml (body YAML or
// JSON), ?fieldManager (required), ?force; an apply to a missing object creates it (server_side_apply.h).
#include <nlohmann/json.hpp>

#include "common/time_format.h"
#include "common/yaml.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/server_side_apply.h"

namespace kubex::sim {

using nlohmann::json;

namespace {

ApiError patch_options_invalid(const std::string& field, const std::string& reason, const std::string& detail) {
  ApiError e{422, "Invalid", "PatchOptions.meta.k8s.io \"\" is invalid: " + field + ": " + detail, "", "meta.k8s.io",
             "PatchOptions", {{reason, field + ": " + detail, field}}, 0};
  return e;
}

}  // namespace

ApiResponse ApiServer::do_apply(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  std::string manager = req.param("fieldManager").value_or("");
  if (manager.empty()) {
    return ApiResponse::error(
        patch_options_invalid("fieldManager", "FieldValueRequired", "Required value: is required for apply patch"));
  }
  if (manager.size() > 128) {
    return ApiResponse::error(patch_options_invalid("fieldManager", "FieldValueTooLong",
                                                    "Too long: may not be more than 128 bytes"));
  }
  bool force = parse_bool_param(req.param("force").value_or("false"));
  auto decoded = common::yaml_to_json(req.body);  // YAML 1.2 reads JSON too
  if (!decoded) return ApiResponse::error(bad_request("error decoding YAML: " + decoded.error().str()));
  json config = std::move(*decoded);
  if (!config.is_object()) {
    return ApiResponse::error(bad_request("error decoding YAML: the applied configuration is not an object"));
  }
  if (config.value("apiVersion", "").empty() || config.value("kind", "").empty()) {
    return ApiResponse::error(bad_request("invalid object type: " + json(config.value("apiVersion", "")).dump() +
                                          ", " + json(config.value("kind", "")).dump()));
  }
  if (!config.contains("metadata") || !config["metadata"].is_object()) config["metadata"] = json::object();
  json& meta = config["metadata"];
  // A name that is not the URL's fails in the update after the conflict check (write_update), as in
  // kube-apiserver; a create by apply checks it here.
  std::string body_name = meta.value("name", "");
  if (body_name.empty()) meta["name"] = ri.name;
  if (meta.contains("managedFields")) {
    return ApiResponse::error(invalid(r, ri.name, {{"FieldValueForbidden",
                                                    "metadata.managedFields: Forbidden: cannot be set on an apply",
                                                    "metadata.managedFields"}}));
  }

  std::vector<std::string> warnings;
  std::string ns = r.namespaced ? ri.ns : "";
  WriteOptions opts{req.param("dryRun").has_value(), req.param("fieldValidation").value_or("Warn"), ri.subresource,
                    req.user, true, manager, nullptr};
  if (opts.field_validation.empty()) opts.field_validation = "Warn";
  for (int attempt = 0; attempt < 5; ++attempt) {
    ssa::Request sreq{&r, manager, ri.subresource, common::format_rfc3339(now())};
    auto so = store_.get(storage_of(r), object_key(ns, ri.name));
    if (!so) {
      if (!ri.subresource.empty()) return ApiResponse::error(not_found(r, ri.name));
      if (body_name != ri.name && !body_name.empty()) {
        return ApiResponse::error(bad_request("the name of the object (" + body_name +
                                              ") does not match the name on the URL (" + ri.name + ")"));
      }
      auto created = ssa::apply(sreq, nullptr, config, force);
      if (!created) return ApiResponse::error(created.error());
      json managed = (*created)["metadata"]["managedFields"];
      (*created)["metadata"].erase("managedFields");
      ApiResponse res = create_object(req, ri, r, std::move(*created), &managed);
      if (res.status == 409 && attempt + 1 < 5 && res.body.find("AlreadyExists") != std::string::npos) continue;
      return res;
    }
    json current = json::parse(*so->text);
    auto next = ssa::apply(sreq, &current, config, force);
    if (!next) return ApiResponse::error(next.error());
    opts.applied_managed_fields = std::make_shared<const json>((*next)["metadata"]["managedFields"]);
    auto out = write_update(r, ns, ri.name, std::move(*next), current, so->rv, opts, warnings);
    if (out) {
      ApiResponse res = ApiResponse::json(200, *out);
      res.warnings = std::move(warnings);
      return res;
    }
    if (out.error().code == 409 && out.error().reason == "Conflict") continue;
    ApiResponse res = ApiResponse::error(out.error());
    res.warnings = std::move(warnings);
    return res;
  }
  return ApiResponse::error(conflict(r, ri.name, "too many concurrent writes"));
}

}  // namespace kubex::sim
