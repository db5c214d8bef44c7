#include "webhook/server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/log.h"
#include "kube/runtime/http_endpoints.h"
#include "webhook/certs.h"
#include "webhook/elastic_threads.h"

namespace kubex::webhook {

namespace {

struct Route {
  Handler handler;
  HandlerOptions options;
};

// One handler invocation shared between the request thread and the handler thread.
struct Call {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false, abandoned = false;
  std::optional<AdmissionResponse> response;
  std::string error;
};

void run_handler(const Route& route, const AdmissionRequest& request, Call& call) {
  std::optional<AdmissionResponse> response;
  std::string error;
  try {
    response = route.handler(request);
  } catch (const std::exception& e) {
    error = std::string("handler threw: ") + e.what();
  } catch (...) {
    error = "handler threw a non-standard exception";
  }
  std::lock_guard lk(call.mu);
  call.response = std::move(response);
  call.error = std::move(error);
  call.done = true;
  call.cv.notify_all();
}

// httplib's task queue (one task per accepted connection) on ElasticThreads: a connection beyond the kept
// threads gets a thread of its own instead of waiting for a kept-alive connection to close. shutdown()
// serves what is queued and waits for every connection to end, like httplib::ThreadPool.
class ConnectionThreads : public httplib::TaskQueue {
 public:
  ConnectionThreads(std::size_t keep, std::size_t max) : threads_(keep, max) {}
  void enqueue(std::function<void()> fn) override { threads_.run(std::move(fn)); }
  void shutdown() override {
    threads_.shutdown();
    threads_.wait();
  }

 private:
  ElasticThreads threads_;
};

HttpReply text_reply(int status, std::string body, Outcome outcome) {
  return HttpReply{status, "text/plain; charset=utf-8", std::move(body), outcome};
}

}  // namespace

const char* outcome_label(Outcome o) {
  switch (o) {
    case Outcome::kPatched:
      return "patched";
    case Outcome::kUnchanged:
      return "unchanged";
    case Outcome::kAllowed:
      return "allowed";
    case Outcome::kDenied:
      return "denied";
    case Outcome::kError:
      return "error";
    case Outcome::kBadRequest:
      return "bad_request";
  }
  return "error";
}

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  ServerOptions options;
  std::shared_ptr<ServingCertificate> certificate;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const Route>> routes;
  Observer observer;

  std::unique_ptr<httplib::SSLServer> server;
  std::thread thread;
  std::atomic<bool> done{false};
  std::string host, ctx_error;
  int port = 0;

  std::mutex overrun_mu;
  std::condition_variable overrun_cv;
  int overrun = 0;                                  // handler threads still running after their deadline
  std::unique_ptr<ElasticThreads> handler_threads;  // the threads handlers run on (one per call in flight)
  common::Logger log{"webhook"};

  std::shared_ptr<const Route> route(const std::string& path) {
    std::lock_guard lk(mu);
    auto it = routes.find(path);
    return it == routes.end() ? nullptr : it->second;
  }

  // Runs the handler with the route's deadline. Returns the response, or sets `error`.
  std::optional<AdmissionResponse> invoke(const std::shared_ptr<const Route>& route,
                                          std::shared_ptr<const AdmissionRequest> request,
                                          std::string& error) {
    auto call = std::make_shared<Call>();
    if (route->options.deadline <= std::chrono::milliseconds::zero()) {
      run_handler(*route, *request, *call);
      error = call->error;
      return std::move(call->response);
    }
    {
      std::lock_guard lk(overrun_mu);
      if (overrun >= options.max_overrun_handlers) {
        error = "too many handlers still running after their deadline (" + std::to_string(overrun) + ")";
        return std::nullopt;
      }
    }
    try {
      bool started = handler_threads->run([self = shared_from_this(), route, request, call] {
        run_handler(*route, *request, *call);
        bool abandoned;
        {
          std::lock_guard lk(call->mu);
          abandoned = call->abandoned;
        }
        if (abandoned) {
          std::lock_guard lk(self->overrun_mu);
          --self->overrun;
          self->overrun_cv.notify_all();
        }
      });
      if (!started) {
        error = "cannot start the handler: no thread could be started";
        return std::nullopt;
      }
    } catch (const std::exception& e) {
      error = std::string("cannot start the handler: ") + e.what();
      return std::nullopt;
    }
    std::unique_lock lk(call->mu);
    if (!call->cv.wait_for(lk, route->options.deadline, [&] { return call->done; })) {
      call->abandoned = true;
      lk.unlock();
      std::lock_guard olk(overrun_mu);
      ++overrun;
      error = "handler did not answer within its deadline of " +
              std::to_string(route->options.deadline.count()) + " ms";
      return std::nullopt;
    }
    error = call->error;
    return std::move(call->response);
  }

  HttpReply failure(const Route& route, const std::string& path, const std::string& uid,
                    const std::string& why) {
    log.error("admission handler failed",
              {{"path", path}, {"uid", uid}, {"error", why}, {"failOpen", route.options.fail_open}});
    if (!route.options.fail_open) return text_reply(500, "internal error: " + why, Outcome::kError);
    auto body = encode_admission_review(uid, AdmissionResponse::allow());
    return HttpReply{200, "application/json", body ? *body : std::string(), Outcome::kError};
  }

  HttpReply process(const std::string& path, std::string_view body) {
    auto r = route(path);
    if (!r) return text_reply(404, "no admission webhook is served at " + path, Outcome::kBadRequest);
    auto request = decode_admission_review(body);
    if (!request) {
      log.warn("invalid AdmissionReview", {{"path", path}, {"error", request.error().reason}});
      return text_reply(400, request.error().message(), Outcome::kBadRequest);
    }
    std::string uid = request->uid;
    std::string error;
    auto response = invoke(r, std::make_shared<const AdmissionRequest>(std::move(*request)), error);
    if (!response) return failure(*r, path, uid, error.empty() ? "handler returned no response" : error);
    if (!r->options.mutating && response->has_patch()) {
      return failure(*r, path, uid, "a validating handler returned a patch");
    }
    auto encoded = encode_admission_review(uid, *response);
    if (!encoded) return failure(*r, path, uid, "cannot encode the response: " + encoded.error().str());
    Outcome outcome;
    if (response->internal_error) {
      outcome = Outcome::kError;
    } else if (!response->allowed) {
      outcome = Outcome::kDenied;
    } else if (response->has_patch()) {
      outcome = Outcome::kPatched;
    } else {
      outcome = r->options.mutating ? Outcome::kUnchanged : Outcome::kAllowed;
    }
    return HttpReply{200, "application/json", std::move(*encoded), outcome};
  }

  HttpReply serve(const std::string& path, std::string_view body) {
    auto start = std::chrono::steady_clock::now();
    HttpReply reply = process(path, body);
    if (reply.status != 404) {
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      Observer obs;
      {
        std::lock_guard lk(mu);
        obs = observer;
      }
      if (obs) {
        try {
          obs(path, reply.outcome, seconds);
        } catch (const std::exception& e) {
          log.error("admission observer threw", {{"path", path}, {"error", e.what()}});
        }
      }
    }
    return reply;
  }
};

Server::Server(ServerOptions options, std::shared_ptr<ServingCertificate> certificate)
    : impl_(std::make_shared<Impl>()) {
  impl_->options = std::move(options);
  impl_->certificate = std::move(certificate);
  // Overrunning handlers are bounded by max_overrun_handlers, the others by the connections.
  impl_->handler_threads = std::make_unique<ElasticThreads>(
      static_cast<std::size_t>(std::max(1, impl_->options.threads)), std::numeric_limits<std::size_t>::max());
}

Server::~Server() {
  stop();
}

void Server::handle(const std::string& path, Handler handler, HandlerOptions options) {
  auto route = std::make_shared<const Route>(Route{std::move(handler), options});
  std::lock_guard lk(impl_->mu);
  impl_->routes[path] = std::move(route);
}

void Server::set_observer(Observer observer) {
  std::lock_guard lk(impl_->mu);
  impl_->observer = std::move(observer);
}

HttpReply Server::serve(const std::string& path, std::string_view body) {
  return impl_->serve(path, body);
}

common::Result<void> Server::start() {
  Impl* impl = impl_.get();
  if (impl->server) return common::fail("the webhook server is already started");
  auto addr = kube::parse_bind_address(impl->options.bind_address);
  if (!addr) return common::fail("--webhook-bind-address: " + addr.error().str());
  if (addr->disabled) return common::fail("--webhook-bind-address: the webhook server is disabled (\"0\")");
  if (!impl->certificate) return common::fail("the webhook server has no serving certificate");
  impl->host = addr->host;
  impl->server = std::make_unique<httplib::SSLServer>([impl](SSL_CTX& ctx) {
    auto r = impl->certificate->install(&ctx);
    if (!r) impl->ctx_error = r.error().str();
    return r.has_value();
  });
  auto& s = *impl->server;
  if (!s.is_valid()) {
    return common::fail("webhook server TLS setup failed: " +
                        (impl->ctx_error.empty() ? std::string("invalid SSL context") : impl->ctx_error));
  }
  auto keep = static_cast<std::size_t>(std::max(1, impl->options.threads));
  auto most = std::max(keep, static_cast<std::size_t>(std::max(1, impl->options.max_connections)));
  s.new_task_queue = [keep, most] { return new ConnectionThreads(keep, most); };
  // Without SO_REUSEPORT (httplib's default) a port in use is an error rather than silently shared.
  s.set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.set_keep_alive_max_count(impl->options.keep_alive_max_count);
  s.set_keep_alive_timeout(impl->options.keep_alive_timeout_seconds);
  s.set_read_timeout(15, 0);
  s.set_write_timeout(15, 0);
  s.set_payload_max_length(impl->options.max_body_bytes);
  s.set_tcp_nodelay(true);
  s.Get("/healthz",
        [](const httplib::Request&, httplib::Response& res) { res.set_content("ok", "text/plain"); });
  s.Post(".*", [impl](const httplib::Request& req, httplib::Response& res) {
    HttpReply reply = impl->serve(req.path, req.body);
    res.status = reply.status;
    res.set_content(std::move(reply.body), reply.content_type.c_str());
  });
  s.set_exception_handler([impl](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    impl->log.error("webhook request failed", {{"path", req.path}, {"error", what}});
    res.status = 500;
    res.set_content("internal error: " + what, "text/plain");
  });
  int port = addr->port;
  std::string where = addr->host + ":" + std::to_string(addr->port);
  if (port == 0) {
    port = s.bind_to_any_port(addr->host);
    if (port < 0)
      return common::fail("cannot bind the webhook server to " + where + " (--webhook-bind-address)");
  } else if (!s.bind_to_port(addr->host, port)) {
    return common::fail("cannot bind the webhook server to " + where +
                        " (--webhook-bind-address): address in use or not available");
  }
  impl->port = port;
  impl->thread = std::thread([impl] {
    impl->server->listen_after_bind();
    impl->done = true;
  });
  std::vector<std::string> paths;
  {
    std::lock_guard lk(impl->mu);
    for (const auto& [p, r] : impl->routes) paths.push_back(p);
  }
  impl->log.info("serving webhooks", {{"address", addr->host + ":" + std::to_string(port)},
                                      {"port", port},
                                      {"paths", paths},
                                      {"certDir", impl->certificate->dir()}});
  return {};
}

void Server::stop(std::chrono::milliseconds grace) {
  Impl* impl = impl_.get();
  if (impl->thread.joinable()) {
    // httplib's stop() is a no-op until the listener runs: wait for it (or for the thread to end).
    for (int i = 0; i < 2000 && !impl->server->is_running() && !impl->done; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    impl->server->stop();
    impl->thread.join();
  }
  std::unique_lock lk(impl->overrun_mu);
  impl->overrun_cv.wait_for(lk, grace, [impl] { return impl->overrun == 0; });
  lk.unlock();
  impl->handler_threads->shutdown();
}

const std::string& Server::host() const {
  return impl_->host;
}

int Server::port() const {
  return impl_->port;
}

}  // namespace kubex::webhook
