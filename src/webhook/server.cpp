#include "webhook/server.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/json_projection.h"
#include "common/log.h"
#include "kube/runtime/http_endpoints.h"
#include "net/deadlines.h"
#include "net/elastic_threads.h"
#include "net/tls_server.h"
#include "webhook/certs.h"

namespace kubex::webhook {

using net::Reply;

namespace {

struct Route {
  Handler handler;
  HandlerOptions options;
  std::optional<common::JsonProjection> review_fields;  // from options.object_fields
};

// serve()'s Reply: keeps the answer for the caller waiting on it.
class CapturedReply : public Reply {
 public:
  bool send(int status, std::string_view content_type, std::string_view body) override {
    std::lock_guard lk(mu_);
    if (answered_) return false;
    answered_ = true;
    promise_.set_value(HttpReply{status, std::string(content_type), std::string(body), outcome_});
    return true;
  }
  bool answered() const override {
    std::lock_guard lk(mu_);
    return answered_;
  }
  void set_outcome(Outcome o) {
    std::lock_guard lk(mu_);
    if (!answered_) outcome_ = o;
  }
  std::future<HttpReply> future() { return promise_.get_future(); }

 private:
  mutable std::mutex mu_;
  bool answered_ = false;
  Outcome outcome_ = Outcome::kBadRequest;
  std::promise<HttpReply> promise_;
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
    case Outcome::kProbe:
      return "probe";
  }
  return "error";
}

struct Server::Impl : std::enable_shared_from_this<Server::Impl> {
  ServerOptions options;
  std::shared_ptr<ServingCertificate> certificate;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const Route>, std::less<>> routes;
  Observer observer;

  std::unique_ptr<net::TlsServer> tls;
  std::string host;
  int port = 0;

  net::Deadlines deadlines;
  std::mutex overrun_mu;
  std::condition_variable overrun_cv;
  int overrun = 0;                                  // handlers still running after their deadline
  std::unique_ptr<net::ElasticThreads> handler_threads;  // serve(): the threads its handlers run on
  common::Logger log{"webhook"};

  std::shared_ptr<const Route> route(std::string_view path) {
    std::lock_guard lk(mu);
    auto it = routes.find(path);
    return it == routes.end() ? nullptr : it->second;
  }

  void observe(const std::string& path, Outcome outcome, std::chrono::steady_clock::time_point start) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Observer obs;
    {
      std::lock_guard lk(mu);
      obs = observer;
    }
    if (!obs) return;
    try {
      obs(path, outcome, seconds);
    } catch (const std::exception& e) {
      log.error("admission observer threw", {{"path", path}, {"error", e.what()}});
    }
  }

  static bool deliver(const std::shared_ptr<Reply>& reply, const HttpReply& r) {
    if (auto* captured = dynamic_cast<CapturedReply*>(reply.get())) captured->set_outcome(r.outcome);
    return reply->send(r.status, r.content_type, r.body);
  }

  HttpReply failure(const Route& route, const std::string& path, const std::string& uid,
                    const std::string& why) {
    log.error("admission handler failed",
              {{"path", path}, {"uid", uid}, {"error", why}, {"failOpen", route.options.fail_open}});
    if (!route.options.fail_open) return text_reply(500, "internal error: " + why, Outcome::kError);
    auto body = encode_admission_review(uid, AdmissionResponse::allow());
    return HttpReply{200, "application/json", body ? *body : std::string(), Outcome::kError};
  }

  // The answer to a handler's response (or to its error when there is no response).
  HttpReply answer(const Route& r, const std::string& path, const std::string& uid,
                   std::optional<AdmissionResponse>& response, const std::string& error) {
    if (!response) return failure(r, path, uid, error.empty() ? "handler returned no response" : error);
    if (!r.options.mutating && response->has_patch()) {
      return failure(r, path, uid, "a validating handler returned a patch");
    }
    auto encoded = encode_admission_review(uid, *response);
    if (!encoded) return failure(r, path, uid, "cannot encode the response: " + encoded.error().str());
    Outcome outcome;
    if (response->internal_error) {
      outcome = Outcome::kError;
    } else if (response->probe) {
      outcome = Outcome::kProbe;
    } else if (!response->allowed) {
      outcome = Outcome::kDenied;
    } else if (response->has_patch()) {
      outcome = Outcome::kPatched;
    } else {
      outcome = r.options.mutating ? Outcome::kUnchanged : Outcome::kAllowed;
    }
    return HttpReply{200, "application/json", std::move(*encoded), outcome};
  }

  // Answers one admission request through `reply`, running its handler on the calling thread. When the
  // handler overruns its deadline, the deadline thread answers instead (and, for a TLS worker, `tls` gets
  // another worker until this one is back).
  void process(const std::string& path, std::string_view body, const std::shared_ptr<Reply>& reply,
               bool on_tls_worker) {
    auto start = std::chrono::steady_clock::now();
    auto r = route(path);
    if (!r) {
      deliver(reply, text_reply(404, "no admission webhook is served at " + path, Outcome::kBadRequest));
      return;
    }
    auto request = decode_admission_review(body, r->review_fields ? &*r->review_fields : nullptr);
    if (!request) {
      log.warn("invalid AdmissionReview", {{"path", path}, {"error", request.error().reason}});
      observe(path, Outcome::kBadRequest, start);
      deliver(reply, text_reply(400, request.error().message(), Outcome::kBadRequest));
      return;
    }
    const std::string uid = request->uid;
    int overrunning;
    {
      std::lock_guard lk(overrun_mu);
      overrunning = overrun;
    }
    if (overrunning >= options.max_overrun_handlers) {
      observe(path, Outcome::kError, start);
      deliver(reply, failure(*r, path, uid,
                             "too many handlers still running after their deadline (" +
                                 std::to_string(overrunning) + ")"));
      return;
    }
    net::Deadlines::Token token = 0;
    if (r->options.deadline > std::chrono::milliseconds::zero()) {
      token = deadlines.arm(start + r->options.deadline, [self = shared_from_this(), r, path, uid, reply,
                                                          start, on_tls_worker] {
        {
          std::lock_guard lk(self->overrun_mu);
          ++self->overrun;
        }
        if (on_tls_worker && self->tls) self->tls->add_worker();
        HttpReply late = self->failure(*r, path, uid,
                                       "handler did not answer within its deadline of " +
                                           std::to_string(r->options.deadline.count()) + " ms");
        self->observe(path, Outcome::kError, start);  // before answering: serve()'s caller goes on then
        deliver(reply, late);
      });
    }
    std::optional<AdmissionResponse> response;
    std::string error;
    try {
      response = r->handler(*request);
    } catch (const std::exception& e) {
      error = std::string("handler threw: ") + e.what();
    } catch (...) {
      error = "handler threw a non-standard exception";
    }
    if (token != 0 && !deadlines.cancel(token)) {
      // The deadline answered already; this handler's work is dropped.
      if (on_tls_worker && tls) tls->retire_worker();
      std::lock_guard lk(overrun_mu);
      --overrun;
      overrun_cv.notify_all();
      return;
    }
    HttpReply out = answer(*r, path, uid, response, error);
    observe(path, out.outcome, start);
    deliver(reply, out);
  }

  HttpReply serve(const std::string& path, std::string_view body) {
    auto reply = std::make_shared<CapturedReply>();
    auto answer = reply->future();
    auto r = route(path);
    if (!r || r->options.deadline <= std::chrono::milliseconds::zero()) {
      process(path, body, reply, false);
    } else {
      bool started = false;
      try {
        started = handler_threads->run([self = shared_from_this(), path, text = std::string(body), reply] {
          self->process(path, text, reply, false);
        });
      } catch (const std::exception&) {
      }
      if (!started) return failure(*r, path, "", "cannot start the handler: no thread could be started");
    }
    return answer.get();
  }

  // The TLS listener's requests: /healthz, and admission reviews by POST.
  void on_request(net::http1::Request& request, const std::shared_ptr<Reply>& reply) {
    if (request.path == "/healthz" && request.method == "GET") {
      reply->send(200, "text/plain", "ok");
    } else if (request.method == "POST") {
      process(request.path, request.body, reply, true);
    } else if (route(request.path)) {
      reply->send(405, "text/plain; charset=utf-8", "admission reviews are POSTed");
    } else {
      reply->send(404, "text/plain; charset=utf-8", "not found: " + request.path);
    }
  }
};

int server_threads_for(int cpus, std::string_view cpu_max) {
  cpus = std::max(1, cpus);
  // cgroup v2: "QUOTA PERIOD", or "max PERIOD" for no quota.
  std::string text(cpu_max);
  char quota[32] = {0};
  long period = 0;
  if (std::sscanf(text.c_str(), "%31s %ld", quota, &period) == 2 && period > 0 &&
      std::strcmp(quota, "max") != 0) {
    char* end = nullptr;
    const long q = std::strtol(quota, &end, 10);
    if (end != quota && *end == '\0' && q > 0) {
      cpus = std::min(cpus, static_cast<int>(std::max(1L, (q + period - 1) / period)));
    }
  }
  return std::clamp(cpus, 1, 8);
}

int default_server_threads() {
  int cpus = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  std::string cpu_max;
  if (std::FILE* f = std::fopen("/sys/fs/cgroup/cpu.max", "r")) {
    char line[64] = {0};
    if (std::fgets(line, sizeof line, f)) cpu_max = line;
    std::fclose(f);
  }
  return server_threads_for(cpus, cpu_max);
}

Server::Server(ServerOptions options, std::shared_ptr<ServingCertificate> certificate)
    : impl_(std::make_shared<Impl>()) {
  impl_->options = std::move(options);
  if (impl_->options.threads <= 0) impl_->options.threads = default_server_threads();
  impl_->certificate = std::move(certificate);
  // Overrunning handlers are bounded by max_overrun_handlers, the others by serve()'s callers.
  impl_->handler_threads = std::make_unique<net::ElasticThreads>(
      static_cast<std::size_t>(std::max(1, impl_->options.threads)), std::numeric_limits<std::size_t>::max());
}

Server::~Server() {
  stop();
}

void Server::handle(const std::string& path, Handler handler, HandlerOptions options) {
  std::optional<common::JsonProjection> fields;
  if (options.object_fields) fields = review_fields(*options.object_fields);
  auto route = std::make_shared<const Route>(Route{std::move(handler), options, std::move(fields)});
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
  if (impl->tls) return common::fail("the webhook server is already started");
  auto addr = kube::parse_bind_address(impl->options.bind_address);
  if (!addr) return common::fail("--webhook-bind-address: " + addr.error().str());
  if (addr->disabled) return common::fail("--webhook-bind-address: the webhook server is disabled (\"0\")");
  if (!impl->certificate) return common::fail("the webhook server has no serving certificate");
  impl->host = addr->host;

  net::TlsServerOptions to;
  to.workers = std::max(1, impl->options.threads);
  to.max_connections = std::max(1, impl->options.max_connections);
  to.idle_timeout_seconds = impl->options.keep_alive_timeout_seconds;
  to.max_requests_per_connection = std::max(1, impl->options.keep_alive_max_count);
  to.limits.max_body_bytes = impl->options.max_body_bytes;
  to.on_tls_failure = impl->options.on_tls_failure;
  std::weak_ptr<Impl> weak = impl_;
  auto setup = [cert = impl->certificate](ssl_ctx_st* ctx) -> common::Result<void> {
    auto r = cert->install(ctx);
    if (!r) return common::fail("webhook server TLS setup failed: " + r.error().str());
    return {};
  };
  auto tls = std::make_unique<net::TlsServer>(
      to, setup, [weak](net::http1::Request& req, const std::shared_ptr<Reply>& reply) {
        if (auto self = weak.lock()) {
          self->on_request(req, reply);
        } else {
          reply->send(503, "text/plain; charset=utf-8", "the webhook server is stopping");
        }
      });
  std::string where = addr->host + ":" + std::to_string(addr->port);
  if (auto bound = tls->bind(addr->host, addr->port); !bound) {
    std::string why = bound.error().str();
    if (why.starts_with("webhook server TLS setup failed")) return common::fail(why);
    return common::fail("cannot bind the webhook server to " + where +
                        " (--webhook-bind-address): address in use or not available (" + why + ")");
  }
  impl->port = tls->port();
  tls->start();
  impl->tls = std::move(tls);
  std::vector<std::string> paths;
  {
    std::lock_guard lk(impl->mu);
    for (const auto& [p, r] : impl->routes) paths.push_back(p);
  }
  impl->log.info("serving webhooks", {{"address", addr->host + ":" + std::to_string(impl->port)},
                                      {"port", impl->port},
                                      {"paths", paths},
                                      {"certDir", impl->certificate->dir()}});
  return {};
}

void Server::stop(std::chrono::milliseconds grace) {
  Impl* impl = impl_.get();
  if (impl->tls) impl->tls->stop(grace);
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
