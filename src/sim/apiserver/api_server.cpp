#include "sim/apiserver/api_server.h"

#include <nlohmann/json.hpp>

#include "common/hash.h"
#include "common/yaml.h"
#include "sim/apiserver/admission.h"
#include "sim/apiserver/discovery.h"
#include "sim/apiserver/gc.h"
#include "sim/apiserver/protobuf.h"

namespace kubex::sim {

using nlohmann::json;

std::optional<std::string> ApiRequest::param(const std::string& name) const {
  auto it = query.find(name);
  if (it == query.end()) return std::nullopt;
  return it->second;
}

ApiResponse ApiResponse::error(const ApiError& e) {
  ApiResponse r;
  r.status = e.code;
  r.body = e.to_status().dump();
  if (e.retry_after_seconds > 0) r.headers.emplace_back("Retry-After", std::to_string(e.retry_after_seconds));
  return r;
}

ApiResponse ApiResponse::json(int status, const nlohmann::json& body) {
  ApiResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

bool parse_bool_param(const std::string& v) {
  // strconv.ParseBool's true spellings (the Python client sends "True").
  return v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True";
}

std::optional<RequestInfo> parse_request_info(const std::string& method, const std::string& path,
                                              const std::multimap<std::string, std::string>& query) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start < path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  RequestInfo ri;
  std::size_t idx = 0;
  if (parts.size() >= 3 && parts[0] == "api") {
    ri.prefix = "api";
    ri.version = parts[1];
    idx = 2;
  } else if (parts.size() >= 4 && parts[0] == "apis") {
    ri.prefix = "apis";
    ri.group = parts[1];
    ri.version = parts[2];
    idx = 3;
  } else {
    return std::nullopt;
  }
  std::vector<std::string> cur(parts.begin() + static_cast<long>(idx), parts.end());
  if (!cur.empty() && cur[0] == "namespaces" && cur.size() > 1) {
    ri.ns = cur[1];
    if (cur.size() > 2 && cur[2] != "status" && cur[2] != "finalize") {
      cur.erase(cur.begin(), cur.begin() + 2);
    }
  }
  if (cur.empty()) return std::nullopt;
  ri.is_resource = true;
  ri.resource = cur[0];
  if (cur.size() > 1) ri.name = cur[1];
  if (cur.size() > 2) ri.subresource = cur[2];
  if (cur.size() > 3) return std::nullopt;
  if (ri.resource == "namespaces") ri.ns.clear();
  bool watch = false;
  if (auto it = query.find("watch"); it != query.end()) watch = parse_bool_param(it->second);
  if (method == "GET" || method == "HEAD") {
    ri.verb = watch ? "watch" : (ri.name.empty() ? "list" : "get");
  } else if (method == "POST") {
    ri.verb = "create";
  } else if (method == "PUT") {
    ri.verb = "update";
  } else if (method == "PATCH") {
    ri.verb = "patch";
  } else if (method == "DELETE") {
    ri.verb = ri.name.empty() ? "deletecollection" : "delete";
  } else {
    ri.verb = "unknown";
  }
  return ri;
}

ApiServer::ApiServer(ApiServerOptions options)
    : options_(std::move(options)), store_(options_.watch_window) {
  admission_ = std::make_unique<Admission>(*this);
  gc_ = std::make_unique<GarbageCollector>(*this);
}

ApiServer::~ApiServer() { stop(); }

void ApiServer::bootstrap(bool) {
  for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    if (store_.get("/namespaces", ns)) continue;
    json obj = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
    call("POST", "/api/v1/namespaces", obj.dump());
  }
  // The watch cache is initialised here (after a restore too): clients that watch from a resourceVersion
  // older than this must relist (410 Gone), as against a kube-apiserver that has just started.
  store_.begin_watch_window();
}

void ApiServer::start() { gc_->start(); }

void ApiServer::begin_shutdown() {
  stopping_ = true;
  store_.wake_all();
}

void ApiServer::stop() {
  stopping_ = true;
  if (gc_) gc_->stop();
  store_.wake_all();
}

void ApiServer::add_validation_plugin(std::string name, ValidationPlugin plugin) {
  std::lock_guard lk(plugins_mu_);
  plugins_.emplace_back(std::move(name), std::move(plugin));
}

std::vector<std::pair<std::string, ApiServer::ValidationPlugin>> ApiServer::validation_plugins() const {
  std::lock_guard lk(plugins_mu_);
  return plugins_;
}

std::string ApiServer::storage_of(const ResourceInfo& r) { return r.group + "/" + r.plural; }

UserInfo ApiServer::controller_user() const {
  return UserInfo{"system:kube-controller-manager", "", {"system:authenticated"}};
}

ApiResponse ApiServer::call(const std::string& method, const std::string& path, const std::string& body,
                            const std::string& content_type, const std::multimap<std::string, std::string>& query) {
  ApiRequest req;
  req.method = method;
  req.path = path;
  req.body = body;
  req.content_type = content_type;
  req.accept = "application/json";
  req.user_agent = "kubex-sim";
  req.query = query;
  req.user = controller_user();
  return handle(req);
}

std::string ApiServer::cached_document(const std::string& key, const std::function<std::string()>& build) {
  std::uint64_t gen = registry_.generation();
  {
    std::lock_guard lk(doc_mu_);
    auto it = doc_cache_.find(key);
    if (it != doc_cache_.end() && it->second.first == gen) return it->second.second;
  }
  std::string doc = build();
  std::lock_guard lk(doc_mu_);
  doc_cache_[key] = {gen, doc};
  return doc;
}

std::optional<json> ApiServer::read(const ResourceInfo& r, const std::string& ns, const std::string& name) const {
  auto so = store_.get(storage_of(r), object_key(r.namespaced ? ns : "", name));
  if (!so) return std::nullopt;
  auto j = json::parse(*so->text, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

bool ApiServer::namespace_exists(const std::string& ns, bool& terminating) const {
  terminating = false;
  auto so = store_.get("/namespaces", ns);
  if (!so) return false;
  terminating = so->index->deleting;
  return true;
}

std::expected<json, ApiError> ApiServer::decode_body(const ApiRequest& req) const {
  std::string_view ct = req.content_type;
  if (ct.find("application/vnd.kubernetes.protobuf") != std::string_view::npos) {
    auto decoded = decode_k8s_protobuf(req.body);
    if (!decoded) return std::unexpected(bad_request(decoded.error().str()));
    return *decoded;
  }
  if (ct.find("yaml") != std::string_view::npos) {
    auto docs = common::yaml_to_json(req.body);
    if (!docs) return std::unexpected(bad_request("error decoding YAML: " + docs.error().str()));
    return *docs;
  }
  json j = json::parse(req.body, nullptr, false);
  if (j.is_discarded()) {
    return std::unexpected(bad_request("the body of the request was in an unknown format - accepted media types "
                                       "include: application/json, application/yaml"));
  }
  return j;
}

ApiResponse ApiServer::handle(const ApiRequest& req) {
  try {
    auto ri = parse_request_info(req.method, req.path, req.query);
    if (!ri) return handle_nonresource(req);
    auto r = registry_.find(ri->group, ri->version, ri->resource);
    if (!r) return ApiResponse::error(page_not_found());
    if (!r->namespaced && !ri->ns.empty() && ri->resource != "namespaces") {
      return ApiResponse::error(page_not_found());
    }
    if (auto dr = req.param("dryRun"); dr && *dr != "All" && req.method != "GET") {
      // Like kube-apiserver's Create/Update/Patch/DeleteOptions validation: 422 Invalid on the options kind
      // (found by tests/conformance/test_differential.py). GET ignores dryRun.
      const std::string kind = req.method == "POST"    ? "CreateOptions"
                               : req.method == "PUT"   ? "UpdateOptions"
                               : req.method == "PATCH" ? "PatchOptions"
                                                       : "DeleteOptions";
      const std::string detail = "Unsupported value: [\"" + *dr + "\"]: supported values: \"All\"";
      return ApiResponse::error(ApiError{422, "Invalid", kind + ".meta.k8s.io \"\" is invalid: dryRun: " + detail, "",
                                         "meta.k8s.io", kind,
                                         {{"FieldValueNotSupported", "dryRun: " + detail, "dryRun"}}, 0});
    }
    if (auto fv = req.param("fieldValidation"); fv && *fv != "Strict" && *fv != "Warn" && *fv != "Ignore" && !fv->empty()) {
      return ApiResponse::error(bad_request("fieldValidation must be one of \"Ignore\", \"Warn\", or \"Strict\""));
    }
    const std::string& sub = ri->subresource;
    if (!sub.empty()) {
      if (sub == "status" && r->has_status) {
        if (ri->verb == "get") return do_get(req, *ri, *r);
        if (ri->verb == "update") return do_update(req, *ri, *r);
        if (ri->verb == "patch") return do_patch(req, *ri, *r);
        return ApiResponse::error(method_not_supported(*r, ri->verb));
      }
      if (sub == "scale" && r->has_scale) return do_scale(req, *ri, *r);
      if (sub == "eviction" && r->kind == "Pod" && r->group.empty()) {
        if (ri->verb != "create") return ApiResponse::error(method_not_supported(*r, ri->verb));
        return do_eviction(req, *ri, *r);
      }
      if (sub == "binding" && r->kind == "Pod" && r->group.empty()) {
        if (ri->verb != "create") return ApiResponse::error(method_not_supported(*r, ri->verb));
        return do_binding(req, *ri, *r);
      }
      return ApiResponse::error(page_not_found());
    }
    if (r->namespaced && ri->ns.empty() && ri->verb != "list" && ri->verb != "watch" && ri->resource != "namespaces") {
      return ApiResponse::error(page_not_found());
    }
    if (ri->verb == "get") return do_get(req, *ri, *r);
    if (ri->verb == "list") return do_list(req, *ri, *r);
    if (ri->verb == "watch") return do_watch(req, *ri, *r);
    if (ri->verb == "create") {
      if (!ri->name.empty()) return ApiResponse::error(method_not_supported(*r, "create"));
      return do_create(req, *ri, *r);
    }
    if (ri->verb == "update") return do_update(req, *ri, *r);
    if (ri->verb == "patch") return do_patch(req, *ri, *r);
    if (ri->verb == "delete") return do_delete(req, *ri, *r);
    if (ri->verb == "deletecollection") return do_delete_collection(req, *ri, *r);
    return ApiResponse::error(method_not_supported(*r, req.method));
  } catch (const std::exception& e) {
    log_.error("request failed", {{"method", req.method}, {"path", req.path}, {"error", e.what()}});
    return ApiResponse::error(internal_error(e.what()));
  }
}

// ---------------------------------------------------------------------------------------------------------
// non-resource endpoints

ApiResponse ApiServer::handle_nonresource(const ApiRequest& req) {
  const std::string& p = req.path;
  auto text = [](const std::string& body) {
    ApiResponse r;
    r.body = body;
    r.content_type = "text/plain; charset=utf-8";
    return r;
  };
  if (p == "/healthz" || p == "/livez" || p == "/readyz") return text("ok");
  if (p == "/simz/compact" && req.method == "POST") {
    store_.compact_all();
    return text("compacted at resourceVersion " + std::to_string(store_.current_rv()));
  }
  if (req.method != "GET" && req.method != "HEAD") return ApiResponse::error(page_not_found());
  if (p == "/version" || p == "/version/") return ApiResponse::json(200, version_info(options_.server_version_minor));
  if (p == "/api" || p == "/api/") return ApiResponse::json(200, discovery_core_versions(options_.external_address));
  if (p == "/apis" || p == "/apis/") {
    ApiResponse r;
    r.body = cached_document("apis", [&] { return discovery_group_list(registry_).dump(); });
    return r;
  }
  if (p.rfind("/api/", 0) == 0 || p.rfind("/apis/", 0) == 0) {
    std::vector<std::string> parts;
    std::size_t start = 1;
    while (start < p.size()) {
      auto slash = p.find('/', start);
      if (slash == std::string::npos) slash = p.size();
      if (slash > start) parts.push_back(p.substr(start, slash - start));
      start = slash + 1;
    }
    json doc;
    if (parts.size() == 2 && parts[0] == "api") {
      doc = discovery_resource_list(registry_, "", parts[1]);
    } else if (parts.size() == 2 && parts[0] == "apis") {
      doc = discovery_group(registry_, parts[1]);
    } else if (parts.size() == 3 && parts[0] == "apis") {
      doc = discovery_resource_list(registry_, parts[1], parts[2]);
    }
    if (doc.is_null()) return ApiResponse::error(page_not_found());
    return ApiResponse::json(200, doc);
  }
  if (p == "/openapi/v3" || p == "/openapi/v3/") {
    auto hash_of = [&](const std::string& gv) {
      std::string doc = cached_document("openapi:" + gv, [&] { return openapi_v3_document(registry_, gv).dump(); });
      return common::sha256_hex(doc).substr(0, 32);
    };
    return ApiResponse::json(200, openapi_v3_root(registry_, hash_of));
  }
  if (p.rfind("/openapi/v3/", 0) == 0) {
    std::string gv = p.substr(std::string("/openapi/v3/").size());
    std::string doc = cached_document("openapi:" + gv, [&] { return openapi_v3_document(registry_, gv).dump(); });
    if (doc == "null") return ApiResponse::error(page_not_found());
    ApiResponse r;
    r.body = std::move(doc);
    // Documents are addressed by content hash, so clients may cache them.
    r.headers.emplace_back("Cache-Control", "public, immutable");
    return r;
  }
  if (p == "/openapi/v2" || p == "/swagger.json") {
    if (req.accept.find("protobuf") != std::string::npos) {
      // client-go asks for the gnostic protobuf form. kubectl only consults v2 where v3 does not answer (for
      // client-side validation of kinds v3 does not describe yet, e.g. a CR next to its CRD in one file); a
      // document without definitions makes it skip validation for such kinds, as a real server does.
      ApiResponse r;
      r.body = openapi_v2_protobuf_minimal();
      r.content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
      return r;
    }
    ApiResponse r;
    r.body = cached_document("openapi:v2", [&] { return openapi_v2_document(registry_).dump(); });
    return r;
  }
  return ApiResponse::error(page_not_found());
}

}  // namespace kubex::sim
