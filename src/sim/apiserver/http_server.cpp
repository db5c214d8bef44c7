#include "sim/apiserver/http_server.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <thread>

#include "common/log.h"
#include "common/x509.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/faults.h"

namespace kubex::sim {

using nlohmann::json;

struct HttpServer::Impl {
  ApiServer& api;
  Credentials creds;
  HttpServerOptions options;
  std::unique_ptr<httplib::SSLServer> server;
  int port = 0;
  std::string ctx_error;
  common::Logger log{"kubex-sim.http"};
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  Impl(ApiServer& a, Credentials c, HttpServerOptions o) : api(a), creds(std::move(c)), options(std::move(o)) {}

  // SIM-8: decides the faults of one resource request; answers it here (true) with an injected error or 410,
  // else leaves `cut` set for a WATCH to be cut and, for a time cut, shortens the WATCH's timeoutSeconds.
  bool inject_fault(const httplib::Request& req, ApiRequest& ar, httplib::Response& res, FaultDecision& d) {
    auto ri = parse_request_info(ar.method, ar.path, ar.query);
    if (!ri) return false;  // discovery, OpenAPI, health and /simz/ are never faulted
    FaultRequest fr{ri->verb, ri->group, ri->resource, ri->subresource, ri->ns, ri->name,
                    req.get_header_value("User-Agent"), false};
    if (auto rv = ar.param("resourceVersion"); rv && !rv->empty() && *rv != "0") fr.has_resource_version = true;
    auto since = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    d = options.faults->decide(fr, since);
    if (d.latency.count() > 0) std::this_thread::sleep_for(d.latency);
    if (d.status == 410) {
      // Like the watch cache for a too-old resourceVersion: 200, one ERROR event with the Expired Status, end.
      std::string line = nlohmann::json{{"type", "ERROR"},
                                        {"object", FaultInjector::status_body(
                                                       410, 0, "too old resource version: " +
                                                                   ar.param("resourceVersion").value_or("") + " (" +
                                                                   std::to_string(api.store().current_rv()) + ")")}}
                             .dump() + "\n";
      res.status = 200;
      res.set_chunked_content_provider("application/json;stream=watch",
                                       [line](std::size_t, httplib::DataSink& sink) {
                                         sink.write(line.data(), line.size());
                                         sink.done();
                                         return true;
                                       });
      return true;
    }
    if (d.status != 0) {
      std::string detail = "injected by kubex-sim --faults rule " + std::to_string(d.rule);
      if (const auto& name = options.faults->config().rules[static_cast<std::size_t>(d.rule)].name; !name.empty()) {
        detail += " (" + name + ")";
      }
      res.status = d.status;
      if (d.retry_after_seconds > 0) res.set_header("Retry-After", std::to_string(d.retry_after_seconds));
      res.set_content(FaultInjector::status_body(d.status, d.retry_after_seconds, detail).dump(), "application/json");
      return true;
    }
    if (d.cut && d.cut_after.count() > 0) {
      // A time cut is the watch's own server-side timeout, shortened (whole seconds, like timeoutSeconds).
      auto secs = std::chrono::ceil<std::chrono::seconds>(d.cut_after).count();
      auto own = ar.param("timeoutSeconds");
      long long own_secs = 0;
      bool bad = false;
      try {
        if (own && !own->empty()) own_secs = std::stoll(*own);
      } catch (...) {
        bad = true;  // left to ApiServer, which answers 400
      }
      if (bad || (own_secs > 0 && own_secs <= secs)) {
        d.cut_after = std::chrono::milliseconds(0);  // the client's own timeout comes first
      } else {
        ar.query.erase("timeoutSeconds");
        ar.query.emplace("timeoutSeconds", std::to_string(secs));
        d.cut_after = std::chrono::seconds(secs);
      }
      if (d.cut_after_events == 0 && d.cut_after.count() == 0) d.cut = false;
    }
    return false;
  }

  // Wraps a WATCH stream so that it ends after the decision's events or time; `abort` asks the HTTP layer to
  // drop the connection without the last chunk (an abrupt cut).
  StreamFn cut_stream(StreamFn inner, const FaultDecision& d, std::shared_ptr<bool> abort) {
    auto faults = options.faults;
    return [inner = std::move(inner), d, abort, faults](const std::function<bool(const std::string&)>& write) {
      auto start = std::chrono::steady_clock::now();
      std::uint64_t events = 0;
      bool reached = false;
      inner([&](const std::string& chunk) {
        if (!write(chunk)) return false;
        if (!chunk.empty() && d.cut_after_events > 0 && ++events >= d.cut_after_events) {
          reached = true;
          return false;
        }
        return true;
      });
      if (!reached && d.cut_after.count() > 0 &&
          std::chrono::steady_clock::now() - start >= d.cut_after - std::chrono::milliseconds(100)) {
        reached = true;  // ended by the shortened timeoutSeconds
      }
      if (!reached) return;
      faults->cut_done(d.cut_rule, d.cut_abrupt);
      if (d.cut_abrupt) *abort = true;
    };
  }

  std::optional<UserInfo> authenticate(const httplib::Request& req) {
    std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) == 0) {
      std::string token = auth.substr(7);
      while (!token.empty() && token.back() == ' ') token.pop_back();
      if (!token.empty() && token == creds.token) {
        return UserInfo{"kubex-admin-token", "", {"system:masters", "system:authenticated"}};
      }
      return std::nullopt;  // a wrong token is rejected even if a certificate is present
    }
    if (auto cert = common::verified_peer_certificate(req.ssl)) {
      UserInfo u{cert->common_name, "", cert->organizations};
      u.groups.push_back("system:authenticated");
      return u;
    }
    return std::nullopt;
  }

  void handle(const httplib::Request& req, httplib::Response& res) {
    bool is_public = req.path == "/healthz" || req.path == "/livez" || req.path == "/readyz" || req.path == "/version";
    auto user = authenticate(req);
    if (!user && !is_public) {
      res.status = 401;
      res.set_content(unauthorized().to_status().dump(), "application/json");
      return;
    }
    ApiRequest ar;
    ar.method = req.method;
    ar.path = req.path;
    for (const auto& [k, v] : req.params) ar.query.emplace(k, v);
    ar.body = req.body;
    ar.content_type = req.get_header_value("Content-Type");
    ar.accept = req.get_header_value("Accept");
    ar.user_agent = req.get_header_value("User-Agent");
    if (user) ar.user = *user;
    if (req.path == "/simz/faults" && (req.method == "GET" || req.method == "HEAD")) {
      auto counts = options.faults ? options.faults->counts() : FaultInjector::disabled_counts();
      res.set_content(counts.dump(), "application/json");
      return;
    }
    FaultDecision fault;
    if (options.faults && inject_fault(req, ar, res, fault)) return;
    ApiResponse out = api.handle(ar);
    res.status = out.status;
    for (const auto& w : out.warnings) {
      std::string escaped;
      for (char c : w) {
        if (c == '"' || c == '\\') escaped += '\\';
        escaped += c;
      }
      res.headers.emplace("Warning", "299 - \"" + escaped + "\"");
    }
    for (const auto& [k, v] : out.headers) res.headers.emplace(k, v);
    res.headers.emplace("Audit-Id", std::to_string(reinterpret_cast<std::uintptr_t>(&res)));
    if (out.stream) {
      std::shared_ptr<bool> abort;
      if (fault.cut) {
        abort = std::make_shared<bool>(false);
        out.stream = cut_stream(std::move(out.stream), fault, abort);
      }
      auto stream = std::make_shared<StreamFn>(std::move(out.stream));
      res.set_chunked_content_provider(out.content_type, [stream, abort](std::size_t, httplib::DataSink& sink) {
        (*stream)([&sink](const std::string& chunk) {
          if (!sink.is_writable()) return false;
          if (chunk.empty()) return true;
          return sink.write(chunk.data(), chunk.size());
        });
        if (abort && *abort) return false;  // closes the connection without the terminating chunk
        sink.done();
        return true;
      });
      return;
    }
    if (req.method == "HEAD") {
      res.set_header("Content-Type", out.content_type);
      return;
    }
    res.body = std::move(out.body);
    res.set_header("Content-Type", out.content_type);
  }
};

HttpServer::HttpServer(ApiServer& api, Credentials creds, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(api, std::move(creds), std::move(options))) {
  Impl* impl = impl_.get();
  impl_->server = std::make_unique<httplib::SSLServer>([impl](SSL_CTX& ctx) {
    auto r = common::configure_server_ctx(&ctx, impl->creds.serving, impl->creds.ca.cert_pem,
                                          common::ClientCertMode::kRequest);
    if (!r) {
      impl->ctx_error = r.error().str();
      return false;
    }
    return true;
  });
  auto& s = *impl_->server;
  std::size_t threads = impl_->options.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_keep_alive_max_count(100000);
  // Idle keep-alive connections hold a worker thread and delay shutdown until they time out; clients
  // reconnect transparently.
  s.set_keep_alive_timeout(10);
  s.set_read_timeout(120, 0);
  s.set_write_timeout(120, 0);
  s.set_payload_max_length(64u << 20);
  s.set_tcp_nodelay(true);
  // At --log-level debug, one line per request: the sim's request log (what a test counts, e.g. that an absent API
  // is not polled; kube-apiserver's httplog at -v=3 is the counterpart).
  auto handler = [impl](const httplib::Request& req, httplib::Response& res) {
    impl->handle(req, res);
    if (impl->log.enabled(common::LogLevel::kDebug)) {
      impl->log.debug("request", {{"verb", req.method}, {"path", req.path}, {"code", res.status}});
    }
  };
  s.Get(".*", handler);
  s.Post(".*", handler);
  s.Put(".*", handler);
  s.Patch(".*", handler);
  s.Delete(".*", handler);
  s.Options(".*", handler);
  s.set_exception_handler([impl](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    impl->log.error("handler exception", {{"path", req.path}, {"error", what}});
    res.status = 500;
    res.set_content(internal_error(what).to_status().dump(), "application/json");
  });
}

HttpServer::~HttpServer() { stop(); }

common::Result<int> HttpServer::bind() {
  if (!impl_->server->is_valid()) {
    return common::fail("TLS setup failed: " + (impl_->ctx_error.empty() ? std::string("invalid context") : impl_->ctx_error));
  }
  int port = impl_->options.port;
  if (port == 0) {
    port = impl_->server->bind_to_any_port(impl_->options.host);
  } else if (!impl_->server->bind_to_port(impl_->options.host, port)) {
    port = -1;
  }
  if (port <= 0) {
    return common::fail("cannot listen on " + impl_->options.host + ":" + std::to_string(impl_->options.port));
  }
  impl_->port = port;
  return port;
}

void HttpServer::serve() { impl_->server->listen_after_bind(); }

void HttpServer::stop() {
  if (impl_ && impl_->server) impl_->server->stop();
}

int HttpServer::port() const { return impl_->port; }

}  // namespace kubex::sim
