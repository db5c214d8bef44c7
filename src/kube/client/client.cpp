#include "kube/client/client.h"

#include <httplib.h>

#include <csignal>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "common/file_io.h"
#include "common/http_reuse.h"
#include "common/httplib_socket.h"
#include "common/x509.h"

namespace kubex::kube {

using nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

std::string ApiStatus::str() const {
  if (code == 0) return message.empty() ? reason : message;
  std::string s = message.empty() ? reason : message;
  return s + " (HTTP " + std::to_string(code) + (reason.empty() ? "" : ", " + reason) + ")";
}

std::string resource_path(const std::string& group, const std::string& version, const std::string& plural,
                          const std::string& ns, const std::string& name, const std::string& sub) {
  std::string p = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (!ns.empty()) p += "/namespaces/" + ns;
  p += "/" + plural;
  if (!name.empty()) p += "/" + name;
  if (!sub.empty()) p += "/" + sub;
  return p;
}

namespace {

// Token bucket: `qps` tokens per second, at most `burst` stored.
class RateLimiter {
 public:
  RateLimiter(double qps, int burst) : qps_(qps), burst_(burst), tokens_(burst), last_(SteadyClock::now()) {}
  void acquire() {
    if (qps_ <= 0) return;
    std::unique_lock lk(mu_);
    while (true) {
      auto now = SteadyClock::now();
      tokens_ = std::min<double>(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
      last_ = now;
      if (tokens_ >= 1) {
        tokens_ -= 1;
        return;
      }
      auto wait = std::chrono::duration<double>((1 - tokens_) / qps_);
      lk.unlock();
      std::this_thread::sleep_for(wait);
      lk.lock();
    }
  }

 private:
  std::mutex mu_;
  double qps_;
  int burst_;
  double tokens_;
  SteadyClock::time_point last_;
};

ApiStatus status_from(int code, const std::string& body) {
  ApiStatus s;
  s.code = code;
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.value("kind", "") == "Status") {
    s.reason = j.value("reason", "");
    s.message = j.value("message", "");
    if (j.contains("details") && j["details"].is_object()) s.retry_after_seconds = j["details"].value("retryAfterSeconds", 0);
  } else {
    s.message = body.substr(0, 500);
  }
  if (s.reason.empty()) {
    switch (code) {
      case 400: s.reason = "BadRequest"; break;
      case 401: s.reason = "Unauthorized"; break;
      case 403: s.reason = "Forbidden"; break;
      case 404: s.reason = "NotFound"; break;
      case 405: s.reason = "MethodNotAllowed"; break;
      case 409: s.reason = "Conflict"; break;
      case 410: s.reason = "Gone"; break;
      case 415: s.reason = "UnsupportedMediaType"; break;
      case 422: s.reason = "Invalid"; break;
      case 429: s.reason = "TooManyRequests"; break;
      default: s.reason = code >= 500 ? "InternalError" : "Unknown";
    }
  }
  if (s.message.empty()) s.message = s.reason;
  return s;
}

std::string with_query(const std::string& path, const std::vector<std::pair<std::string, std::string>>& q) {
  std::string out = path;
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [k, v] : q) {
    if (v.empty()) continue;
    out += sep;
    out += k + "=" + httplib::detail::encode_query_param(v);
    sep = '&';
  }
  return out;
}

}  // namespace

// A lookup directory for OpenSSL that cannot exist: nobody can create entries under /proc.
constexpr const char* kNoCaDirectory = "/proc/kubex-no-ca-directory";

struct Client::Impl {
  ConnectionConfig config;
  ClientOptions options;
  bool https = true;
  std::string host;
  int port = 443;
  common::X509Ptr cert;
  common::EvpKeyPtr key;
  common::X509StorePtr trust;  // what the server certificate must chain to, shared by every connection
  RateLimiter limiter;
  std::mutex pool_mu;
  common::IdlePool<httplib::ClientImpl> idle;
  std::mutex token_mu;
  std::string token;
  SteadyClock::time_point token_read{};
  RequestObserver observer;
  std::mt19937_64 rng{std::random_device{}()};
  std::mutex rng_mu;

  Impl(ConnectionConfig c, ClientOptions o)
      : config(std::move(c)),
        options(std::move(o)),
        limiter(options.qps, options.burst),
        idle(16, options.idle_connection_timeout) {}

  std::string bearer() {
    if (config.token_file.empty()) return config.token;
    std::lock_guard lk(token_mu);
    auto now = SteadyClock::now();
    if (token.empty() || now - token_read > std::chrono::minutes(1)) {  // service-account tokens rotate
      if (auto t = common::read_file(config.token_file); t) {
        token = *t;
        while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
      }
      token_read = now;
    }
    return token;
  }

  std::unique_ptr<httplib::ClientImpl> make_client() {
    std::unique_ptr<httplib::ClientImpl> c;
    if (https) {
      std::unique_ptr<httplib::SSLClient> s;
      if (cert && key) {
        s = std::make_unique<httplib::SSLClient>(host, port, cert.get(), key.get());
      } else {
        s = std::make_unique<httplib::SSLClient>(host, port);
      }
      if (config.insecure_skip_tls_verify) {
        s->enable_server_certificate_verification(false);
      } else {
        s->enable_server_certificate_verification(true);
        // Every connection verifies against the one store of this client (the kubeconfig's CA, else the system
        // bundle), parsed once. cpp-httplib would otherwise load the system default paths into each
        // connection's store: the whole system bundle parsed again for every watch and pooled connection
        // (most of an idle engine's heap), and trusted besides the kubeconfig's CA, which client-go does not
        // do. A lookup directory that nobody can create (under /proc) keeps it from doing so.
        X509_STORE_up_ref(trust.get());
        s->set_ca_cert_store(trust.get());
        s->set_ca_cert_path("", kNoCaDirectory);
      }
      c = std::move(s);
    } else {
      c = std::make_unique<httplib::ClientImpl>(host, port);
    }
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    c->set_connection_timeout(options.timeout);
    c->set_read_timeout(options.timeout);
    c->set_write_timeout(options.timeout);
    return c;
  }

  // A pooled connection (reused = true) that is still fit for reuse, else a new one (common/http_reuse.h).
  struct Borrowed {
    std::shared_ptr<httplib::ClientImpl> client;
    bool reused = false;
  };
  Borrowed borrow() {
    {
      std::lock_guard lk(pool_mu);
      if (auto c = idle.take(SteadyClock::now(), common::httplib_connection_open)) return {std::move(c), true};
    }
    return {make_client(), false};
  }

  void give_back(std::shared_ptr<httplib::ClientImpl> c) {
    std::lock_guard lk(pool_mu);
    idle.put(std::move(c), SteadyClock::now());
  }

  httplib::Headers headers(const std::string& accept) {
    httplib::Headers h = {{"Accept", accept}, {"User-Agent", options.user_agent}};
    std::string t = bearer();
    if (!t.empty()) h.emplace("Authorization", "Bearer " + t);
    return h;
  }

  static bool idempotent(const std::string& method) {
    return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE";
  }

  std::chrono::milliseconds backoff(int attempt) {
    long base = options.backoff_base.count() << std::min(attempt, 16);
    base = std::min<long>(base, options.backoff_cap.count());
    std::lock_guard lk(rng_mu);
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    return std::chrono::milliseconds(static_cast<long>(base * jitter(rng)));
  }

  void observe(const std::string& method, const std::string& code) {
    if (observer) observer(method, code);
  }

  KResult<Raw> send(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& content_type) {
    bool fresh_only = false;  // a reused connection failed: the request goes once more on a new one
    for (int attempt = 0;; ++attempt) {
      limiter.acquire();
      auto [cli, reused] = fresh_only ? Borrowed{make_client(), false} : borrow();
      httplib::Request req;
      req.method = method;
      req.path = path;
      req.headers = headers("application/json");
      if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
        req.body = body;
        req.set_header("Content-Type", content_type);
      }
      httplib::Response res;
      httplib::Error err = httplib::Error::Success;
      bool ok = cli->send(req, res, err);
      if (!ok) {
        // The server closed a kept-alive connection as this request went out: not a failure of the
        // request, as long as sending it again is safe (common/http_reuse.h, like Go's Transport).
        if (reused && common::resend_on_fresh_connection(method, err != httplib::Error::Write)) {
          fresh_only = true;
          --attempt;
          continue;
        }
        observe(method, "error");
        std::string msg = httplib::to_string(err);
        if (err == httplib::Error::Connection) msg += " (cannot connect to " + host + ":" + std::to_string(port) + ")";
        if (auto* ssl = dynamic_cast<httplib::SSLClient*>(cli.get()); ssl && ssl->get_openssl_verify_result() != 0) {
          msg += ": x509: " + std::string(X509_verify_cert_error_string(ssl->get_openssl_verify_result()));
        }
        // Connection failures never reached the server: safe to retry for every verb. A read timeout may have
        // been processed, so only reads retry.
        bool retry = err == httplib::Error::Connection || (method == "GET" && err == httplib::Error::Read);
        if (retry && attempt < options.max_retries && err != httplib::Error::SSLServerVerification) {
          std::this_thread::sleep_for(backoff(attempt));
          continue;
        }
        ApiStatus s{0, err == httplib::Error::Read ? "Timeout" : "Transport",
                    method + " " + config.server + path + ": " + msg, 0};
        return std::unexpected(s);
      }
      observe(method, std::to_string(res.status));
      give_back(std::move(cli));
      if (res.status == 429 || (res.status >= 500 && res.status != 501)) {  // ENG-4 (ClientOptions)
        int ra = 0;
        if (res.has_header("Retry-After")) ra = std::atoi(res.get_header_value("Retry-After").c_str());
        if (ra <= 0) ra = status_from(res.status, res.body).retry_after_seconds;
        const bool told_to_wait = ra > 0 || (res.status == 429 && options.retry_bare_429);
        const bool bare_429 = res.status == 429 && ra <= 0 && !options.retry_bare_429;
        const int limit = told_to_wait ? std::max(options.max_retry_after_retries, options.max_retries)
                                       : (idempotent(method) && !bare_429 ? options.max_retries : 0);
        if (attempt < limit) {
          auto wait = backoff(std::min(attempt, options.max_retries));
          if (ra > 0) wait = std::max<std::chrono::milliseconds>(wait, std::chrono::seconds(std::min(ra, 60)));
          std::this_thread::sleep_for(wait);
          continue;
        }
      }
      Raw raw{res.status, std::move(res.body), {}};
      for (std::size_t i = 0; i < res.get_header_value_count("Warning"); ++i) {
        raw.warnings.push_back(res.get_header_value("Warning", i));
      }
      return raw;
    }
  }

  KResult<json> send_json(const std::string& method, const std::string& path, const std::string& body,
                          const std::string& content_type) {
    auto raw = send(method, path, body, content_type);
    if (!raw) return std::unexpected(raw.error());
    if (raw->code < 200 || raw->code >= 300) return std::unexpected(status_from(raw->code, raw->body));
    json j = json::parse(raw->body, nullptr, false);
    if (j.is_discarded()) return std::unexpected(ApiStatus{raw->code, "InvalidResponse", "response is not JSON", 0});
    return j;
  }
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

common::Result<std::shared_ptr<Client>> Client::create(ConnectionConfig config, ClientOptions options) {
  // A peer that closes a TLS connection makes the next write raise SIGPIPE, which would kill the process:
  // like Go's runtime, a process using this client ignores SIGPIPE and sees EPIPE instead.
  static std::once_flag sigpipe_once;
  std::call_once(sigpipe_once, [] { std::signal(SIGPIPE, SIG_IGN); });
  auto impl = std::make_unique<Impl>(std::move(config), std::move(options));
  const std::string& server = impl->config.server;
  std::string rest;
  if (server.rfind("https://", 0) == 0) {
    rest = server.substr(8);
  } else if (server.rfind("http://", 0) == 0) {
    impl->https = false;
    impl->port = 80;
    rest = server.substr(7);
  } else {
    return common::fail("server \"" + server + "\" is not an http(s) URL");
  }
  if (auto slash = rest.find('/'); slash != std::string::npos) rest = rest.substr(0, slash);
  if (!rest.empty() && rest[0] == '[') {
    auto close = rest.find(']');
    impl->host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') impl->port = std::atoi(rest.c_str() + close + 2);
  } else if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    impl->host = rest.substr(0, colon);
    impl->port = std::atoi(rest.c_str() + colon + 1);
  } else {
    impl->host = rest;
  }
  if (impl->host.empty() || impl->port <= 0) return common::fail("server \"" + server + "\" has no valid host:port");
  if (!impl->config.client_cert_pem.empty()) {
    auto cert = common::load_certificate(impl->config.client_cert_pem);
    if (!cert) return common::fail("client certificate: " + cert.error().str());
    auto key = common::load_private_key(impl->config.client_key_pem);
    if (!key) return common::fail("client key: " + key.error().str());
    impl->cert = std::move(*cert);
    impl->key = std::move(*key);
  }
  if (impl->https && !impl->config.insecure_skip_tls_verify) {
    if (!impl->config.ca_pem.empty()) {
      auto store = common::make_store(impl->config.ca_pem);
      if (!store) return common::fail("certificate-authority: no valid PEM certificate");
      impl->trust = std::move(*store);
    } else {
      impl->trust.reset(X509_STORE_new());
      if (!impl->trust || X509_STORE_set_default_paths(impl->trust.get()) != 1) {
        return common::fail("cannot load the system certificate authorities");
      }
    }
    // Every connection's SSL_CTX loads kNoCaDirectory into this shared store (set_ca_cert_path). Add that
    // lookup directory once, here, while one thread owns the store: the connections then find it already
    // there and only read the store. Adding it from several connection threads at once raced on the store's
    // lookup list (a crash when the store was freed at exit).
    X509_LOOKUP* dir = X509_STORE_add_lookup(impl->trust.get(), X509_LOOKUP_hash_dir());
    if (!dir || X509_LOOKUP_add_dir(dir, kNoCaDirectory, X509_FILETYPE_PEM) != 1) {
      return common::fail("cannot set up the certificate store");
    }
  } else if (!impl->config.ca_pem.empty() && !common::make_store(impl->config.ca_pem)) {
    return common::fail("certificate-authority: no valid PEM certificate");
  }
  return std::shared_ptr<Client>(new Client(std::move(impl)));
}

void Client::set_observer(RequestObserver observer) { impl_->observer = std::move(observer); }
const ConnectionConfig& Client::config() const { return impl_->config; }

KResult<json> Client::get(const std::string& path) { return impl_->send_json("GET", path, "", ""); }

namespace {
std::string write_query(const std::string& path, const WriteOptions& o) {
  return with_query(path, {{"fieldManager", o.field_manager}, {"dryRun", o.dry_run ? "All" : ""}});
}
}  // namespace

KResult<json> Client::create(const std::string& collection_path, const json& obj, const WriteOptions& opts) {
  return impl_->send_json("POST", write_query(collection_path, opts), obj.dump(), "application/json");
}

KResult<json> Client::update(const std::string& path, const json& obj, const WriteOptions& opts) {
  return impl_->send_json("PUT", write_query(path, opts), obj.dump(), "application/json");
}

KResult<json> Client::patch(const std::string& path, PatchKind kind, const json& patch, const WriteOptions& opts) {
  const char* ct = kind == PatchKind::kMerge  ? "application/merge-patch+json"
                   : kind == PatchKind::kJson ? "application/json-patch+json"
                                              : "application/strategic-merge-patch+json";
  return impl_->send_json("PATCH", write_query(path, opts), patch.dump(), ct);
}

KResult<json> Client::remove(const std::string& path, const DeleteOptions& opts) {
  json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = *opts.grace_period_seconds;
  if (!opts.propagation.empty()) body["propagationPolicy"] = opts.propagation;
  if (!opts.precondition_uid.empty()) body["preconditions"]["uid"] = opts.precondition_uid;
  if (!opts.precondition_rv.empty()) body["preconditions"]["resourceVersion"] = opts.precondition_rv;
  if (opts.dry_run) body["dryRun"] = json::array({"All"});
  return impl_->send_json("DELETE", path, body.dump(), "application/json");
}

KResult<std::string> Client::list(const std::string& path, const ListOptions& opts,
                                  const std::function<void(json&& item)>& on_item) {
  std::string cont, rv;
  int restarts = 0;
  while (true) {
    auto page = impl_->send_json("GET", with_query(path, {{"limit", std::to_string(opts.page_size)},
                                                          {"labelSelector", opts.label_selector},
                                                          {"fieldSelector", opts.field_selector},
                                                          {"resourceVersion", cont.empty() ? opts.resource_version : ""},
                                                          {"continue", cont}}),
                                 "", "");
    if (!page && page.error().gone() && !cont.empty() && opts.on_restart && restarts < 3) {
      ++restarts;  // the continue token expired: a consistent list needs a fresh start
      opts.on_restart();
      cont.clear();
      rv.clear();
      continue;
    }
    if (!page) return std::unexpected(page.error());
    const json meta = page->value("metadata", json::object());
    if (rv.empty()) rv = meta.value("resourceVersion", "");
    std::string kind = page->value("kind", "");
    if (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0) kind = kind.substr(0, kind.size() - 4);
    std::string api_version = page->value("apiVersion", "");
    if (page->contains("items") && (*page)["items"].is_array()) {
      for (auto& item : (*page)["items"]) {
        if (!item.contains("kind")) item["kind"] = kind;
        if (!item.contains("apiVersion")) item["apiVersion"] = api_version;
        on_item(std::move(item));
      }
    }
    cont = meta.value("continue", "");
    if (cont.empty()) break;
  }
  return rv;
}

KResult<void> Client::watch(const std::string& path, const WatchOptions& opts,
                            const std::function<bool(WatchEvent&& ev)>& on_event, const std::atomic<bool>* stop) {
  impl_->limiter.acquire();
  auto cli = impl_->make_client();
  cli->set_read_timeout(opts.timeout_seconds + 30, 0);
  std::string url = with_query(path, {{"watch", "1"},
                                      {"labelSelector", opts.label_selector},
                                      {"fieldSelector", opts.field_selector},
                                      {"resourceVersion", opts.resource_version},
                                      {"allowWatchBookmarks", opts.allow_bookmarks ? "true" : ""},
                                      {"timeoutSeconds", std::to_string(opts.timeout_seconds)}});
  std::atomic<bool> done{false};
  httplib::ClientImpl* raw_cli = cli.get();
  // Stops the blocking read promptly when the caller asks (httplib's stop() is thread-safe).
  std::thread stopper([&] {
    while (!done) {
      if (stop && *stop) {
        raw_cli->stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::string buf;
  std::optional<ApiStatus> failure;
  bool consumer_stopped = false;
  int status = 0;
  std::string error_body;
  httplib::Request req;
  req.method = "GET";
  req.path = url;
  req.headers = impl_->headers("application/json");
  req.response_handler = [&](const httplib::Response& r) {
    status = r.status;
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t len, std::uint64_t, std::uint64_t) {
    if (status != 200) {
      error_body.append(data, len);
      return true;
    }
    buf.append(data, len);
    std::size_t start = 0, nl;
    while ((nl = buf.find('\n', start)) != std::string::npos) {
      std::string_view line(buf.data() + start, nl - start);
      start = nl + 1;
      if (line.empty()) continue;
      json ev = json::parse(line, nullptr, false);
      if (!ev.is_object()) continue;
      WatchEvent we;
      we.type = ev.value("type", "");
      if (we.type == "ERROR") {
        const json& o = ev["object"];
        failure = status_from(o.value("code", 500), o.dump());
        return false;
      }
      we.object = std::make_shared<json>(std::move(ev["object"]));
      if (!on_event(std::move(we))) {
        consumer_stopped = true;
        return false;
      }
    }
    buf.erase(0, start);
    return !(stop && *stop);
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  bool ok = cli->send(req, res, err);
  done = true;
  stopper.join();
  impl_->observe("GET", ok ? std::to_string(status ? status : res.status) : "error");  // client-go counts watches as GET
  if (failure) return std::unexpected(*failure);
  if (consumer_stopped || (stop && *stop)) return {};
  if (status != 0 && status != 200) return std::unexpected(status_from(status, error_body));
  if (!ok && err != httplib::Error::Canceled) {
    return std::unexpected(ApiStatus{0, "Transport", "watch " + path + ": " + httplib::to_string(err), 0});
  }
  return {};
}

KResult<Client::Raw> Client::request(const std::string& method, const std::string& path, const std::string& body,
                                     const std::string& content_type) {
  return impl_->send(method, path, body, content_type);
}

KResult<json> Client::probe() {
  auto v = get("/version");
  if (!v) return v;
  auto api = get("/api");
  if (!api) return std::unexpected(api.error());
  return v;
}

KResult<json> retry_on_conflict(Client& client, const std::string& path, const std::function<bool(json& obj)>& mutate,
                                int attempts) {
  ApiStatus last;
  for (int i = 0; i < attempts; ++i) {
    auto cur = client.get(path);
    if (!cur) return cur;
    json obj = std::move(*cur);
    if (!mutate(obj)) return obj;
    auto res = client.update(path, obj);
    if (res) return res;
    if (!res.error().conflict()) return res;
    last = res.error();
  }
  return std::unexpected(last);
}

}  // namespace kubex::kube
