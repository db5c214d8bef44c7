// Write verbs of the simulated API server: create, update (PUT), patch, delete, deletecollection.
#include <nlohmann/json.hpp>
#include <set>

#include "common/hash.h"
#include "common/time_format.h"
#include "sim/apiserver/admission.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/builtin.h"
#include "sim/apiserver/custom.h"
#include "sim/apiserver/gc.h"
#include "sim/apiserver/patch.h"
#include "sim/apiserver/server_side_apply.h"

namespace kubex::sim {

using nlohmann::json;

namespace {

json& meta_of(json& obj) {
  auto& m = obj["metadata"];
  if (!m.is_object()) m = json::object();
  return m;
}

std::string str_at(const json& obj, const char* a, const char* b) {
  auto it = obj.find(a);
  if (it == obj.end() || !it->is_object()) return "";
  auto jt = it->find(b);
  if (jt == it->end() || !jt->is_string()) return "";
  return jt->get<std::string>();
}

std::uint64_t parse_rv(const std::string& s) {
  if (s.empty()) return 0;
  try {
    return std::stoull(s);
  } catch (...) {
    return 0;
  }
}

// Everything outside metadata and status: a change here bumps metadata.generation.
bool spec_changed(const json& a, const json& b) {
  json x = a, y = b;
  for (auto* o : {&x, &y}) {
    if (!o->is_object()) continue;
    o->erase("metadata");
    o->erase("status");
  }
  return x != y;
}

// Equality ignoring resourceVersion and the managers' times (no-op writes are not persisted).
bool same_object(const json& a, const json& b) {
  if (!ssa::same_managed_fields(a, b)) return false;
  json x = a, y = b;
  for (auto* o : {&x, &y}) {
    if (o->contains("metadata") && (*o)["metadata"].is_object()) {
      (*o)["metadata"].erase("resourceVersion");
      (*o)["metadata"].erase("managedFields");
    }
  }
  return x == y;
}

// ?fieldManager, else what kube-apiserver derives from the User-Agent.
std::string field_manager_of(const ApiRequest& req) {
  auto fm = req.param("fieldManager").value_or("");
  return fm.empty() ? ssa::manager_from_user_agent(req.user_agent) : fm;
}

std::string field_validation(const ApiRequest& req) {
  auto fv = req.param("fieldValidation").value_or("");
  return fv.empty() ? "Warn" : fv;
}

// Checks apiVersion/kind in a request body against the endpoint.
std::optional<ApiError> check_type_meta(json& obj, const ResourceInfo& r) {
  std::string api_version = obj.value("apiVersion", "");
  std::string kind = obj.value("kind", "");
  if (!r.is_custom) {
    // Typed endpoints default a missing apiVersion/kind from the URL (the Python client omits them).
    if (kind.empty()) obj["kind"] = kind = r.kind;
    if (api_version.empty()) obj["apiVersion"] = api_version = r.api_version();
  }
  if (kind.empty()) {
    return bad_request("Object 'Kind' is missing in '" + obj.dump().substr(0, 200) + "'");
  }
  if (api_version.empty()) {
    return bad_request("Object 'apiVersion' is missing in '" + obj.dump().substr(0, 200) + "'");
  }
  if (kind != r.kind || api_version != r.api_version()) {
    return bad_request("the API version in the data (" + api_version + ") does not match the expected API version (" +
                       r.api_version() + ")");
  }
  return std::nullopt;
}

// Unknown-field handling shared by create and update (custom resources carry a schema).
std::optional<ApiError> handle_unknown_fields(const ResourceInfo& r, json& obj, const std::string& fv,
                                              std::vector<std::string>& warnings) {
  if (!r.is_custom) return std::nullopt;
  auto unknown = custom::prune(r, obj);
  if (unknown.empty() || fv == "Ignore") return std::nullopt;
  if (fv == "Strict") {
    std::string msg = "strict decoding error: ";
    for (std::size_t i = 0; i < unknown.size(); ++i) {
      if (i) msg += ", ";
      msg += "unknown field \"" + unknown[i] + "\"";
    }
    return bad_request(msg);
  }
  for (const auto& u : unknown) warnings.push_back("unknown field \"" + u + "\"");
  return std::nullopt;
}

void apply_defaults(const ResourceInfo& r, json& obj) {
  if (r.is_custom) {
    custom::apply_defaults(r, obj);
  } else {
    builtin::apply_defaults(r, obj);
  }
}

// ValidateObjectMetaUpdate's ValidateNoNewFinalizers: an object being deleted takes no new finalizers.
void validate_no_new_finalizers(const json& obj, const json& old, std::vector<StatusCause>& out) {
  const json& om = old.contains("metadata") ? old["metadata"] : json::object();
  if (!om.contains("deletionTimestamp") || om["deletionTimestamp"].is_null()) return;
  std::set<std::string> before, extra;
  for (const auto& f : om.value("finalizers", json::array())) {
    if (f.is_string()) before.insert(f.get<std::string>());
  }
  const json& nm = obj.contains("metadata") ? obj["metadata"] : json::object();
  for (const auto& f : nm.value("finalizers", json::array())) {
    if (f.is_string() && !before.count(f.get<std::string>())) extra.insert(f.get<std::string>());
  }
  if (extra.empty()) return;
  std::string list = "[]string{";  // Go's %#v of the sorted set
  bool first = true;
  for (const auto& f : extra) {
    list += (first ? "\"" : ", \"") + f + "\"";
    first = false;
  }
  list += "}";
  std::string detail = "no new finalizers can be added if the object is being deleted, found new finalizers " + list;
  out.push_back({"FieldValueForbidden", "metadata.finalizers: Forbidden: " + detail, "metadata.finalizers"});
}

std::vector<StatusCause> validate_object(const ResourceInfo& r, const json& obj, const json* old) {
  std::vector<StatusCause> out = r.is_custom ? custom::validate(r, obj, old) : builtin::validate(r, obj, old);
  if (old) validate_no_new_finalizers(obj, *old, out);
  return out;
}

ApiResponse with_warnings(ApiResponse res, std::vector<std::string> warnings) {
  res.warnings = std::move(warnings);
  return res;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------
// create

ApiResponse ApiServer::do_create(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  auto decoded = decode_body(req);
  if (!decoded) return ApiResponse::error(decoded.error());
  return create_object(req, ri, r, std::move(*decoded), nullptr);
}

ApiResponse ApiServer::create_object(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r, json obj,
                                     const json* applied_managed_fields) {
  if (!obj.is_object()) return ApiResponse::error(bad_request("the request body must be a JSON object"));
  if (auto e = check_type_meta(obj, r)) return ApiResponse::error(*e);
  std::vector<std::string> warnings;
  bool dry_run = req.param("dryRun").has_value();
  json& meta = meta_of(obj);

  std::string ns;
  if (r.namespaced) {
    std::string body_ns = meta.value("namespace", "");
    if (!body_ns.empty() && body_ns != ri.ns) {
      return ApiResponse::error(bad_request("the namespace of the provided object does not match the namespace sent on "
                                            "the request"));
    }
    ns = ri.ns;
    meta["namespace"] = ns;
    bool terminating = false;
    if (!namespace_exists(ns, terminating)) {
      ApiError e = not_found(*registry_.find("", "v1", "namespaces"), ns);
      return ApiResponse::error(e);
    }
    if (terminating) {
      return ApiResponse::error(forbidden(r.qualified_plural() + " \"" + meta.value("name", "") +
                                          "\" is forbidden: unable to create new content in namespace " + ns +
                                          " because it is being terminated"));
    }
  } else {
    meta.erase("namespace");
  }
  if (meta.contains("resourceVersion") && !meta["resourceVersion"].is_null() &&
      !meta["resourceVersion"].get<std::string>().empty()) {
    return ApiResponse::error(internal_error("resourceVersion should not be set on objects to be created"));
  }
  if (auto e = handle_unknown_fields(r, obj, field_validation(req), warnings)) return ApiResponse::error(*e);
  apply_defaults(r, obj);
  std::optional<json> requested_managed;
  if (meta_of(obj).contains("managedFields")) requested_managed = meta_of(obj)["managedFields"];

  // Server-owned metadata (rest.BeforeCreate).
  meta.erase("uid");
  meta.erase("creationTimestamp");
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
  meta.erase("managedFields");
  meta.erase("selfLink");
  if (r.is_custom) {
    if (r.has_status) obj.erase("status");
  } else {
    builtin::prepare_for_create(r, obj);
  }
  ssa::Request mreq{&r, field_manager_of(req), "", common::format_rfc3339(now())};
  meta_of(obj)["managedFields"] = applied_managed_fields
                                      ? *applied_managed_fields
                                      : ssa::updated_managed_fields(mreq, nullptr, obj,
                                                                    requested_managed ? &*requested_managed : nullptr);
  if (meta_of(obj)["managedFields"].empty()) meta_of(obj).erase("managedFields");

  Admission::Attributes attrs{&r, "", "CREATE", ns, meta.value("name", ""), req.user, dry_run};
  if (auto e = admission_->mutate(attrs, obj, nullptr, warnings); !e) return with_warnings(ApiResponse::error(e.error()), warnings);
  json& m2 = meta_of(obj);
  std::string name = m2.value("name", "");
  std::string generate = m2.value("generateName", "");
  if (name.empty() && generate.empty()) {
    return with_warnings(ApiResponse::error(invalid(r, "", {{"FieldValueRequired",
                                                             "metadata.name: Required value: name or generateName is "
                                                             "required",
                                                             "metadata.name"}})),
                         warnings);
  }
  bool generated = name.empty();
  if (generated) name = generate + common::random_alnum(5);
  m2["name"] = name;
  if (r.namespaced) m2["namespace"] = ns;
  auto name_causes = builtin::validate_name(r, name);
  if (!name_causes.empty()) return with_warnings(ApiResponse::error(invalid(r, name, name_causes)), warnings);
  m2["uid"] = common::random_uuid();
  m2["creationTimestamp"] = common::format_rfc3339(now());
  if (!obj.contains("status") && r.kind == "CustomResourceDefinition") obj["status"] = json::object();
  if (r.has_status || !r.is_custom) m2["generation"] = 1;
  if (r.is_custom) m2["generation"] = 1;
  if (r.kind == "CustomResourceDefinition" && r.group == "apiextensions.k8s.io") {
    custom::set_crd_status(obj, common::format_rfc3339(now()));
  }
  auto causes = validate_object(r, obj, nullptr);
  if (!causes.empty()) return with_warnings(ApiResponse::error(invalid(r, name, causes)), warnings);
  attrs.name = name;
  if (auto e = admission_->validate(attrs, obj, nullptr, warnings); !e) {
    return with_warnings(ApiResponse::error(e.error()), warnings);
  }
  if (dry_run) return with_warnings(ApiResponse::json(201, obj), warnings);

  for (int attempt = 0; attempt < 8; ++attempt) {
    auto res = store_.create(storage_of(r), object_key(ns, name), obj, r.selectable_fields);
    if (res.status == Store::WriteStatus::kOk) {
      if (r.kind == "CustomResourceDefinition" && r.group == "apiextensions.k8s.io") {
        for (auto& cr : custom::crd_resources(obj)) registry_.put(cr);
      }
      if (r.kind == "Namespace" && r.group.empty()) gc_->namespace_created(name);
      ApiResponse out;
      out.status = 201;
      out.body = *res.text;
      out.warnings = std::move(warnings);
      return out;
    }
    if (!generated) return with_warnings(ApiResponse::error(already_exists(r, name)), warnings);
    name = generate + common::random_alnum(5);
    obj["metadata"]["name"] = name;
  }
  return with_warnings(ApiResponse::error(already_exists(r, name)), warnings);
}

// ---------------------------------------------------------------------------------------------------------
// update

std::expected<json, ApiError> ApiServer::write_update(const ResourceInfo& r, const std::string& ns,
                                                      const std::string& name, json next, const json& current,
                                                      std::uint64_t expected_rv, const WriteOptions& opts,
                                                      std::vector<std::string>& warnings) {
  if (!next.is_object()) return std::unexpected(bad_request("the request body must be a JSON object"));
  if (auto e = check_type_meta(next, r)) return std::unexpected(*e);
  json& meta = meta_of(next);
  std::string body_name = meta.value("name", "");
  if (!body_name.empty() && body_name != name) {
    return std::unexpected(bad_request("the name of the object (" + body_name +
                                       ") does not match the name on the URL (" + name + ")"));
  }
  if (r.namespaced) {
    std::string body_ns = meta.value("namespace", "");
    if (!body_ns.empty() && body_ns != ns) {
      return std::unexpected(bad_request("the namespace of the provided object does not match the namespace sent on "
                                         "the request"));
    }
  }
  if (opts.subresource == "status") {
    json base = current;
    if (next.contains("status")) {
      base["status"] = next["status"];
    } else {
      base.erase("status");
    }
    // Labels and annotations may not change through /status; the precondition still applies.
    next = std::move(base);
  } else if (!r.is_custom) {
    builtin::prepare_for_update(r, next, current);
  } else if (r.has_status) {
    if (current.contains("status")) {
      next["status"] = current["status"];
    } else {
      next.erase("status");
    }
  }
  json& m = meta_of(next);
  const json& cm = current.at("metadata");
  m["name"] = name;
  if (r.namespaced) m["namespace"] = ns;
  for (const char* k : {"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"}) {
    if (cm.contains(k)) {
      m[k] = cm[k];
    } else {
      m.erase(k);
    }
  }
  std::optional<json> requested_managed;
  if (m.contains("managedFields") && opts.subresource.empty()) requested_managed = m["managedFields"];
  m.erase("managedFields");
  if (opts.subresource.empty()) {
    if (auto e = handle_unknown_fields(r, next, opts.field_validation, warnings)) return std::unexpected(*e);
    apply_defaults(r, next);
  }
  {
    json managed;
    if (opts.applied_managed_fields) {
      managed = *opts.applied_managed_fields;
    } else {
      ssa::Request mreq{&r, opts.field_manager.empty() ? "kubex-sim" : opts.field_manager, opts.subresource,
                        common::format_rfc3339(now())};
      managed = ssa::updated_managed_fields(mreq, &current, next, requested_managed ? &*requested_managed : nullptr);
    }
    if (managed.empty()) {
      meta_of(next).erase("managedFields");
    } else {
      meta_of(next)["managedFields"] = std::move(managed);
    }
  }
  if (opts.run_admission) {
    Admission::Attributes attrs{&r, opts.subresource, "UPDATE", ns, name, opts.user, opts.dry_run};
    if (auto e = admission_->mutate(attrs, next, &current, warnings); !e) return std::unexpected(e.error());
  }
  if (spec_changed(next, current)) {
    std::int64_t gen = cm.value("generation", 0);
    meta_of(next)["generation"] = gen + 1;
  }
  if (r.kind == "CustomResourceDefinition" && r.group == "apiextensions.k8s.io" && opts.subresource.empty()) {
    custom::set_crd_status(next, common::format_rfc3339(now()));
  }
  auto causes = validate_object(r, next, &current);
  if (!causes.empty()) return std::unexpected(invalid(r, name, causes));
  if (opts.run_admission) {
    Admission::Attributes attrs{&r, opts.subresource, "UPDATE", ns, name, opts.user, opts.dry_run};
    if (auto e = admission_->validate(attrs, next, &current, warnings); !e) return std::unexpected(e.error());
  }
  // Finalizers drained on an object being deleted: the object goes away now.
  const json& nm = next["metadata"];
  bool deleting = nm.contains("deletionTimestamp") && !nm["deletionTimestamp"].is_null();
  bool no_finalizers = !nm.contains("finalizers") || !nm["finalizers"].is_array() || nm["finalizers"].empty();
  std::string key = object_key(r.namespaced ? ns : "", name);
  if (deleting && no_finalizers) {
    if (opts.dry_run) return next;
    json final_state = next;
    auto res = store_.remove(storage_of(r), key, expected_rv, &final_state);
    if (res.status == Store::WriteStatus::kNotFound) return std::unexpected(not_found(r, name));
    if (res.status == Store::WriteStatus::kConflict) {
      return std::unexpected(conflict(r, name, "the object has been modified; please apply your changes to the "
                                               "latest version and try again"));
    }
    after_remove(r, final_state);
    return final_state;
  }
  if (same_object(next, current)) return current;
  if (opts.dry_run) return next;
  auto res = store_.update(storage_of(r), key, next, expected_rv, r.selectable_fields);
  if (res.status == Store::WriteStatus::kNotFound) return std::unexpected(not_found(r, name));
  if (res.status == Store::WriteStatus::kConflict) {
    return std::unexpected(conflict(r, name, "the object has been modified; please apply your changes to the latest "
                                             "version and try again"));
  }
  if (r.kind == "CustomResourceDefinition" && r.group == "apiextensions.k8s.io") {
    for (auto& cr : custom::crd_resources(next)) registry_.put(cr);
  }
  if (deleting) gc_->object_deleting(r, next);
  return json::parse(*res.text);
}

ApiResponse ApiServer::do_update(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  auto decoded = decode_body(req);
  if (!decoded) return ApiResponse::error(decoded.error());
  std::vector<std::string> warnings;
  WriteOptions opts{req.param("dryRun").has_value(), field_validation(req), ri.subresource, req.user, true,
                    field_manager_of(req), nullptr};
  std::string ns = r.namespaced ? ri.ns : "";
  std::string body_rv = decoded->is_object() ? str_at(*decoded, "metadata", "resourceVersion") : "";
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto so = store_.get(storage_of(r), object_key(ns, ri.name));
    if (!so) return ApiResponse::error(not_found(r, ri.name));
    json current = json::parse(*so->text);
    std::uint64_t expected = so->rv;
    if (!body_rv.empty() && parse_rv(body_rv) != so->rv) {
      return with_warnings(ApiResponse::error(conflict(r, ri.name, "the object has been modified; please apply your "
                                                                   "changes to the latest version and try again")),
                           warnings);
    }
    auto out = write_update(r, ns, ri.name, *decoded, current, expected, opts, warnings);
    if (out) return with_warnings(ApiResponse::json(200, *out), warnings);
    if (out.error().code == 409 && body_rv.empty() && out.error().reason == "Conflict") continue;
    return with_warnings(ApiResponse::error(out.error()), warnings);
  }
  return ApiResponse::error(conflict(r, ri.name, "too many concurrent writes"));
}

// ---------------------------------------------------------------------------------------------------------
// patch

ApiResponse ApiServer::do_patch(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  if (is_apply_patch(req.content_type)) return do_apply(req, ri, r);
  auto type = patch_type_from_content_type(req.content_type);
  if (!type) {
    return ApiResponse::error(unsupported_media_type("the body of the request was in an unknown format - accepted "
                                                     "media types include: application/json-patch+json, "
                                                     "application/merge-patch+json, "
                                                     "application/strategic-merge-patch+json, "
                                                     "application/apply-patch+yaml"));
  }
  if (*type == PatchType::kStrategic && r.is_custom) {
    return ApiResponse::error(unsupported_media_type("the body of the request was in an unknown format - accepted "
                                                     "media types include: application/json-patch+json, "
                                                     "application/merge-patch+json, application/apply-patch+yaml"));
  }
  std::vector<std::string> warnings;
  WriteOptions opts{req.param("dryRun").has_value(), field_validation(req), ri.subresource, req.user, true,
                    field_manager_of(req), nullptr};
  std::string ns = r.namespaced ? ri.ns : "";
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto so = store_.get(storage_of(r), object_key(ns, ri.name));
    if (!so) return ApiResponse::error(not_found(r, ri.name));
    json current = json::parse(*so->text);
    auto patched = apply_patch(current, req.body, *type, r.kind);
    if (!patched) {
      const auto& pe = patched.error();
      if (pe.kind == PatchErrorKind::kBadRequest) return ApiResponse::error(bad_request(pe.message));
      ApiError e{422, "Invalid", pe.message, ri.name, r.group, r.kind, {}, 0};
      return ApiResponse::error(e);
    }
    std::string patched_rv = patched->is_object() ? str_at(*patched, "metadata", "resourceVersion") : "";
    if (!patched_rv.empty() && parse_rv(patched_rv) != so->rv) {
      return ApiResponse::error(conflict(r, ri.name, "the object has been modified; please apply your changes to the "
                                                     "latest version and try again"));
    }
    auto out = write_update(r, ns, ri.name, std::move(*patched), current, so->rv, opts, warnings);
    if (out) return with_warnings(ApiResponse::json(200, *out), warnings);
    if (out.error().code == 409 && out.error().reason == "Conflict") continue;
    return with_warnings(ApiResponse::error(out.error()), warnings);
  }
  return ApiResponse::error(conflict(r, ri.name, "too many concurrent writes"));
}

// ---------------------------------------------------------------------------------------------------------
// delete

namespace {

// `body`: the request's DeleteOptions decoded (JSON, YAML or protobuf: client-go's typed clients send protobuf),
// null when the request has none.
std::expected<ApiServer::DeleteOptions, ApiError> parse_delete_options(const ApiRequest& req, const json* body) {
  ApiServer::DeleteOptions o;
  o.user = req.user;
  o.dry_run = req.param("dryRun").has_value();
  if (body) {
    const json& b = *body;
    if (!b.is_object()) return std::unexpected(bad_request("invalid DeleteOptions body: not an object"));
    if (b.contains("gracePeriodSeconds") && b["gracePeriodSeconds"].is_number_integer()) {
      o.grace_period_seconds = b["gracePeriodSeconds"].get<std::int64_t>();
    }
    if (b.contains("propagationPolicy") && b["propagationPolicy"].is_string()) {
      o.propagation = b["propagationPolicy"].get<std::string>();
    }
    if (b.contains("orphanDependents") && b["orphanDependents"].is_boolean()) {
      o.propagation = b["orphanDependents"].get<bool>() ? "Orphan" : "Background";
    }
    if (auto p = b.find("preconditions"); p != b.end() && p->is_object()) {
      o.precondition_uid = p->value("uid", "");
      o.precondition_rv = p->value("resourceVersion", "");
    }
    if (auto d = b.find("dryRun"); d != b.end() && d->is_array() && !d->empty()) o.dry_run = true;
  }
  if (auto g = req.param("gracePeriodSeconds")) {
    try {
      o.grace_period_seconds = std::stoll(*g);
    } catch (...) {
      return std::unexpected(bad_request("invalid gracePeriodSeconds: " + *g));
    }
  }
  if (auto p = req.param("propagationPolicy")) o.propagation = *p;
  if (!o.propagation.empty() && o.propagation != "Orphan" && o.propagation != "Background" &&
      o.propagation != "Foreground") {
    return std::unexpected(bad_request("propagationPolicy: Unsupported value: \"" + o.propagation +
                                       "\": supported values: \"Foreground\", \"Background\", \"Orphan\""));
  }
  return o;
}

json success_status(const ResourceInfo& r, const std::string& name, const std::string& uid) {
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", json::object()},
          {"status", "Success"},
          {"details", {{"name", name}, {"group", r.group}, {"kind", r.plural}, {"uid", uid}}}};
}

}  // namespace

std::expected<json, ApiError> ApiServer::delete_object(const ResourceInfo& r, const std::string& ns,
                                                       const std::string& name, const DeleteOptions& opts,
                                                       bool& removed) {
  removed = false;
  std::string key = object_key(r.namespaced ? ns : "", name);
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto so = store_.get(storage_of(r), key);
    if (!so) return std::unexpected(not_found(r, name));
    json current = json::parse(*so->text);
    json& cm = meta_of(current);
    if (!opts.precondition_uid.empty() && cm.value("uid", "") != opts.precondition_uid) {
      return std::unexpected(conflict(r, name, "Precondition failed: UID in precondition: " + opts.precondition_uid +
                                                   ", UID in object meta: " + cm.value("uid", "")));
    }
    if (!opts.precondition_rv.empty() && cm.value("resourceVersion", "") != opts.precondition_rv) {
      return std::unexpected(conflict(r, name, "Precondition failed: ResourceVersion in precondition: " +
                                                   opts.precondition_rv + ", ResourceVersion in object meta: " +
                                                   cm.value("resourceVersion", "")));
    }
    {
      std::vector<std::string> warnings;
      Admission::Attributes attrs{&r, "", "DELETE", ns, name, opts.user, opts.dry_run};
      json none;
      if (auto e = admission_->validate(attrs, none, &current, warnings); !e) return std::unexpected(e.error());
    }
    bool already_deleting = cm.contains("deletionTimestamp") && !cm["deletionTimestamp"].is_null();
    json next = current;
    json& nm = meta_of(next);

    // Graceful pod deletion: a bound, non-terminal pod is marked and the kubelet finishes the job.
    std::int64_t grace = 0;
    if (r.kind == "Pod" && r.group.empty()) {
      grace = next["spec"].value("terminationGracePeriodSeconds", 30);
      if (opts.grace_period_seconds) grace = *opts.grace_period_seconds;
      std::string node = next["spec"].value("nodeName", "");
      std::string phase = next.contains("status") ? next["status"].value("phase", "") : "";
      if (node.empty() || phase == "Succeeded" || phase == "Failed") grace = 0;
      if (grace < 0) grace = 0;
      if (already_deleting) {
        std::int64_t prev = nm.value("deletionGracePeriodSeconds", 0);
        if (grace >= prev && grace > 0) return current;  // a longer grace period never extends the deadline
      }
    }
    // Propagation policy becomes a finalizer the garbage collector honours.
    std::string prop = opts.propagation;
    if (prop.empty()) prop = "Background";
    auto fins = nm.contains("finalizers") && nm["finalizers"].is_array() ? nm["finalizers"] : json::array();
    auto add_fin = [&](const std::string& f) {
      for (const auto& x : fins) {
        if (x == f) return;
      }
      fins.push_back(f);
    };
    if (prop == "Orphan") add_fin("orphan");
    if (prop == "Foreground") add_fin("foregroundDeletion");
    if (r.kind == "Namespace" && r.group.empty()) {
      // The namespace controller removes content first, then the namespace.
      if (!already_deleting) {
        nm["deletionTimestamp"] = common::format_rfc3339(now());
        next["status"]["phase"] = "Terminating";
        if (opts.dry_run) return next;
        auto res = store_.update(storage_of(r), key, next, so->rv, r.selectable_fields);
        if (res.status == Store::WriteStatus::kConflict) continue;
        gc_->namespace_deleting(name);
        return json::parse(*res.text);
      }
      return current;
    }
    if (grace > 0 || !fins.empty()) {
      if (!fins.empty()) nm["finalizers"] = fins;
      if (!already_deleting) {
        nm["deletionTimestamp"] = common::format_rfc3339(now() + std::chrono::seconds(grace));
      } else if (grace > 0) {
        nm["deletionTimestamp"] = common::format_rfc3339(now() + std::chrono::seconds(grace));
      }
      nm["deletionGracePeriodSeconds"] = grace;
      if (!already_deleting && next.contains("metadata")) {
        std::int64_t gen = nm.value("generation", 0);
        if (gen > 0) nm["generation"] = gen + 1;
      }
      if (grace == 0 && fins.empty()) {
        // fall through to removal
      } else {
        if (opts.dry_run) return next;
        if (same_object(next, current)) return current;
        auto res = store_.update(storage_of(r), key, next, so->rv, r.selectable_fields);
        if (res.status == Store::WriteStatus::kConflict) continue;
        if (res.status == Store::WriteStatus::kNotFound) return std::unexpected(not_found(r, name));
        json stored = json::parse(*res.text);
        gc_->object_deleting(r, stored);
        return stored;
      }
    }
    if (opts.dry_run) return current;
    json final_state = current;
    auto res = store_.remove(storage_of(r), key, so->rv, &final_state);
    if (res.status == Store::WriteStatus::kConflict) continue;
    if (res.status == Store::WriteStatus::kNotFound) return std::unexpected(not_found(r, name));
    removed = true;
    after_remove(r, final_state);
    return final_state;
  }
  return std::unexpected(conflict(r, name, "too many concurrent writes"));
}

void ApiServer::after_remove(const ResourceInfo& r, const json& removed) {
  if (r.kind == "CustomResourceDefinition" && r.group == "apiextensions.k8s.io") {
    for (const auto& cr : custom::crd_resources(removed)) registry_.remove(cr->id());
  }
  gc_->object_removed(r, removed);
}

std::expected<ApiServer::DeleteOptions, ApiError> ApiServer::delete_options(const ApiRequest& req) const {
  if (req.body.empty()) return parse_delete_options(req, nullptr);
  auto body = decode_body(req);
  if (!body) return std::unexpected(bad_request("invalid DeleteOptions body: " + body.error().message));
  return parse_delete_options(req, &*body);
}

ApiResponse ApiServer::do_delete(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  auto opts = delete_options(req);
  if (!opts) return ApiResponse::error(opts.error());
  bool removed = false;
  auto out = delete_object(r, r.namespaced ? ri.ns : "", ri.name, *opts, removed);
  if (!out) return ApiResponse::error(out.error());
  // Like kube-apiserver: pods and objects still terminating are returned; others get a Success status.
  if (removed && !(r.kind == "Pod" && r.group.empty())) {
    return ApiResponse::json(200, success_status(r, ri.name, (*out)["metadata"].value("uid", "")));
  }
  return ApiResponse::json(200, *out);
}

ApiResponse ApiServer::do_delete_collection(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  auto opts = delete_options(req);
  if (!opts) return ApiResponse::error(opts.error());
  ApiRequest list_req = req;
  list_req.method = "GET";
  list_req.query.erase("limit");
  list_req.query.erase("continue");
  ApiResponse listed = do_list(list_req, ri, r);
  if (listed.status != 200) return listed;
  json l = json::parse(listed.body);
  json items = json::array();
  for (auto& item : l["items"]) {
    bool removed = false;
    auto out = delete_object(r, item["metadata"].value("namespace", ""), item["metadata"].value("name", ""), *opts,
                             removed);
    if (out) items.push_back(*out);
  }
  l["items"] = items;
  return ApiResponse::json(200, l);
}

}  // namespace kubex::sim
