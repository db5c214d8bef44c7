#include "sim/apiserver/http_server.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "common/x509.h"
#include "sim/apiserver/api_server.h"

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

  Impl(ApiServer& a, Credentials c, HttpServerOptions o) : api(a), creds(std::move(c)), options(std::move(o)) {}

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
    if (user) ar.user = *user;
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
      auto stream = std::make_shared<StreamFn>(std::move(out.stream));
      res.set_chunked_content_provider(out.content_type, [stream](std::size_t, httplib::DataSink& sink) {
        (*stream)([&sink](const std::string& chunk) {
          if (!sink.is_writable()) return false;
          if (chunk.empty()) return true;
          return sink.write(chunk.data(), chunk.size());
        });
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
  auto handler = [impl](const httplib::Request& req, httplib::Response& res) { impl->handle(req, res); };
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
