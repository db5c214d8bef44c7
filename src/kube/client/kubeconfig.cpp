#include "kube/client/kubeconfig.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "common/base64.h"
#include "common/file_io.h"
#include "common/yaml.h"

namespace kubex::kube {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const json* named_entry(const json& doc, const char* list, const std::string& name, const char* inner) {
  if (!doc.contains(list) || !doc[list].is_array()) return nullptr;
  for (const auto& e : doc[list]) {
    if (e.is_object() && e.value("name", "") == name && e.contains(inner) && e[inner].is_object()) return &e[inner];
  }
  return nullptr;
}

// Reads `<key>-data` (base64) or the file `<key>` (relative to `dir`).
common::Result<std::string> data_or_file(const json& obj, const std::string& key, const fs::path& dir,
                                         const std::string& where) {
  if (obj.contains(key + "-data") && obj[key + "-data"].is_string()) {
    auto d = common::base64_decode(obj[key + "-data"].get<std::string>());
    if (!d) return common::fail(where + "." + key + "-data: " + d.error().str());
    return *d;
  }
  if (obj.contains(key) && obj[key].is_string()) {
    fs::path p = obj[key].get<std::string>();
    if (p.is_relative()) p = dir / p;
    auto r = common::read_file(p.string());
    if (!r) return common::fail(where + "." + key + ": " + r.error().str());
    return *r;
  }
  return std::string();
}

}  // namespace

common::Result<ConnectionConfig> load_kubeconfig(const std::string& path, const std::string& context) {
  auto text = common::read_file(path);
  if (!text) return common::fail("cannot read kubeconfig: " + text.error().str());
  auto doc = common::yaml_to_json(*text);
  if (!doc) return common::fail("invalid kubeconfig " + path + ": " + doc.error().str());
  if (!doc->is_object()) return common::fail("invalid kubeconfig " + path + ": not a mapping");
  fs::path dir = fs::path(path).parent_path();
  ConnectionConfig c;
  c.source = path;
  c.context = context.empty() ? doc->value("current-context", "") : context;
  if (c.context.empty()) return common::fail("kubeconfig " + path + " has no current-context; pass --context");
  const json* ctx = named_entry(*doc, "contexts", c.context, "context");
  if (!ctx) return common::fail("context \"" + c.context + "\" not found in kubeconfig " + path);
  std::string cluster_name = ctx->value("cluster", ""), user_name = ctx->value("user", "");
  c.ns = ctx->value("namespace", "default");
  const json* cluster = named_entry(*doc, "clusters", cluster_name, "cluster");
  if (!cluster) return common::fail("cluster \"" + cluster_name + "\" (context \"" + c.context + "\") not found in " + path);
  c.server = cluster->value("server", "");
  if (c.server.empty()) return common::fail("cluster \"" + cluster_name + "\" in " + path + " has no server");
  c.insecure_skip_tls_verify = cluster->value("insecure-skip-tls-verify", false);
  auto ca = data_or_file(*cluster, "certificate-authority", dir, "clusters[" + cluster_name + "].cluster");
  if (!ca) return std::unexpected(ca.error());
  c.ca_pem = *ca;
  if (!user_name.empty()) {
    const json* user = named_entry(*doc, "users", user_name, "user");
    if (!user) return common::fail("user \"" + user_name + "\" (context \"" + c.context + "\") not found in " + path);
    std::string where = "users[" + user_name + "].user";
    auto cert = data_or_file(*user, "client-certificate", dir, where);
    if (!cert) return std::unexpected(cert.error());
    auto key = data_or_file(*user, "client-key", dir, where);
    if (!key) return std::unexpected(key.error());
    c.client_cert_pem = *cert;
    c.client_key_pem = *key;
    if (c.client_cert_pem.empty() != c.client_key_pem.empty()) {
      return common::fail(where + ": client-certificate and client-key must be given together");
    }
    c.token = user->value("token", "");
    if (user->contains("tokenFile") && (*user)["tokenFile"].is_string()) {
      fs::path p = (*user)["tokenFile"].get<std::string>();
      if (p.is_relative()) p = dir / p;
      c.token_file = p.string();
      if (auto t = common::read_file(c.token_file); !t) return common::fail(where + ".tokenFile: " + t.error().str());
    }
    if (user->contains("exec") || user->contains("auth-provider")) {
      return common::fail(where + ": exec and auth-provider credentials are not supported; use a token or client certificate");
    }
  }
  if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0) {
    return common::fail("cluster \"" + cluster_name + "\" server \"" + c.server + "\" is not an http(s) URL");
  }
  return c;
}

common::Result<ConnectionConfig> in_cluster_config(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    return common::fail("not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
  }
  ConnectionConfig c;
  c.source = "in-cluster";
  c.context = "in-cluster";
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
  c.server = "https://" + h + ":" + port;
  c.token_file = (fs::path(sa_dir) / "token").string();
  if (auto t = common::read_file(c.token_file); !t) return common::fail("in-cluster token: " + t.error().str());
  auto ca = common::read_file((fs::path(sa_dir) / "ca.crt").string());
  if (!ca) return common::fail("in-cluster CA: " + ca.error().str());
  c.ca_pem = *ca;
  if (auto ns = common::read_file((fs::path(sa_dir) / "namespace").string()); ns) {
    c.ns = *ns;
    while (!c.ns.empty() && (c.ns.back() == '\n' || c.ns.back() == ' ')) c.ns.pop_back();
  }
  return c;
}

common::Result<ConnectionConfig> resolve_connection(const std::string& kubeconfig_flag, const std::string& context_flag) {
  if (!kubeconfig_flag.empty()) return load_kubeconfig(kubeconfig_flag, context_flag);
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST"); h && *h && context_flag.empty()) return in_cluster_config();
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string first = env;
    if (auto colon = first.find(':'); colon != std::string::npos) first = first.substr(0, colon);
    return load_kubeconfig(first, context_flag);
  }
  const char* home = std::getenv("HOME");
  std::string def = std::string(home ? home : "") + "/.kube/config";
  if (!fs::exists(def)) {
    return common::fail("no kubeconfig: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a cluster");
  }
  return load_kubeconfig(def, context_flag);
}

}  // namespace kubex::kube
