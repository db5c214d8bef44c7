#include "sim/apiserver/credentials.h"

#include <filesystem>

#include "common/base64.h"
#include "common/file_io.h"
#include "common/hash.h"

namespace kubex::sim {

common::Result<Credentials> load_or_create_credentials(const std::string& dir) {
  namespace fs = std::filesystem;
  Credentials c;
  if (!dir.empty() && fs::exists(fs::path(dir) / "ca.crt") && fs::exists(fs::path(dir) / "token")) {
    auto rd = [&](const char* name) { return common::read_file((fs::path(dir) / name).string()); };
    auto ca_crt = rd("ca.crt"), ca_key = rd("ca.key"), srv_crt = rd("server.crt"), srv_key = rd("server.key"),
         adm_crt = rd("admin.crt"), adm_key = rd("admin.key"), token = rd("token");
    for (auto* r : {&ca_crt, &ca_key, &srv_crt, &srv_key, &adm_crt, &adm_key, &token}) {
      if (!*r) return std::unexpected(r->error());
    }
    c.ca = {*ca_crt, *ca_key};
    c.serving = {*srv_crt, *srv_key};
    c.admin = {*adm_crt, *adm_key};
    c.token = *token;
    while (!c.token.empty() && (c.token.back() == '\n' || c.token.back() == '\r')) c.token.pop_back();
    return c;
  }
  auto ca = common::generate_ca("kubex-sim-ca", 3650);
  if (!ca) return std::unexpected(ca.error());
  c.ca = *ca;
  common::CertSpec serving;
  serving.common_name = "kube-apiserver";
  serving.dns_names = {"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                       "kubernetes.default.svc.cluster.local"};
  serving.ip_addresses = {"127.0.0.1", "::1"};
  serving.valid_days = 3650;
  serving.server_auth = true;
  auto srv = common::issue_certificate(c.ca, serving);
  if (!srv) return std::unexpected(srv.error());
  c.serving = *srv;
  common::CertSpec admin;
  admin.common_name = "kubex-admin";
  admin.organizations = {"system:masters"};
  admin.valid_days = 3650;
  admin.client_auth = true;
  auto adm = common::issue_certificate(c.ca, admin);
  if (!adm) return std::unexpected(adm.error());
  c.admin = *adm;
  c.token = common::base64url_encode(common::random_bytes(32));
  if (!dir.empty()) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return common::fail("cannot create data directory " + dir + ": " + ec.message());
    struct F {
      const char* name;
      const std::string* content;
      unsigned mode;
    };
    for (const F& f : {F{"ca.crt", &c.ca.cert_pem, 0644}, F{"ca.key", &c.ca.key_pem, 0600},
                       F{"server.crt", &c.serving.cert_pem, 0644}, F{"server.key", &c.serving.key_pem, 0600},
                       F{"admin.crt", &c.admin.cert_pem, 0644}, F{"admin.key", &c.admin.key_pem, 0600},
                       F{"token", &c.token, 0600}}) {
      auto w = common::write_file_atomic((fs::path(dir) / f.name).string(), *f.content, f.mode);
      if (!w) return std::unexpected(w.error());
    }
  }
  return c;
}

common::Result<void> write_kubeconfig(const std::string& path, const std::string& server_url, const Credentials& c) {
  std::string y;
  y += "apiVersion: v1\nkind: Config\n";
  y += "clusters:\n- name: kubex-sim\n  cluster:\n    server: " + server_url + "\n";
  y += "    certificate-authority-data: " + common::base64_encode(c.ca.cert_pem) + "\n";
  y += "users:\n- name: kubex-admin\n  user:\n";
  y += "    client-certificate-data: " + common::base64_encode(c.admin.cert_pem) + "\n";
  y += "    client-key-data: " + common::base64_encode(c.admin.key_pem) + "\n";
  y += "- name: kubex-token\n  user:\n    token: " + c.token + "\n";
  y += "contexts:\n- name: kubex-sim\n  context:\n    cluster: kubex-sim\n    user: kubex-admin\n    namespace: default\n";
  y += "- name: kubex-sim-token\n  context:\n    cluster: kubex-sim\n    user: kubex-token\n    namespace: default\n";
  y += "current-context: kubex-sim\n";
  std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
  }
  return common::write_file_atomic(path, y, 0600);
}

}  // namespace kubex::sim
