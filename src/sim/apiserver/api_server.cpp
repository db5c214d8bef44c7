#include "sim/apiserver/api_server.h"

#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/hash.h"
#include "common/label_selector.h"
#include "common/yaml.h"
#include "sim/apiserver/admission.h"
#include "sim/apiserver/discovery.h"
#include "sim/apiserver/field_selector.h"
#include "sim/apiserver/gc.h"
#include "sim/apiserver/protobuf.h"
#include "sim/apiserver/table.h"

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
    if (auto dr = req.param("dryRun"); dr && *dr != "All") {
      return ApiResponse::error(bad_request("Invalid dry run value: \"" + *dr + "\", only \"All\" is supported"));
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
// reads

namespace {

bool wants_table(const std::string& accept) { return accept.find("as=Table") != std::string::npos; }

struct Selectors {
  std::optional<common::LabelSelector> labels;
  std::optional<FieldSelector> fields;
};

std::expected<Selectors, ApiError> parse_selectors(const ApiRequest& req, const ResourceInfo& r) {
  Selectors s;
  if (auto ls = req.param("labelSelector"); ls && !ls->empty()) {
    auto parsed = common::LabelSelector::parse(*ls);
    if (!parsed) return std::unexpected(bad_request("unable to parse requirement: " + parsed.error().str()));
    s.labels = std::move(*parsed);
  }
  if (auto fs = req.param("fieldSelector"); fs && !fs->empty()) {
    auto parsed = FieldSelector::parse(*fs);
    if (!parsed) return std::unexpected(bad_request(parsed.error().str()));
    for (const auto& f : parsed->fields()) {
      bool ok = f == "metadata.name" || f == "metadata.namespace";
      for (const auto& sf : r.selectable_fields) ok = ok || sf == f;
      if (!ok) return std::unexpected(bad_request("field label not supported: " + f));
    }
    s.fields = std::move(*parsed);
  }
  return s;
}

bool matches(const Selectors& s, const ObjectIndex& idx) {
  if (s.labels) {
    bool ok = s.labels->matches_lookup([&](std::string_view k) -> std::optional<std::string_view> {
      const std::string* v = idx.label(std::string(k));
      if (!v) return std::nullopt;
      return std::string_view(*v);
    });
    if (!ok) return false;
  }
  if (s.fields) {
    bool ok = s.fields->matches([&](std::string_view f) -> std::optional<std::string> {
      const std::string* v = idx.field(std::string(f));
      if (!v) return std::nullopt;
      return *v;
    });
    if (!ok) return false;
  }
  return true;
}

std::string list_kind(const ResourceInfo& r) { return r.kind + "List"; }

struct ContinueToken {
  std::uint64_t rv = 0;
  std::string start;
};

std::string encode_continue(const ContinueToken& t) {
  json j = {{"v", "meta.k8s.io/v1"}, {"rv", t.rv}, {"start", t.start}};
  return common::base64_encode(j.dump());
}

std::optional<ContinueToken> decode_continue(const std::string& s) {
  auto raw = common::base64_decode(s);
  if (!raw) return std::nullopt;
  json j = json::parse(*raw, nullptr, false);
  if (!j.is_object() || !j.contains("rv") || !j.contains("start")) return std::nullopt;
  ContinueToken t;
  try {
    t.rv = j["rv"].get<std::uint64_t>();
    t.start = j["start"].get<std::string>();
  } catch (...) {
    return std::nullopt;
  }
  return t;
}

}  // namespace

ApiResponse ApiServer::do_get(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  auto so = store_.get(storage_of(r), object_key(r.namespaced ? ri.ns : "", ri.name));
  if (!so) return ApiResponse::error(not_found(r, ri.name));
  ApiResponse res;
  if (wants_table(req.accept)) {
    json obj = json::parse(*so->text);
    std::vector<const json*> items = {&obj};
    res.body = to_table(r, items, req.param("includeObject").value_or("Metadata"), true, so->rv, "").dump();
    return res;
  }
  res.body = *so->text;
  return res;
}

ApiResponse ApiServer::do_list(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  auto sel = parse_selectors(req, r);
  if (!sel) return ApiResponse::error(sel.error());
  std::size_t limit = 0;
  if (auto l = req.param("limit"); l && !l->empty()) {
    try {
      long long v = std::stoll(*l);
      if (v > 0) limit = static_cast<std::size_t>(v);
    } catch (...) {
      return ApiResponse::error(bad_request("invalid limit: " + *l));
    }
  }
  std::string after;
  std::uint64_t token_rv = 0;
  if (auto c = req.param("continue"); c && !c->empty()) {
    auto t = decode_continue(*c);
    if (!t) return ApiResponse::error(bad_request("continue key is not valid: incorrect encoded start resourceVersion"));
    if (t->rv < store_.compacted_rv(storage_of(r))) {
      return ApiResponse::error(expired("The provided continue parameter is too old to display a consistent list "
                                        "result. You can start a new list without the continue parameter."));
    }
    after = t->start;
    token_rv = t->rv;
  }
  if (auto rvp = req.param("resourceVersion"); rvp && !rvp->empty() && *rvp != "0") {
    std::uint64_t want = 0;
    try {
      want = std::stoull(*rvp);
    } catch (...) {
      return ApiResponse::error(bad_request("invalid resource version: " + *rvp));
    }
    auto match = req.param("resourceVersionMatch").value_or("");
    if (match == "Exact" && want != store_.current_rv()) {
      return ApiResponse::error(expired("The resourceVersion for the provided list is too old."));
    }
    if (want > store_.current_rv()) {
      ApiError e{504, "Timeout", "Too large resource version: " + *rvp + ", current: " +
                                     std::to_string(store_.current_rv()), "", "", "", {}, 1};
      return ApiResponse::error(e);
    }
  }
  std::string ns = r.namespaced ? ri.ns : "";
  std::function<bool(const ObjectIndex&)> filter;
  if (sel->labels || sel->fields) filter = [&](const ObjectIndex& idx) { return matches(*sel, idx); };
  auto result = store_.list(storage_of(r), ns, after, limit, filter);
  std::uint64_t rv = token_rv ? token_rv : result.rv;
  std::string cont;
  if (result.more) cont = encode_continue({rv, result.last_key});

  ApiResponse res;
  if (wants_table(req.accept)) {
    std::vector<json> parsed;
    parsed.reserve(result.items.size());
    for (const auto& it : result.items) parsed.push_back(json::parse(*it.text));
    std::vector<const json*> ptrs;
    for (const auto& p : parsed) ptrs.push_back(&p);
    json t = to_table(r, ptrs, req.param("includeObject").value_or("Metadata"), true, rv, cont);
    if (result.more && result.remaining >= 0) t["metadata"]["remainingItemCount"] = result.remaining;
    res.body = t.dump();
    return res;
  }
  json meta = {{"resourceVersion", std::to_string(rv)}};
  if (!cont.empty()) {
    meta["continue"] = cont;
    if (result.remaining >= 0) meta["remainingItemCount"] = result.remaining;
  }
  std::string body;
  std::size_t total = 128;
  for (const auto& it : result.items) total += it.text->size() + 1;
  body.reserve(total);
  body += "{\"kind\":\"" + list_kind(r) + "\",\"apiVersion\":\"" + r.api_version() + "\",\"metadata\":" + meta.dump() +
          ",\"items\":[";
  bool first = true;
  for (const auto& it : result.items) {
    if (!first) body += ',';
    first = false;
    body += *it.text;
  }
  body += "]}";
  res.body = std::move(body);
  return res;
}

// ---------------------------------------------------------------------------------------------------------
// watch

ApiResponse ApiServer::do_watch(const ApiRequest& req, const RequestInfo& ri, const ResourceInfo& r) {
  auto sel = parse_selectors(req, r);
  if (!sel) return ApiResponse::error(sel.error());
  std::string ns = r.namespaced ? ri.ns : "";
  std::string name = ri.name;
  std::string storage = storage_of(r);
  bool bookmarks = parse_bool_param(req.param("allowWatchBookmarks").value_or(""));
  bool send_initial = parse_bool_param(req.param("sendInitialEvents").value_or(""));
  bool table = wants_table(req.accept);
  std::string include_object = req.param("includeObject").value_or("Metadata");
  auto timeout = options_.max_watch_timeout;
  if (auto t = req.param("timeoutSeconds"); t && !t->empty()) {
    try {
      long long v = std::stoll(*t);
      if (v > 0) timeout = std::min<std::chrono::seconds>(std::chrono::seconds(v), timeout);
    } catch (...) {
      return ApiResponse::error(bad_request("invalid timeoutSeconds: " + *t));
    }
  }
  std::string rv_param = req.param("resourceVersion").value_or("");
  bool initial = rv_param.empty() || rv_param == "0" || send_initial;
  std::uint64_t from = 0;
  std::vector<StoredObject> initial_items;
  std::optional<ApiError> too_old;
  if (!rv_param.empty() && rv_param != "0") {
    try {
      from = std::stoull(rv_param);
    } catch (...) {
      return ApiResponse::error(bad_request("invalid resource version: " + rv_param));
    }
  }
  auto filter = [sel = *sel, name](const ObjectIndex& idx) {
    if (!name.empty() && idx.name != name) return false;
    return matches(sel, idx);
  };
  if (initial) {
    auto l = store_.list(storage, ns, "", 0, filter);
    initial_items = std::move(l.items);
    if (rv_param.empty() || rv_param == "0") from = l.rv;
  }
  auto cursor = store_.watch(storage, from);
  if (!cursor) {
    too_old = expired("too old resource version: " + std::to_string(from) + " (" +
                      std::to_string(store_.compacted_rv(storage)) + ")");
  }

  ApiResponse res;
  res.content_type = "application/json;stream=watch";
  auto r_copy = std::make_shared<ResourceInfo>(r);
  res.stream = [this, r_copy, ns, filter, bookmarks, send_initial, table, include_object, timeout, from,
                initial_items = std::move(initial_items), cursor = std::move(cursor),
                too_old](const std::function<bool(const std::string&)>& write) mutable {
    const ResourceInfo& rr = *r_copy;
    bool first_table = true;
    auto encode = [&](const char* type, const std::string& text) -> std::string {
      if (!table) return std::string("{\"type\":\"") + type + "\",\"object\":" + text + "}\n";
      json obj = json::parse(text, nullptr, false);
      std::vector<const json*> items = {&obj};
      json t = to_table(rr, items, include_object, first_table, 0, "");
      first_table = false;
      return std::string("{\"type\":\"") + type + "\",\"object\":" + t.dump() + "}\n";
    };
    auto bookmark = [&](std::uint64_t rv, bool initial_end) {
      json meta = {{"resourceVersion", std::to_string(rv)}};
      if (initial_end) meta["annotations"] = {{"k8s.io/initial-events-end", "true"}};
      json obj = {{"kind", rr.kind}, {"apiVersion", rr.api_version()}, {"metadata", meta}};
      return std::string("{\"type\":\"BOOKMARK\",\"object\":") + obj.dump() + "}\n";
    };
    if (too_old) {
      json ev = {{"type", "ERROR"}, {"object", too_old->to_status()}};
      write(ev.dump() + "\n");
      return;
    }
    for (const auto& item : initial_items) {
      if (!write(encode("ADDED", *item.text))) return;
    }
    if (send_initial && bookmarks) {
      if (!write(bookmark(from, true))) return;
    }
    auto deadline = std::chrono::steady_clock::now() + timeout;
    auto next_bookmark = std::chrono::steady_clock::now() + options_.bookmark_interval;
    while (!stopping_) {
      auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return;
      auto wait = std::min(deadline, next_bookmark) - now;
      bool gone = false;
      auto events = cursor->next(std::chrono::duration_cast<std::chrono::milliseconds>(wait) +
                                     std::chrono::milliseconds(1),
                                 gone);
      if (gone) {
        json ev = {{"type", "ERROR"},
                   {"object", expired("too old resource version: " + std::to_string(cursor->position()))
                                  .to_status()}};
        write(ev.dump() + "\n");
        return;
      }
      for (const auto& ev : events) {
        if (!ns.empty() && ev.index->ns != ns) continue;
        bool cur_match = filter(*ev.index);
        bool prev_match = ev.prev ? filter(*ev.prev) : false;
        const char* type = nullptr;
        switch (ev.type) {
          case EventType::kAdded: type = cur_match ? "ADDED" : nullptr; break;
          case EventType::kDeleted: type = cur_match ? "DELETED" : nullptr; break;
          case EventType::kModified:
            if (cur_match && prev_match) type = "MODIFIED";
            else if (cur_match) type = "ADDED";
            else if (prev_match) type = "DELETED";
            break;
          default: break;
        }
        if (!type) continue;
        if (!write(encode(type, *ev.text))) return;
      }
      if (std::chrono::steady_clock::now() >= next_bookmark) {
        if (bookmarks && !write(bookmark(cursor->position(), false))) return;
        if (!bookmarks && !write("")) return;  // liveness probe of the connection
        next_bookmark = std::chrono::steady_clock::now() + options_.bookmark_interval;
      }
    }
  };
  return res;
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
