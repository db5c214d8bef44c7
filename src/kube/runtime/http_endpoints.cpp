#include "kube/runtime/http_endpoints.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/log.h"

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
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  std::atomic<bool> done{false};
  int port = 0;
};

common::Result<int> bind(httplib::Server& s, const BindAddress& a, const std::string& what,
                         const std::string& flag) {
  int port = a.port;
  if (port == 0) {
    port = s.bind_to_any_port(a.host);
    if (port < 0) return common::fail("cannot bind " + what + " to " + a.host + ":0 (" + flag + ")");
  } else if (!s.bind_to_port(a.host, port)) {
    return common::fail("cannot bind " + what + " to " + a.host + ":" + std::to_string(port) + " (" + flag +
                        "): address in use or not available");
  }
  return port;
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

  void serve_checks(const httplib::Request&, httplib::Response& res, bool readiness) {
    std::vector<std::pair<std::string, Check>> checks;
    {
      std::lock_guard lk(mu);
      checks = readiness ? ready : health;
    }
    CheckReport r = run_checks(checks, readiness ? "readyz" : "healthz");
    res.status = r.status;
    res.set_content(r.body, "text/plain; charset=utf-8");
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
  auto make_server = [threads] {
    auto s = std::make_unique<httplib::Server>();
    s->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // httplib's default sets SO_REUSEPORT, which lets a second process share a busy port silently; keep only
    // SO_REUSEADDR so a port in use is an error.
    s->set_socket_options([](int sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    s->set_keep_alive_max_count(100);
    s->set_keep_alive_timeout(5);
    s->set_read_timeout(10, 0);
    s->set_write_timeout(10, 0);
    return s;
  };
  if (!maddr->disabled) {
    impl->metrics.server = make_server();
    impl->metrics.server->Get("/metrics", [self](const httplib::Request&, httplib::Response& res) {
      std::string body;
      try {
        body = self->options.render_metrics ? self->options.render_metrics() : "";
      } catch (const std::exception& e) {
        res.status = 500;
        res.set_content(std::string("cannot render metrics: ") + e.what(), "text/plain");
        return;
      }
      res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
    });
    auto port = bind(*impl->metrics.server, *maddr, "metrics server", "--metrics-bind-address");
    if (!port) return std::unexpected(port.error());
    impl->metrics.port = *port;
  }
  if (!haddr->disabled) {
    impl->probes.server = make_server();
    impl->probes.server->Get("/healthz", [self](const httplib::Request& req, httplib::Response& res) {
      self->serve_checks(req, res, false);
    });
    impl->probes.server->Get("/readyz", [self](const httplib::Request& req, httplib::Response& res) {
      self->serve_checks(req, res, true);
    });
    auto port = bind(*impl->probes.server, *haddr, "health probe server", "--health-probe-bind-address");
    if (!port) {
      if (impl->metrics.server) impl->metrics.server->stop();
      return std::unexpected(port.error());
    }
    impl->probes.port = *port;
  }
  for (Served* s : {&impl->metrics, &impl->probes}) {
    if (s->server) {
      s->thread = std::thread([s] {
        s->server->listen_after_bind();
        s->done = true;
      });
    }
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
    if (!s->thread.joinable()) continue;
    // httplib's stop() is a no-op until the listener runs: wait for it (or for the thread to end).
    for (int i = 0; i < 2000 && !s->server->is_running() && !s->done; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    s->server->stop();
    s->thread.join();
  }
}

}  // namespace kubex::kube
