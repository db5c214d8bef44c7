#include "kube/runtime/http_endpoints.h"

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "net/tls_server.h"

namespace kubex::kube {

common::Result<BindAddress> parse_bind_address(const std::string& s) {
  BindAddress b;
  if (s == "0") {
    b.disabled = true;
    return b;
  }
  auto colon = s.rfind(':');
  if (colon == std::string::npos)
    return common::fail("bind address \"" + s + "\" must be HOST:PORT, :PORT or 0");
  std::string host = s.substr(0, colon), port = s.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "0.0.0.0";
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) {
    return common::fail("bind address \"" + s + "\" has an invalid port");
  }
  b.host = host;
  b.port = std::stoi(port);
  if (b.port > 65535) return common::fail("bind address \"" + s + "\" has an invalid port");
  return b;
}

CheckReport run_checks(const std::vector<std::pair<std::string, Check>>& checks,
                       const std::string& endpoint) {
  CheckReport r;
  std::string lines;
  bool failed = false;
  for (const auto& [name, check] : checks) {
    std::string why;
    try {
      why = check ? check() : "";
    } catch (const std::exception& e) {
      why = std::string("check threw: ") + e.what();
    }
    if (why.empty()) {
      lines += "[+]" + name + " ok\n";
    } else {
      failed = true;
      lines += "[-]" + name + " failed: " + why + "\n";
    }
  }
  if (failed) {
    r.status = 500;
    r.body = lines + endpoint + " check failed\n";
  } else {
    r.body = "ok";
  }
  return r;
}

namespace {

struct Served {
  std::unique_ptr<net::TlsServer> server;
  int port = 0;
};

// The endpoints' server: plain HTTP with the keep-alive and timeouts they have always had (100 requests per
// connection, 5 s idle, 10 s to read a request).
std::unique_ptr<net::TlsServer> make_server(int threads, net::RequestHandler handler) {
  net::TlsServerOptions o;
  o.workers = threads;
  o.idle_timeout_seconds = 5;
  o.read_timeout_seconds = 10;
  o.max_requests_per_connection = 100;
  return std::make_unique<net::TlsServer>(o, std::move(handler));
}

common::Result<int> bind(net::TlsServer& s, const BindAddress& a, const std::string& what,
                         const std::string& flag) {
  if (!s.bind(a.host, a.port)) {
    if (a.port == 0) return common::fail("cannot bind " + what + " to " + a.host + ":0 (" + flag + ")");
    return common::fail("cannot bind " + what + " to " + a.host + ":" + std::to_string(a.port) + " (" + flag +
                        "): address in use or not available");
  }
  return s.port();
}

// Only GET (and HEAD) of the endpoint's paths; anything else is 404 with an empty body.
bool is_get(const net::http1::Request& request, const char* path) {
  return request.path == path && (request.method == "GET" || request.method == "HEAD");
}

}  // namespace

struct HttpEndpoints::Impl {
  Options options;
  std::mutex mu;
  std::vector<std::pair<std::string, Check>> health, ready;
  Served metrics, probes;
  common::Logger log{"http"};

  static void set(std::vector<std::pair<std::string, Check>>& v, const std::string& name, Check c) {
    for (auto& [n, check] : v) {
      if (n == name) {
        check = std::move(c);
        return;
      }
    }
    v.emplace_back(name, std::move(c));
  }

  void serve_metrics(const std::shared_ptr<net::Reply>& reply) {
    std::string body;
    try {
      body = options.render_metrics ? options.render_metrics() : "";
    } catch (const std::exception& e) {
      reply->send(500, "text/plain", std::string("cannot render metrics: ") + e.what());
      return;
    }
    reply->send(200, "text/plain; version=0.0.4; charset=utf-8", body);
  }

  void serve_checks(const std::shared_ptr<net::Reply>& reply, bool readiness) {
    std::vector<std::pair<std::string, Check>> checks;
    {
      std::lock_guard lk(mu);
      checks = readiness ? ready : health;
    }
    CheckReport r = run_checks(checks, readiness ? "readyz" : "healthz");
    reply->send(r.status, "text/plain; charset=utf-8", r.body);
  }
};

HttpEndpoints::HttpEndpoints(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpEndpoints::~HttpEndpoints() {
  stop();
}

common::Result<std::unique_ptr<HttpEndpoints>> HttpEndpoints::start(Options options) {
  auto maddr = parse_bind_address(options.metrics_bind);
  if (!maddr) return common::fail("--metrics-bind-address: " + maddr.error().str());
  auto haddr = parse_bind_address(options.health_bind);
  if (!haddr) return common::fail("--health-probe-bind-address: " + haddr.error().str());
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  impl->health.emplace_back("ping", [] { return std::string(); });
  Impl* self = impl.get();
  int threads = std::max(1, impl->options.threads);
  if (!maddr->disabled) {
    impl->metrics.server =
        make_server(threads, [self](net::http1::Request& req, const std::shared_ptr<net::Reply>& reply) {
          if (is_get(req, "/metrics")) {
            self->serve_metrics(reply);
          } else {
            reply->send(404, "", "");
          }
        });
    auto port = bind(*impl->metrics.server, *maddr, "metrics server", "--metrics-bind-address");
    if (!port) return std::unexpected(port.error());
    impl->metrics.port = *port;
  }
  if (!haddr->disabled) {
    impl->probes.server =
        make_server(threads, [self](net::http1::Request& req, const std::shared_ptr<net::Reply>& reply) {
          if (is_get(req, "/healthz")) {
            self->serve_checks(reply, false);
          } else if (is_get(req, "/readyz")) {
            self->serve_checks(reply, true);
          } else {
            reply->send(404, "", "");
          }
        });
    auto port = bind(*impl->probes.server, *haddr, "health probe server", "--health-probe-bind-address");
    if (!port) return std::unexpected(port.error());
    impl->probes.port = *port;
  }
  for (Served* s : {&impl->metrics, &impl->probes}) {
    if (s->server) s->server->start();
  }
  if (impl->metrics.server) {
    impl->log.info("serving metrics", {{"address", maddr->host + ":" + std::to_string(impl->metrics.port)},
                                       {"port", impl->metrics.port},
                                       {"path", "/metrics"}});
  }
  if (impl->probes.server) {
    impl->log.info("serving health probes",
                   {{"address", haddr->host + ":" + std::to_string(impl->probes.port)},
                    {"port", impl->probes.port},
                    {"paths", {"/healthz", "/readyz"}}});
  }
  return std::unique_ptr<HttpEndpoints>(new HttpEndpoints(std::move(impl)));
}

void HttpEndpoints::add_health_check(const std::string& name, Check check) {
  std::lock_guard lk(impl_->mu);
  Impl::set(impl_->health, name, std::move(check));
}

void HttpEndpoints::add_readiness_check(const std::string& name, Check check) {
  std::lock_guard lk(impl_->mu);
  Impl::set(impl_->ready, name, std::move(check));
}

int HttpEndpoints::metrics_port() const {
  return impl_->metrics.port;
}
int HttpEndpoints::health_port() const {
  return impl_->probes.port;
}

void HttpEndpoints::stop() {
  if (!impl_) return;
  for (Served* s : {&impl_->metrics, &impl_->probes}) {
    if (s->server) s->server->stop(std::chrono::milliseconds(2000));
  }
}

}  // namespace kubex::kube
