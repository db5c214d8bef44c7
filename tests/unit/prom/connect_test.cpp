// connect(): option validation (SPEC §1.6: spec.prometheus.url is an absolute http(s) URL, requestTimeout
// > 0) without any network I/O, and how the URL is taken apart.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/x509.h"
#include "prom/client.h"
#include "prom/endpoint.h"

namespace kubex::prom {
namespace {

using namespace std::chrono_literals;

std::string connect_error(const Options& o) {
  auto c = connect(o);
  EXPECT_FALSE(c.has_value()) << o.url;
  return c ? std::string() : c.error().str();
}

TEST(ParseEndpoint, TakesTheUrlApart) {
  struct Case {
    const char* url;
    bool https;
    const char* host;
    int port;
    const char* path;
    const char* query_url;
  };
  const Case cases[] = {
      {"http://prom.kubex.svc:9090", false, "prom.kubex.svc", 9090, "", "http://prom.kubex.svc:9090/api/v1/query"},
      {"http://kubex-prometheus-server.kubex.svc", false, "kubex-prometheus-server.kubex.svc", 80, "",
       "http://kubex-prometheus-server.kubex.svc/api/v1/query"},
      {"https://h/prometheus", true, "h", 443, "/prometheus", "https://h/prometheus/api/v1/query"},
      {"https://h:8443/a/b//", true, "h", 8443, "/a/b", "https://h:8443/a/b/api/v1/query"},
      {"http://127.0.0.1:9090/", false, "127.0.0.1", 9090, "", "http://127.0.0.1:9090/api/v1/query"},
      {"http://[::1]:9090", false, "::1", 9090, "", "http://[::1]:9090/api/v1/query"},
      {"HTTPS://H", true, "H", 443, "", "HTTPS://H/api/v1/query"},
  };
  for (const auto& c : cases) {
    auto ep = parse_endpoint(c.url);
    ASSERT_TRUE(ep.has_value()) << c.url << ": " << ep.error().str();
    EXPECT_EQ(ep->https, c.https) << c.url;
    EXPECT_EQ(ep->host, c.host) << c.url;
    EXPECT_EQ(ep->port, c.port) << c.url;
    EXPECT_EQ(ep->path, c.path) << c.url;
    EXPECT_EQ(ep->query_url(), c.query_url) << c.url;
  }
}

// SPEC §1.6: "absolute http(s) URL".
TEST(Connect, RejectsUrlsThatAreNotAbsoluteHttp) {
  const std::pair<const char*, const char*> cases[] = {
      {"", R"(spec.prometheus.url: "" is not an absolute http:// or https:// URL)"},
      {"prom:9090", R"(spec.prometheus.url: "prom:9090" is not an absolute http:// or https:// URL)"},
      {"ftp://h", R"(spec.prometheus.url: "ftp://h" is not an absolute http:// or https:// URL)"},
      {"/api", R"(spec.prometheus.url: "/api" is not an absolute http:// or https:// URL)"},
      {"http://", R"(spec.prometheus.url: "http://" has no host)"},
      {"http://:9090", R"(spec.prometheus.url: "http://:9090" has no host)"},
      {"http://h:0", R"(spec.prometheus.url: "http://h:0" has an invalid port)"},
      {"http://h:65536", R"(spec.prometheus.url: "http://h:65536" has an invalid port)"},
      {"http://h:x", R"(spec.prometheus.url: "http://h:x" has an invalid port)"},
      {"http://h:", R"(spec.prometheus.url: "http://h:" has an invalid port)"},
      {"http://h h", R"(spec.prometheus.url: "http://h h" has an invalid host)"},
      {"http://u:p@h", R"(spec.prometheus.url: "http://u:p@h" must not hold user information (use a bearer token file))"},
      {"http://h/?a=b", R"(spec.prometheus.url: "http://h/?a=b" must not have a query or a fragment)"},
      {"http://h#x", R"(spec.prometheus.url: "http://h#x" must not have a query or a fragment)"},
      {"http://[::1", R"(spec.prometheus.url: "http://[::1" has an unterminated IPv6 address)"},
  };
  for (const auto& [url, want] : cases) {
    Options o;
    o.url = url;
    EXPECT_EQ(connect_error(o), want);
  }
}

// SPEC §1.6: requestTimeout > 0.
TEST(Connect, RejectsANonPositiveTimeout) {
  Options o;
  o.url = "http://127.0.0.1:9090";
  o.timeout = 0ms;
  EXPECT_EQ(connect_error(o), "spec.prometheus.requestTimeout: must be > 0, got 0s");
  o.timeout = -1000ms;
  EXPECT_EQ(connect_error(o), "spec.prometheus.requestTimeout: must be > 0, got -1s");
}

TEST(Connect, RejectsAnUnreadableOrNonPemCaFile) {
  Options o;
  o.url = "https://127.0.0.1:9090";
  o.ca_file = "/nonexistent/ca.pem";
  EXPECT_EQ(connect_error(o), "Prometheus CA file: cannot open /nonexistent/ca.pem: No such file or directory");
  std::string path = testing::TempDir() + "prom-not-pem.txt";
  std::ofstream(path) << "not a certificate\n";
  o.ca_file = path;
  EXPECT_EQ(connect_error(o), "Prometheus CA file " + path + " holds no valid PEM certificate");
  std::remove(path.c_str());
}

TEST(Connect, AcceptsValidOptionsWithoutNetworkIo) {
  auto ca = common::generate_ca("prom-test-ca", 1);
  ASSERT_TRUE(ca.has_value());
  std::string path = testing::TempDir() + "prom-ca.pem";
  std::ofstream(path) << ca->cert_pem;
  Options o;
  o.url = "https://prometheus.invalid/prom";  // never resolved by connect()
  o.timeout = 1500ms;
  o.ca_file = path;
  o.bearer_token_file = "/nonexistent/token";  // read by the first query, not here
  auto c = connect(o);
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_EQ((*c)->options().url, o.url);
  EXPECT_EQ((*c)->options().timeout, 1500ms);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kubex::prom
