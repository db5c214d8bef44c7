#include "sim/apiserver/admission.h"

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/hash.h"
#include "common/http_reuse.h"
#include "common/httplib_socket.h"
#include "common/label_selector.h"
#include "common/x509.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/patch.h"

namespace kubex::sim {

using nlohmann::json;

struct Admission::Hook {
  std::string config_name;
  json webhook;
  bool mutating = false;
  std::string name() const { return webhook.value("name", ""); }
};

namespace {

bool list_has(const json& list, const std::string& value) {
  if (!list.is_array()) return false;
  for (const auto& v : list) {
    if (v == "*" || v == value) return true;
  }
  return false;
}

bool resource_matches(const json& resources, const std::string& resource, const std::string& sub) {
  if (!resources.is_array()) return false;
  std::string full = sub.empty() ? resource : resource + "/" + sub;
  for (const auto& rj : resources) {
    if (!rj.is_string()) continue;
    std::string r = rj.get<std::string>();
    if (r == full) return true;
    if (r == "*/*") return true;
    if (r == "*" && sub.empty()) return true;
    if (sub.empty()) continue;
    if (r == resource + "/*") return true;
    if (r == "*/" + sub) return true;
  }
  return false;
}

std::map<std::string, std::string> labels_of(const json* obj) {
  std::map<std::string, std::string> out;
  if (!obj || !obj->is_object() || !obj->contains("metadata")) return out;
  const json& m = (*obj)["metadata"];
  if (!m.is_object() || !m.contains("labels") || !m["labels"].is_object()) return out;
  for (auto& [k, v] : m["labels"].items()) out[k] = v.is_string() ? v.get<std::string>() : "";
  return out;
}

struct ParsedUrl {
  std::string scheme, host, path;
  int port = 443;
};

std::optional<ParsedUrl> parse_url(const std::string& url) {
  ParsedUrl u;
  auto p = url.find("://");
  if (p == std::string::npos) return std::nullopt;
  u.scheme = url.substr(0, p);
  std::string rest = url.substr(p + 3);
  auto slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  u.path = slash == std::string::npos ? "/" : rest.substr(slash);
  if (!hostport.empty() && hostport[0] == '[') {
    auto close = hostport.find(']');
    if (close == std::string::npos) return std::nullopt;
    u.host = hostport.substr(1, close - 1);
    if (close + 1 < hostport.size() && hostport[close + 1] == ':') u.port = std::atoi(hostport.c_str() + close + 2);
  } else {
    auto colon = hostport.rfind(':');
    if (colon != std::string::npos) {
      u.host = hostport.substr(0, colon);
      u.port = std::atoi(hostport.c_str() + colon + 1);
    } else {
      u.host = hostport;
    }
  }
  if (u.host.empty() || u.port <= 0) return std::nullopt;
  return u;
}

}  // namespace

struct Admission::Endpoint {
  std::string key;  // pool key
  std::string host;
  int port = 443;
  std::string connect_addr;  // when set, `host` resolves to this address
  std::string path;
  std::string ca_bundle;
  std::string display_url;
};

Admission::Admission(ApiServer& server) : server_(server) {}
Admission::~Admission() = default;

std::vector<Admission::Hook> Admission::load(bool mutating) {
  std::string storage = mutating ? "admissionregistration.k8s.io/mutatingwebhookconfigurations"
                                 : "admissionregistration.k8s.io/validatingwebhookconfigurations";
  auto l = server_.store().list(storage, "", "", 0, nullptr);  // key order == name order
  std::vector<Hook> out;
  for (const auto& item : l.items) {
    json cfg = json::parse(*item.text, nullptr, false);
    if (!cfg.is_object() || !cfg.contains("webhooks") || !cfg["webhooks"].is_array()) continue;
    std::string name = cfg["metadata"].value("name", "");
    for (const auto& w : cfg["webhooks"]) out.push_back(Hook{name, w, mutating});
  }
  return out;
}

bool Admission::matches(const Hook& h, const Attributes& a, const json& obj, const json* old) {
  const json& w = h.webhook;
  const ResourceInfo& r = *a.resource;
  bool rule_ok = false;
  if (w.contains("rules") && w["rules"].is_array()) {
    for (const auto& rule : w["rules"]) {
      if (!list_has(rule.value("operations", json::array()), a.operation)) continue;
      if (!list_has(rule.value("apiGroups", json::array()), r.group)) continue;
      if (!list_has(rule.value("apiVersions", json::array()), r.version)) continue;
      if (!resource_matches(rule.value("resources", json::array()), r.plural, a.subresource)) continue;
      std::string scope = rule.value("scope", "*");
      if (scope == "Cluster" && r.namespaced) continue;
      if (scope == "Namespaced" && !r.namespaced) continue;
      rule_ok = true;
      break;
    }
  }
  if (!rule_ok) return false;
  // namespaceSelector
  if (w.contains("namespaceSelector") && w["namespaceSelector"].is_object() && !w["namespaceSelector"].empty()) {
    auto sel = common::LabelSelector::from_json(w["namespaceSelector"], "namespaceSelector");
    if (sel && !sel->empty()) {
      std::map<std::string, std::string> ns_labels;
      if (r.kind == "Namespace" && r.group.empty()) {
        ns_labels = labels_of(obj.is_object() ? &obj : old);
      } else if (r.namespaced) {
        auto nsr = server_.registry().find("", "v1", "namespaces");
        auto ns = server_.read(*nsr, "", a.ns);
        if (ns) ns_labels = labels_of(&*ns);
      } else {
        ns_labels.clear();
      }
      if ((r.namespaced || r.kind == "Namespace") && !sel->matches(ns_labels)) return false;
    }
  }
  // objectSelector: matches when either the object or the old object matches.
  if (w.contains("objectSelector") && w["objectSelector"].is_object() && !w["objectSelector"].empty()) {
    auto sel = common::LabelSelector::from_json(w["objectSelector"], "objectSelector");
    if (sel && !sel->empty()) {
      bool ok = (obj.is_object() && sel->matches(labels_of(&obj))) || (old && sel->matches(labels_of(old)));
      if (!ok) return false;
    }
  }
  return true;
}

std::expected<json, std::string> Admission::call(const Hook& h, const json& review, std::string& url_out) {
  const json& cc = h.webhook.value("clientConfig", json::object());
  Endpoint ep;
  ep.ca_bundle = cc.value("caBundle", "");
  int timeout = h.webhook.value("timeoutSeconds", 10);
  if (cc.contains("url") && cc["url"].is_string()) {
    auto u = parse_url(cc["url"].get<std::string>());
    if (!u || u->scheme != "https") return std::unexpected("invalid webhook URL " + cc["url"].get<std::string>());
    ep.host = u->host;
    ep.port = u->port;
    ep.path = u->path;
    ep.display_url = cc["url"].get<std::string>();
  } else if (cc.contains("service") && cc["service"].is_object()) {
    const json& svc = cc["service"];
    std::string ns = svc.value("namespace", ""), name = svc.value("name", "");
    int port = svc.value("port", 443);
    ep.host = name + "." + ns + ".svc";
    ep.path = svc.value("path", "/");
    ep.display_url = "https://" + ep.host + ":" + std::to_string(port) + ep.path;
    auto it = server_.options().service_map.find(ns + "/" + name);
    if (it == server_.options().service_map.end()) {
      return std::unexpected("service \"" + ns + "/" + name + "\" not found (no --service-map entry)");
    }
    auto colon = it->second.rfind(':');
    ep.connect_addr = it->second.substr(0, colon);
    ep.port = colon == std::string::npos ? port : std::atoi(it->second.c_str() + colon + 1);
  } else {
    return std::unexpected("webhook has no clientConfig.url or clientConfig.service");
  }
  url_out = ep.display_url + (ep.display_url.find('?') == std::string::npos ? "?" : "&") + "timeout=" +
            std::to_string(timeout) + "s";
  ep.key = ep.host + ":" + std::to_string(ep.port) + "|" + ep.connect_addr + "|" + common::sha256_hex(ep.ca_bundle);

  std::shared_ptr<httplib::SSLClient> client;
  {
    std::lock_guard lk(pool_mu_);
    client = pool_[ep.key].take(std::chrono::steady_clock::now(), common::httplib_connection_open);
  }
  bool reused = client != nullptr;
  auto connect = [&]() -> std::expected<std::shared_ptr<httplib::SSLClient>, std::string> {
    auto c = std::make_shared<httplib::SSLClient>(ep.host, ep.port);
    if (!ep.connect_addr.empty()) c->set_hostname_addr_map({{ep.host, ep.connect_addr}});
    c->enable_server_certificate_verification(true);
    if (!ep.ca_bundle.empty()) {
      auto pem = common::base64_decode(ep.ca_bundle);
      if (!pem) return std::unexpected("invalid caBundle: " + pem.error().str());
      auto store = common::make_store(*pem);
      if (!store) return std::unexpected("invalid caBundle: " + store.error().str());
      c->set_ca_cert_store(store->release());
    } else {
      c->set_ca_cert_path("/etc/ssl/certs/ca-certificates.crt");
    }
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    return c;
  };
  if (!client) {
    auto c = connect();
    if (!c) return std::unexpected(c.error());
    client = std::move(*c);
  }
  std::string path = ep.path + (ep.path.find('?') == std::string::npos ? "?" : "&") + "timeout=" +
                     std::to_string(timeout) + "s";
  std::string request_body = review.dump();
  auto post = [&](httplib::SSLClient& c) {
    c.set_connection_timeout(timeout, 0);
    c.set_read_timeout(timeout, 0);
    c.set_write_timeout(timeout, 0);
    return c.Post(path, request_body, "application/json");
  };
  auto res = post(*client);
  // The webhook server closed the kept-alive connection as the review went out: send it once more on a
  // new connection when that is safe (not completely written; a POST that was written is not resent).
  if (!res && reused && common::resend_on_fresh_connection("POST", res.error() != httplib::Error::Write)) {
    auto c = connect();
    if (!c) return std::unexpected(c.error());
    client = std::move(*c);
    res = post(*client);
  }
  if (!res) {
    std::string err = httplib::to_string(res.error());
    long verify = client->get_openssl_verify_result();
    if (verify != 0) err += ": x509: " + std::string(X509_verify_cert_error_string(verify));
    return std::unexpected(err);
  }
  {
    std::lock_guard lk(pool_mu_);
    pool_[ep.key].put(client, std::chrono::steady_clock::now());
  }
  if (res->status != 200) {
    return std::unexpected("received unexpected HTTP status " + std::to_string(res->status) + ": " +
                           res->body.substr(0, 300));
  }
  json body = json::parse(res->body, nullptr, false);
  if (!body.is_object() || !body.contains("response") || !body["response"].is_object()) {
    return std::unexpected("received invalid webhook response: expected response in AdmissionReview");
  }
  return body["response"];
}

std::expected<void, ApiError> Admission::run(bool mutating, const Attributes& a, json& obj, const json* old,
                                             std::vector<std::string>& warnings) {
  const ResourceInfo& r = *a.resource;
  // Webhook configurations never intercept themselves (avoids locking the cluster out).
  if (r.group == "admissionregistration.k8s.io") return {};
  auto hooks = load(mutating);
  if (hooks.empty()) return {};

  json kind = {{"group", r.group}, {"version", r.version}, {"kind", r.kind}};
  if (a.subresource == "eviction") kind = {{"group", "policy"}, {"version", "v1"}, {"kind", "Eviction"}};
  if (a.subresource == "scale") kind = {{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}};
  json resource = {{"group", r.group}, {"version", r.version}, {"resource", r.plural}};
  std::string options_kind = a.operation == "CREATE"   ? "CreateOptions"
                             : a.operation == "UPDATE" ? "UpdateOptions"
                                                       : "DeleteOptions";

  std::vector<std::size_t> reinvoke;
  auto run_one = [&](const Hook& h, bool& changed) -> std::expected<void, ApiError> {
    changed = false;
    if (!matches(h, a, obj, old)) return {};
    std::string side = h.webhook.value("sideEffects", "Unknown");
    if (a.dry_run && side != "None" && side != "NoneOnDryRun") {
      return std::unexpected(bad_request("admission webhook \"" + h.name() + "\" does not support dry run"));
    }
    std::string uid = common::random_uuid();
    json req = {{"uid", uid},
                {"kind", kind},
                {"resource", resource},
                {"requestKind", kind},
                {"requestResource", resource},
                {"operation", a.operation},
                {"userInfo", {{"username", a.user.username}, {"groups", a.user.groups}}},
                {"object", a.operation == "DELETE" ? json(nullptr) : obj},
                {"oldObject", old ? *old : json(nullptr)},
                {"dryRun", a.dry_run},
                {"options", {{"kind", options_kind}, {"apiVersion", "meta.k8s.io/v1"}}}};
    if (!a.subresource.empty()) {
      req["subResource"] = a.subresource;
      req["requestSubResource"] = a.subresource;
    }
    if (!a.name.empty()) req["name"] = a.name;
    if (!a.ns.empty()) req["namespace"] = a.ns;
    if (!a.user.uid.empty()) req["userInfo"]["uid"] = a.user.uid;
    json review = {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", req}};
    std::string url;
    auto resp = call(h, review, url);
    std::string policy = h.webhook.value("failurePolicy", "Fail");
    auto failed = [&](const std::string& why) -> std::expected<void, ApiError> {
      std::string msg = "failed calling webhook \"" + h.name() + "\": failed to call webhook: Post \"" + url +
                        "\": " + why;
      if (policy == "Ignore") {
        log_.warn("webhook failed, ignoring (failurePolicy Ignore)", {{"webhook", h.name()}, {"error", msg}});
        return {};
      }
      return std::unexpected(internal_error(msg));
    };
    if (!resp) return failed(resp.error());
    if (resp->value("uid", "") != uid) {
      return failed("expected response.uid=\"" + uid + "\", got \"" + resp->value("uid", "") + "\"");
    }
    if (resp->contains("warnings") && (*resp)["warnings"].is_array()) {
      for (const auto& w : (*resp)["warnings"]) {
        if (w.is_string()) warnings.push_back(w.get<std::string>());
      }
    }
    if (!resp->value("allowed", false)) {
      json st = resp->value("status", json::object());
      // Like kube-apiserver's webhookerrors.ToStatusErr: the webhook's own Status goes to the client, with a code
      // of at least 400 and the message prefixed; details are only what the webhook sent (none of the admitted
      // object's), so kubectl prints the webhook's message.
      int code = st.is_object() ? st.value("code", 0) : 0;
      if (code < 400) code = 400;
      std::string message = st.is_object() ? st.value("message", "") : "";
      std::string reason = st.is_object() ? st.value("reason", "") : "";
      std::string denied = "admission webhook \"" + h.name() + "\" denied the request";
      ApiError e{code, reason,
                 !message.empty() ? denied + ": " + message
                                  : (!reason.empty() ? denied + ": " + reason : denied + " without explanation"),
                 "", "", "", {}, 0};
      if (st.is_object() && st.contains("details") && st["details"].is_object()) {
        const json& d = st["details"];
        e.name = d.value("name", "");
        e.group = d.value("group", "");
        e.kind = d.value("kind", "");
        if (d.contains("causes") && d["causes"].is_array()) {
          for (const auto& c : d["causes"]) {
            if (c.is_object()) e.causes.push_back({c.value("reason", ""), c.value("message", ""), c.value("field", "")});
          }
        }
      }
      return std::unexpected(e);
    }
    if (resp->contains("patch") && !(*resp)["patch"].is_null()) {
      if (!mutating) return failed("validating webhook may not return a patch");
      if (resp->value("patchType", "") != "JSONPatch") {
        return failed("unsupported patchType \"" + resp->value("patchType", "") + "\"");
      }
      auto raw = common::base64_decode((*resp)["patch"].get<std::string>());
      if (!raw) return failed("invalid base64 patch: " + raw.error().str());
      auto patched = apply_patch(obj, *raw, PatchType::kJson, r.kind);
      if (!patched) return failed("failed to apply patch: " + patched.error().message);
      if (*patched != obj) {
        obj = std::move(*patched);
        changed = true;
      }
    }
    return {};
  };

  bool any_changed_after_reinvocable = false;
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    bool changed = false;
    auto r1 = run_one(hooks[i], changed);
    if (!r1) return r1;
    if (changed && !reinvoke.empty()) any_changed_after_reinvocable = true;
    if (mutating && hooks[i].webhook.value("reinvocationPolicy", "Never") == "IfNeeded") {
      if (changed) any_changed_after_reinvocable = false;
      reinvoke.push_back(i);
    }
  }
  if (mutating && any_changed_after_reinvocable) {
    for (auto i : reinvoke) {
      bool changed = false;
      auto r2 = run_one(hooks[i], changed);
      if (!r2) return r2;
    }
  }
  return {};
}

std::expected<void, ApiError> Admission::mutate(const Attributes& a, json& obj, const json* old,
                                                std::vector<std::string>& warnings) {
  return run(true, a, obj, old, warnings);
}

std::expected<void, ApiError> Admission::validate(const Attributes& a, const json& obj, const json* old,
                                                  std::vector<std::string>& warnings) {
  for (const auto& [name, plugin] : server_.validation_plugins()) {
    if (auto r = plugin(*a.resource, a.subresource, a.operation, obj, old); !r) return r;
  }
  json copy = obj;
  return run(false, a, copy, old, warnings);
}

}  // namespace kubex::sim
