// The engine's admission webhook server against a running kubex-sim over TLS (issue 5 part 3, issue 6
// part 4): kubex-sim calls handlers through registered configurations with the self-signed caBundle,
// dryRun reaches handlers, fail-open answers admit, cert-dir rotation is served on the next handshake,
// registration is idempotent and removes a disabled early configuration, and the registrar retries.
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/err.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "api/keys.h"
#include "common/base64.h"
#include "common/file_io.h"
#include "common/x509.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"
#include "sim_process.h"
#include "webhook/certs.h"
#include "webhook/registrar.h"
#include "webhook/registration.h"
#include "webhook/server.h"

using namespace kubex;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

std::shared_ptr<kube::Client> connect(const std::string& kubeconfig, int max_retries = 5) {
  auto cfg = kube::load_kubeconfig(kubeconfig, "");
  EXPECT_TRUE(cfg.has_value()) << (cfg ? "" : cfg.error().str());
  kube::ClientOptions opts;
  opts.max_retries = max_retries;
  opts.timeout = 10s;
  if (max_retries == 0) opts.timeout = 1s;
  auto c = kube::Client::create(*cfg, opts);
  EXPECT_TRUE(c.has_value());
  return *c;
}

json pod(const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

json config_map(const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"data", {{"k", "v"}}}};
}

std::string labels_of(const json& obj, const std::string& key) {
  if (!obj.contains("metadata") || !obj["metadata"].contains("labels")) return "";
  return obj["metadata"]["labels"].value(key, "");
}

// A test webhook configuration pointing at one path of the server.
json test_config(bool mutating, const std::string& name, const std::string& url, const std::string& ca_pem,
                 const std::string& resource, json operations, const std::string& failure_policy = "Fail") {
  json w = {{"name", name + ".test.kubex.ai"},
            {"clientConfig", {{"url", url}, {"caBundle", common::base64_encode(ca_pem)}}},
            {"rules",
             {{{"apiGroups", {""}},
               {"apiVersions", {"v1"}},
               {"operations", operations},
               {"resources", {resource}}}}},
            {"failurePolicy", failure_policy},
            {"sideEffects", "None"},
            {"admissionReviewVersions", {"v1"}},
            {"timeoutSeconds", 10}};
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration"},
          {"metadata", {{"name", name}}},
          {"webhooks", json::array({w})}};
}

webhook::AdmissionResponse label_with(const webhook::AdmissionRequest& req, const std::string& key,
                                      const std::string& value) {
  json after = *req.object;
  after["metadata"]["labels"][key] = value;
  webhook::AdmissionResponse r;
  r.set_patch(json::diff(*req.object, after));
  return r;
}

std::set<std::string> names_in(kube::Client& c, const std::string& collection) {
  std::set<std::string> out;
  auto r =
      c.list(collection, {}, [&](json&& item) { out.insert(item["metadata"]["name"].get<std::string>()); });
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
  return out;
}

// The CN of the certificate a fresh TLS handshake with 127.0.0.1:port presents.
std::string served_common_name(int port) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  BIO* bio = BIO_new_ssl_connect(ctx);
  std::string target = "127.0.0.1:" + std::to_string(port);
  BIO_set_conn_hostname(bio, target.c_str());
  std::string cn;
  if (BIO_do_connect(bio) == 1) {
    SSL* ssl = nullptr;
    BIO_get_ssl(bio, &ssl);
    X509* peer = ssl ? SSL_get1_peer_certificate(ssl) : nullptr;
    if (peer) {
      if (auto info = common::certificate_info(peer)) cn = info->common_name;
      X509_free(peer);
    }
  }
  BIO_free_all(bio);
  SSL_CTX_free(ctx);
  ERR_clear_error();
  return cn;
}

struct Started {
  webhook::SelfSigned certs;
  std::unique_ptr<webhook::Server> server;
  std::string base_url;
};

Started start_self_signed(const std::function<void(webhook::Server&)>& install) {
  Started s;
  webhook::SelfSignedOptions o;
  o.extra_hosts = {"127.0.0.1"};
  auto gen = webhook::generate_self_signed(o);
  EXPECT_TRUE(gen.has_value());
  s.certs = *gen;
  auto cert = webhook::ServingCertificate::from_pem(s.certs.serving);
  EXPECT_TRUE(cert.has_value());
  webhook::ServerOptions so;
  so.bind_address = "127.0.0.1:0";
  so.threads = 4;
  so.keep_alive_timeout_seconds = 1;  // stop() waits for idle keep-alive connections
  s.server = std::make_unique<webhook::Server>(so, *cert);
  install(*s.server);
  auto r = s.server->start();
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
  s.base_url = webhook::webhook_base_url(s.server->host(), s.server->port());
  return s;
}

const std::string kPods = "/api/v1/namespaces/default/pods";
const std::string kConfigMaps = "/api/v1/namespaces/default/configmaps";

}  // namespace

// kubex-sim calls the server (self-signed certificate, caBundle) for a patching pod handler and a denying
// ConfigMap handler; dryRun=All reaches the handler as dry_run (WHH-1 relies on it).
TEST(WebhookServerIt, SimCallsPatchingAndDenyingHandlers) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto client = connect(sim.kubeconfig());
  std::mutex mu;
  std::vector<bool> dry_runs;
  std::vector<std::string> users;
  auto s = start_self_signed([&](webhook::Server& server) {
    server.handle("/label-pods", [&](const webhook::AdmissionRequest& req) {
      {
        std::lock_guard lk(mu);
        dry_runs.push_back(req.dry_run);
        users.push_back(req.user_info.username);
      }
      EXPECT_EQ(req.kind.kind, "Pod");
      EXPECT_EQ(req.operation, webhook::Operation::kCreate);
      EXPECT_EQ(req.ns, "default");
      return label_with(req, "kubex-test", "mutated");
    });
    webhook::HandlerOptions v;
    v.mutating = false;
    v.fail_open = false;
    server.handle(
        "/deny-labelled",
        [](const webhook::AdmissionRequest& req) {
          if (labels_of(*req.object, "deny") == "yes") {
            return webhook::AdmissionResponse::deny(422, "Invalid",
                                                    "metadata.labels.deny: denied by the test");
          }
          return webhook::AdmissionResponse::allow();
        },
        v);
  });
  ASSERT_TRUE(client->create(
      webhook::mutating_configuration_path(),
      test_config(true, "it-mutate", s.base_url + "/label-pods", s.certs.ca.cert_pem, "pods", {"CREATE"})));
  ASSERT_TRUE(client->create(webhook::validating_configuration_path(),
                             test_config(false, "it-validate", s.base_url + "/deny-labelled",
                                         s.certs.ca.cert_pem, "configmaps", {"CREATE", "UPDATE"})));

  auto created = client->create(kPods, pod("p1"));
  ASSERT_TRUE(created.has_value()) << created.error().str();
  EXPECT_EQ(labels_of(*created, "kubex-test"), "mutated");

  kube::WriteOptions dry;
  dry.dry_run = true;
  auto dry_created = client->create(kPods, pod("p-dry"), dry);
  ASSERT_TRUE(dry_created.has_value()) << dry_created.error().str();
  EXPECT_EQ(labels_of(*dry_created, "kubex-test"), "mutated");
  EXPECT_TRUE(client->get(kPods + "/p-dry").error().not_found());
  {
    std::lock_guard lk(mu);
    EXPECT_EQ(dry_runs, (std::vector<bool>{false, true}));
    ASSERT_FALSE(users.empty());
    EXPECT_FALSE(users[0].empty());
  }

  auto denied = client->create(kConfigMaps, config_map("cm-denied", {{"deny", "yes"}}));
  ASSERT_FALSE(denied.has_value());
  EXPECT_EQ(denied.error().code, 422);
  EXPECT_NE(denied.error().message.find("metadata.labels.deny: denied by the test"), std::string::npos)
      << denied.error().message;
  auto allowed = client->create(kConfigMaps, config_map("cm-ok"));
  ASSERT_TRUE(allowed.has_value()) << allowed.error().str();
  // UPDATE goes through the same validating handler.
  json upd = *allowed;
  upd["metadata"]["labels"]["deny"] = "yes";
  auto updated = client->update(kConfigMaps + "/cm-ok", upd);
  ASSERT_FALSE(updated.has_value());
  EXPECT_EQ(updated.error().code, 422);
}

// ADM-2: a mutation handler that throws or overruns still admits, even under failurePolicy Fail.
TEST(WebhookServerIt, FailOpenHandlersStillAdmit) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto client = connect(sim.kubeconfig());
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto s = start_self_signed([&](webhook::Server& server) {
    server.handle("/throws", [](const webhook::AdmissionRequest&) -> webhook::AdmissionResponse {
      throw std::logic_error("bug");
    });
    webhook::HandlerOptions slow;
    slow.deadline = 200ms;
    server.handle(
        "/slow",
        [released](const webhook::AdmissionRequest& req) {
          released.wait();
          return label_with(req, "too", "late");
        },
        slow);
  });
  ASSERT_TRUE(client->create(webhook::mutating_configuration_path(),
                             test_config(true, "it-throws", s.base_url + "/throws", s.certs.ca.cert_pem,
                                         "pods", {"CREATE"}, "Fail")));
  auto p = client->create(kPods, pod("p-throw"));
  ASSERT_TRUE(p.has_value()) << p.error().str();
  EXPECT_TRUE(client->get(kPods + "/p-throw").has_value());

  ASSERT_TRUE(client->create(
      webhook::mutating_configuration_path(),
      test_config(true, "it-slow", s.base_url + "/slow", s.certs.ca.cert_pem, "pods", {"CREATE"}, "Fail")));
  auto start = std::chrono::steady_clock::now();
  auto q = client->create(kPods, pod("p-slow"));
  ASSERT_TRUE(q.has_value()) << q.error().str();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 8s);  // answered at the handler's deadline
  EXPECT_EQ(labels_of(*q, "too"), "");
  release.set_value();
  s.server->stop();
}

// ENG-3 --cert-dir: files rotated under a running server are served on the next handshake, kubex-sim keeps
// calling it (same CA), and a broken pair keeps the previous certificate.
TEST(WebhookServerIt, CertDirHotReload) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto client = connect(sim.kubeconfig());
  fs::path dir = fs::path(sim.dir()) / "certs";
  fs::create_directories(dir);
  auto ca = common::generate_ca("it-ca", 2);
  ASSERT_TRUE(ca.has_value());
  auto issue = [&](const std::string& cn) {
    common::CertSpec spec;
    spec.common_name = cn;
    spec.ip_addresses = {"127.0.0.1"};
    spec.server_auth = true;
    spec.valid_days = 2;
    return *common::issue_certificate(*ca, spec);
  };
  auto write = [&](const common::PemPair& p) {
    ASSERT_TRUE(common::write_file_atomic((dir / "tls.crt").string(), p.cert_pem, 0644).has_value());
    ASSERT_TRUE(common::write_file_atomic((dir / "tls.key").string(), p.key_pem, 0600).has_value());
  };
  write(issue("first"));
  auto cert = webhook::ServingCertificate::from_dir(dir.string());
  ASSERT_TRUE(cert.has_value()) << cert.error().str();
  webhook::ServerOptions so;
  so.bind_address = "127.0.0.1:0";
  so.threads = 4;
  so.keep_alive_timeout_seconds = 1;  // stop() waits for idle keep-alive connections
  webhook::Server server(so, *cert);
  server.handle("/label",
                [](const webhook::AdmissionRequest& req) { return label_with(req, "served", "yes"); });
  ASSERT_TRUE(server.start().has_value());
  std::string base = webhook::webhook_base_url(server.host(), server.port());
  ASSERT_TRUE(
      client->create(webhook::mutating_configuration_path(),
                     test_config(true, "it-certdir", base + "/label", ca->cert_pem, "pods", {"CREATE"})));
  EXPECT_EQ(served_common_name(server.port()), "first");
  auto p1 = client->create(kPods, pod("p-first"));
  ASSERT_TRUE(p1.has_value()) << p1.error().str();
  EXPECT_EQ(labels_of(*p1, "served"), "yes");

  write(issue("second"));
  EXPECT_EQ(served_common_name(server.port()), "second");
  auto p2 = client->create(kPods, pod("p-second"));
  ASSERT_TRUE(p2.has_value()) << p2.error().str();
  EXPECT_EQ(labels_of(*p2, "served"), "yes");

  auto broken_cert = issue("third"), other = issue("fourth");
  write({broken_cert.cert_pem, other.key_pem});
  EXPECT_EQ(served_common_name(server.port()), "second");
  auto p3 = client->create(kPods, pod("p-third"));
  ASSERT_TRUE(p3.has_value()) << p3.error().str();
  EXPECT_EQ(labels_of(*p3, "served"), "yes");
  server.stop();
}

// ADM-1 / ENG-3 --register-webhooks: the engine's configurations are created once, kubex-sim calls both
// passes at their paths, a second registration changes nothing, and disabling the early pass removes it.
TEST(WebhookServerIt, RegistrationIsIdempotentAndRemovesDisabledEarly) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto client = connect(sim.kubeconfig());
  auto s = start_self_signed([](webhook::Server& server) {
    server.handle(api::keys::kLatePath,
                  [](const webhook::AdmissionRequest& r) { return label_with(r, "late", "yes"); });
    server.handle(api::keys::kEarlyPath,
                  [](const webhook::AdmissionRequest& r) { return label_with(r, "early", "yes"); });
  });
  webhook::RegistrationOptions o;
  o.base_url = s.base_url;
  o.early_enabled = true;
  o.ca_bundle_pem = s.certs.ca.cert_pem;
  auto first = webhook::register_webhooks(*client, o);
  ASSERT_TRUE(first.has_value()) << first.error().str();
  EXPECT_EQ(first->created.size(), 3u);
  const std::set<std::string> both = {api::keys::kEarlyWebhookConfig, api::keys::kLateWebhookConfig};
  EXPECT_EQ(names_in(*client, webhook::mutating_configuration_path()), both);
  EXPECT_EQ(names_in(*client, webhook::validating_configuration_path()),
            std::set<std::string>{api::keys::kValidatingWebhookConfig});
  auto p = client->create(kPods, pod("p-both"));
  ASSERT_TRUE(p.has_value()) << p.error().str();
  EXPECT_EQ(labels_of(*p, "early"), "yes");
  EXPECT_EQ(labels_of(*p, "late"), "yes");

  auto rv_before = client->get(webhook::mutating_configuration_path(api::keys::kLateWebhookConfig));
  ASSERT_TRUE(rv_before.has_value());
  auto again = webhook::register_webhooks(*client, o);
  ASSERT_TRUE(again.has_value()) << again.error().str();
  EXPECT_TRUE(again->created.empty());
  EXPECT_TRUE(again->updated.empty());
  EXPECT_EQ(again->unchanged.size(), 3u);
  EXPECT_EQ(names_in(*client, webhook::mutating_configuration_path()), both);
  auto rv_after = client->get(webhook::mutating_configuration_path(api::keys::kLateWebhookConfig));
  EXPECT_EQ((*rv_before)["metadata"]["resourceVersion"], (*rv_after)["metadata"]["resourceVersion"]);

  // Someone edits our configuration (a selector, another URL): registration restores it.
  json edited = *rv_after;
  edited["webhooks"][0]["clientConfig"]["url"] = "https://127.0.0.1:1/elsewhere";
  edited["webhooks"][0]["objectSelector"] = {{"matchLabels", {{"x", "y"}}}};
  ASSERT_TRUE(client->update(webhook::mutating_configuration_path(api::keys::kLateWebhookConfig), edited));
  auto restored = webhook::register_webhooks(*client, o);
  ASSERT_TRUE(restored.has_value());
  EXPECT_EQ(restored->updated, std::vector<std::string>{api::keys::kLateWebhookConfig});
  auto late = client->get(webhook::mutating_configuration_path(api::keys::kLateWebhookConfig));
  EXPECT_EQ((*late)["webhooks"][0]["clientConfig"]["url"], s.base_url + api::keys::kLatePath);
  EXPECT_TRUE((*late)["webhooks"][0].value("objectSelector", json::object()).empty());

  o.early_enabled = false;
  auto disabled = webhook::register_webhooks(*client, o);
  ASSERT_TRUE(disabled.has_value()) << disabled.error().str();
  EXPECT_EQ(disabled->deleted, std::vector<std::string>{api::keys::kEarlyWebhookConfig});
  EXPECT_EQ(names_in(*client, webhook::mutating_configuration_path()),
            std::set<std::string>{api::keys::kLateWebhookConfig});
  auto q = client->create(kPods, pod("p-late"));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(labels_of(*q, "early"), "");
  EXPECT_EQ(labels_of(*q, "late"), "yes");
  // Without a CA (a cert dir without ca.crt) the registered caBundle is kept.
  o.ca_bundle_pem.reset();
  auto keep = webhook::register_webhooks(*client, o);
  ASSERT_TRUE(keep.has_value());
  EXPECT_EQ(keep->unchanged.size(), 2u);
  EXPECT_TRUE(keep->deleted.empty());
}

// ENG-3 --self-signed-webhook without --register-webhooks: only caBundle of existing configurations is
// patched (kubex-sim fails the TLS handshake with a wrong CA and succeeds after the patch).
TEST(WebhookServerIt, PatchCaBundlesOfExistingConfigurations) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto client = connect(sim.kubeconfig());
  auto s = start_self_signed([](webhook::Server& server) {
    server.handle(api::keys::kLatePath,
                  [](const webhook::AdmissionRequest& r) { return label_with(r, "late", "yes"); });
  });
  auto other = webhook::generate_self_signed({});
  ASSERT_TRUE(other.has_value());
  webhook::RegistrationOptions o;
  o.base_url = s.base_url;
  o.ca_bundle_pem = other->ca.cert_pem;  // the wrong CA
  ASSERT_TRUE(webhook::register_webhooks(*client, o).has_value());
  auto before = client->create(kPods, pod("p-wrong-ca"));
  ASSERT_TRUE(before.has_value()) << before.error().str();  // failurePolicy Ignore admits it
  EXPECT_EQ(labels_of(*before, "late"), "");

  auto patched = webhook::patch_ca_bundles(*client, s.certs.ca.cert_pem);
  ASSERT_TRUE(patched.has_value()) << patched.error().str();
  EXPECT_EQ(patched->missing, std::vector<std::string>{api::keys::kEarlyWebhookConfig});
  EXPECT_EQ(patched->updated.size(), 2u);
  auto after = client->create(kPods, pod("p-right-ca"));
  ASSERT_TRUE(after.has_value()) << after.error().str();
  EXPECT_EQ(labels_of(*after, "late"), "yes");
  auto again = webhook::patch_ca_bundles(*client, s.certs.ca.cert_pem);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->unchanged.size(), 2u);
  EXPECT_EQ(names_in(*client, webhook::mutating_configuration_path()),
            std::set<std::string>{api::keys::kLateWebhookConfig});  // nothing created
}

// ENG-2: registration retries with back-off while the API server is unreachable, then succeeds.
TEST(WebhookServerIt, RegistrarRetriesUntilTheApiAnswers) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  kubex::testing::TcpProxy proxy(sim.port());
  proxy.cut();
  std::string kc =
      kubex::testing::kubeconfig_with_port(sim.kubeconfig(), proxy.port(), sim.dir() + "/proxied");
  auto client = connect(kc, 0);
  webhook::RegistrarOptions ro;
  ro.registration.base_url = "https://127.0.0.1:9";
  ro.registration.ca_bundle_pem = webhook::generate_self_signed({})->ca.cert_pem;
  ro.backoff_base = 20ms;
  ro.backoff_cap = 100ms;
  webhook::Registrar registrar(client, ro);
  registrar.start();
  EXPECT_FALSE(registrar.wait_succeeded(600ms));
  EXPECT_GE(registrar.attempts(), 2);
  proxy.restore();
  EXPECT_TRUE(registrar.wait_succeeded(20s));
  registrar.stop();
  auto direct = connect(sim.kubeconfig());
  EXPECT_EQ(names_in(*direct, webhook::mutating_configuration_path()),
            std::set<std::string>{api::keys::kLateWebhookConfig});
}
