// GET, LIST and WATCH of resources: label and field selectors, pagination with continue tokens, Table
// output, watch with bookmarks, initial events and 410 Gone.
#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/label_selector.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/field_selector.h"
#include "sim/apiserver/protobuf.h"
#include "sim/apiserver/table.h"

namespace kubex::sim {

using nlohmann::json;

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

}  // namespace kubex::sim
