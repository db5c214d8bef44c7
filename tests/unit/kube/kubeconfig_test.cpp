// ENG-3: connection settings from kubeconfig files and in-cluster service accounts.
#include "kube/client/kubeconfig.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace kubex;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("kubex-kc-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path / name) << content;
    return (path / name).string();
  }
};

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: certs
clusters:
- name: sim
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.crt
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: robot
  user:
    tokenFile: token
contexts:
- name: certs
  context: {cluster: sim, user: admin, namespace: team-a}
- name: tokens
  context: {cluster: sim, user: robot}
)";

}  // namespace

TEST(Kubeconfig, ResolvesCurrentContextWithDataAndRelativeFiles) {
  TempDir d;
  d.write("ca.crt", "CA-PEM");
  d.write("token", "tok\n");
  auto c = kube::load_kubeconfig(d.write("config", kTwoContexts));
  ASSERT_TRUE(c) << c.error().str();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "CA-PEM");  // relative to the kubeconfig's directory
  EXPECT_EQ(c->client_cert_pem, "CERT");
  EXPECT_EQ(c->client_key_pem, "KEY");
  EXPECT_EQ(c->ns, "team-a");
  EXPECT_EQ(c->context, "certs");
}

TEST(Kubeconfig, ContextOverrideSelectsTokenFileUser) {
  TempDir d;
  d.write("ca.crt", "CA-PEM");
  d.write("token", "tok\n");
  auto c = kube::load_kubeconfig(d.write("config", kTwoContexts), "tokens");
  ASSERT_TRUE(c) << c.error().str();
  EXPECT_EQ(c->token_file, (d.path / "token").string());
  EXPECT_TRUE(c->client_cert_pem.empty());
  EXPECT_EQ(c->ns, "default");
}

TEST(Kubeconfig, ClearErrorsNameTheProblem) {  // ENG-3: one clear error line
  TempDir d;
  auto missing = kube::load_kubeconfig((d.path / "nope").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().str().find("cannot read kubeconfig"), std::string::npos);
  auto garbage = kube::load_kubeconfig(d.write("garbage", "clusters: [\n"));
  ASSERT_FALSE(garbage);
  EXPECT_NE(garbage.error().str().find("invalid kubeconfig"), std::string::npos);
  d.write("ca.crt", "CA");
  d.write("token", "t");
  auto ctx = kube::load_kubeconfig(d.write("config", kTwoContexts), "other");
  ASSERT_FALSE(ctx);
  EXPECT_NE(ctx.error().str().find("context \"other\" not found"), std::string::npos);
  std::string broken = kTwoContexts;
  broken.replace(broken.find("Q0VSVA=="), 8, "abc");  // not base64 (length)
  auto bad_b64 = kube::load_kubeconfig(d.write("b64", broken));
  ASSERT_FALSE(bad_b64);
  EXPECT_NE(bad_b64.error().str().find("client-certificate-data"), std::string::npos);
}

TEST(Kubeconfig, InClusterReadsServiceAccountFiles) {
  TempDir d;
  d.write("token", "sa-token");
  d.write("ca.crt", "SA-CA");
  d.write("namespace", "kubex\n");
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = kube::in_cluster_config(d.path.string());
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(c) << c.error().str();
  EXPECT_EQ(c->server, "https://10.0.0.1:443");
  EXPECT_EQ(c->ns, "kubex");
  EXPECT_EQ(c->ca_pem, "SA-CA");
  EXPECT_EQ(c->token_file, (d.path / "token").string());
  auto outside = kube::in_cluster_config(d.path.string());
  ASSERT_FALSE(outside);
  EXPECT_NE(outside.error().str().find("KUBERNETES_SERVICE_HOST"), std::string::npos);
}
