// The Prometheus client: connection pool, deadline, TLS trust, bearer token, and error messages.
#include "prom/client.h"

#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

#include "common/duration.h"
#include "common/file_io.h"
#include "common/http_reuse.h"
#include "common/httplib_socket.h"
#include "common/quote.h"
#include "common/x509.h"
#include "prom/endpoint.h"

namespace kubex::prom {

namespace {

using SteadyClock = std::chrono::steady_clock;

// A lookup directory for OpenSSL that cannot exist (nobody can create entries under /proc): keeps
// cpp-httplib from adding the system CA paths to a connection's store besides the one we give it.
constexpr const char* kNoCaDirectory = "/proc/kubex-no-ca-directory";

// How far past the deadline cpp-httplib's per-operation timeouts are set (see instant()).
constexpr std::chrono::microseconds kTimeoutSlack{100000};

std::string errno_text(int err) {
  std::string s = std::error_code(err, std::generic_category()).message();
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// "a=b%20c": the form encoding of one value (every byte but the RFC 3986 unreserved ones percent-encoded).
std::string form_value(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3 / 2);
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The bearer token file, read again when stat() says it changed: another inode (a Kubernetes projected
// token is swapped in by a symlink rename), size, modification or change time.
class BearerToken {
 public:
  explicit BearerToken(std::string path) : path_(std::move(path)) {}

  // "" when no file is configured.
  common::Result<std::string> get() {
    if (path_.empty()) return std::string();
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) {
      return common::fail("cannot read the bearer token file " + path_ + ": " + errno_text(errno));
    }
    Signature sig{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec,
                  st.st_ctim.tv_nsec};
    std::lock_guard lk(mu_);
    if (read_ && sig == sig_) return token_;
    auto text = common::read_file(path_);
    if (!text) return common::fail("cannot read the bearer token file: " + text.error().str());
    std::string_view t = *text;
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!t.empty() && space(t.front())) t.remove_prefix(1);
    while (!t.empty() && space(t.back())) t.remove_suffix(1);
    if (t.empty()) return common::fail("the bearer token file " + path_ + " is empty");
    // Stat before read: a change after the stat shows as another signature next time, never as a stale token.
    token_ = std::string(t);
    sig_ = sig;
    read_ = true;
    return token_;
  }

 private:
  struct Signature {
    dev_t dev;
    ino_t ino;
    off_t size;
    time_t mtime;
    long mtime_ns;
    time_t ctime;
    long ctime_ns;
    bool operator==(const Signature&) const = default;
  };
  std::string path_;
  std::mutex mu_;
  bool read_ = false;
  Signature sig_{};
  std::string token_;
};

// Why a TCP connection to host:port cannot be made, as the system says it ("connection refused", "no route
// to host", a name that does not resolve), by trying once more within `budget`: cpp-httplib reports only
// "Connection".
std::string connect_failure(const std::string& host, int port, SteadyClock::duration budget) {
  std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (rc != 0) {
    std::string why = rc == EAI_SYSTEM ? errno_text(errno) : ::gai_strerror(rc);
    return "cannot resolve host " + common::quote(host) + ": " + why;
  }
  auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(budget).count();
  wait_ms = std::clamp<long long>(wait_ms, 1, 1000);
  std::string first;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    int err = 0;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        int n = ::poll(&p, 1, static_cast<int>(wait_ms));
        err = ETIMEDOUT;
        if (n > 0) {
          socklen_t len = sizeof err;
          if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        }
      }
    }
    ::close(fd);
    if (err == 0) break;  // reachable now: say only that the query's connection failed
    if (first.empty()) first = errno_text(err);
  }
  ::freeaddrinfo(found);
  return first.empty() ? "cannot connect to " + where : first;
}

// Sends `req` on `conn`, and shuts its socket down if the deadline passes first (cpp-httplib's per-read
// timeouts alone would let a server that trickles bytes hold a query for much longer). `fired` says so.
bool send_before(httplib::ClientImpl& conn, httplib::Request& req, httplib::Response& res, httplib::Error& err,
                 SteadyClock::time_point deadline, bool& fired) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  fired = false;
  std::thread watchdog([&] {
    std::unique_lock lk(mu);
    if (cv.wait_until(lk, deadline, [&] { return done; })) return;
    fired = true;
    lk.unlock();
    conn.stop();  // thread-safe in cpp-httplib: shuts the in-flight socket down, the send fails
  });
  bool ok = conn.send(req, res, err);
  {
    std::lock_guard lk(mu);
    done = true;
  }
  cv.notify_one();
  watchdog.join();
  return ok;
}

class Client final : public Querier {
 public:
  Client(Options options, Endpoint endpoint, common::X509StorePtr trust)
      : options_(std::move(options)),
        endpoint_(std::move(endpoint)),
        query_url_(endpoint_.query_url()),
        query_path_(endpoint_.path + "/api/v1/query"),
        range_url_(endpoint_.url + "/api/v1/query_range"),
        range_path_(endpoint_.path + "/api/v1/query_range"),
        trust_(std::move(trust)),
        token_(options_.bearer_token_file) {}

  const Options& options() const override { return options_; }

  common::Result<Vector> instant(const std::string& promql) override {
    auto res = post(query_path_, query_url_, "query=" + form_value(promql));
    if (!res) return std::unexpected(res.error());
    return parse_query_response(res->status, res->body, query_url_);
  }

  common::Result<Matrix> range(const std::string& promql, common::TimePoint start, common::TimePoint end,
                               std::chrono::seconds step) override {
    auto seconds = [](common::TimePoint t) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
      std::string out = std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
      return out;
    };
    std::string body = "query=" + form_value(promql) + "&start=" + seconds(start) + "&end=" + seconds(end) +
                       "&step=" + std::to_string(step.count());
    auto res = post(range_path_, range_url_, body);
    if (!res) return std::unexpected(res.error());
    return parse_range_response(res->status, res->body, range_url_);
  }

 private:
  struct Reply {
    int status = 0;
    std::string body;
  };

  // POST `body` (form-encoded) to `path` under the whole-request deadline: the reply, or the failure named by
  // `url`. Both query kinds are read-only, so one that failed on a reused connection goes once more on a new one.
  common::Result<Reply> post(const std::string& path, const std::string& url, const std::string& body) {
    auto deadline = SteadyClock::now() + options_.timeout;
    auto token = token_.get();
    if (!token) return failed(url, token.error().message);
    bool fresh_only = false;  // a reused connection failed: the query goes once more on a new one
    for (;;) {
      auto remaining = deadline - SteadyClock::now();
      if (remaining <= SteadyClock::duration::zero()) return timed_out(url);
      auto [conn, reused] = fresh_only ? Borrowed{make_connection(), false} : borrow();
      // cpp-httplib's own timeouts a little past the deadline: the watchdog in send_before stops the request
      // at the deadline, and they only back it up.
      auto budget = std::chrono::duration_cast<std::chrono::microseconds>(remaining) + kTimeoutSlack;
      conn->set_connection_timeout(budget);
      conn->set_read_timeout(budget);
      conn->set_write_timeout(budget);
      httplib::Request req;
      req.method = "POST";
      req.path = path;
      req.headers = {{"Accept", "application/json"}, {"User-Agent", "kubex"},
                     {"Content-Type", "application/x-www-form-urlencoded"}};
      if (!token->empty()) req.headers.emplace("Authorization", "Bearer " + *token);
      req.body = body;
      httplib::Response res;
      httplib::Error err = httplib::Error::Success;
      bool fired = false;
      bool ok = send_before(*conn, req, res, err, deadline, fired);
      if (!ok) {
        if (fired || err == httplib::Error::ConnectionTimeout || SteadyClock::now() >= deadline) return timed_out(url);
        // The server closed a kept-alive connection as this query went out (common/http_reuse.h). A query is
        // read-only, so sending it again is safe even when it was written completely.
        if (reused && err != httplib::Error::Canceled) {
          fresh_only = true;
          continue;
        }
        return failed(url, describe(*conn, err, deadline));
      }
      if (!fired) give_back(std::move(conn));
      return Reply{res.status, std::move(res.body)};
    }
  }

  struct Borrowed {
    std::shared_ptr<httplib::ClientImpl> conn;
    bool reused = false;
  };

  std::unique_ptr<httplib::ClientImpl> make_connection() {
    std::unique_ptr<httplib::ClientImpl> c;
    if (endpoint_.https) {
      auto s = std::make_unique<httplib::SSLClient>(endpoint_.host, endpoint_.port);
      s->enable_server_certificate_verification(true);
      // Every connection verifies against this client's one store (the CA file, else the system bundle),
      // parsed once; set_ca_cert_store takes a reference.
      X509_STORE_up_ref(trust_.get());
      s->set_ca_cert_store(trust_.get());
      s->set_ca_cert_path("", kNoCaDirectory);
      c = std::move(s);
    } else {
      c = std::make_unique<httplib::ClientImpl>(endpoint_.host, endpoint_.port);
    }
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    return c;
  }

  // A pooled connection that is still fit for reuse (common/http_reuse.h), else a new one.
  Borrowed borrow() {
    {
      std::lock_guard lk(pool_mu_);
      if (auto c = idle_.take(SteadyClock::now(), common::httplib_connection_open)) return {std::move(c), true};
    }
    return {make_connection(), false};
  }

  void give_back(std::shared_ptr<httplib::ClientImpl> c) {
    std::lock_guard lk(pool_mu_);
    idle_.put(std::move(c), SteadyClock::now());
  }

  std::string describe(httplib::ClientImpl& conn, httplib::Error err, SteadyClock::time_point deadline) const {
    long verify = X509_V_OK;
    if (auto* ssl = dynamic_cast<httplib::SSLClient*>(&conn)) verify = ssl->get_openssl_verify_result();
    switch (err) {
      case httplib::Error::Connection:
        return connect_failure(endpoint_.host, endpoint_.port, deadline - SteadyClock::now());
      case httplib::Error::SSLServerVerification:
        return "TLS: the server certificate did not verify: " +
               std::string(X509_verify_cert_error_string(verify)) +
               (options_.ca_file.empty() ? " (no CA file is set: the system trust store was used)"
                                         : " (CA file " + options_.ca_file + ")");
      case httplib::Error::SSLConnection:
        if (verify != X509_V_OK) return "TLS handshake failed: " + std::string(X509_verify_cert_error_string(verify));
        return "TLS handshake failed (is the server speaking https?)";
      case httplib::Error::Read:
        return "the connection closed before a complete response arrived";
      case httplib::Error::Write:
        return "the connection closed while the query was being sent";
      default:
        return httplib::to_string(err);
    }
  }

  std::unexpected<common::Error> failed(const std::string& url, const std::string& why) const {
    return common::fail(subject(url) + " failed: " + why);
  }

  std::unexpected<common::Error> timed_out(const std::string& url) const {
    return common::fail(subject(url) + " timed out after " + common::format_go_duration(options_.timeout));
  }

  std::string subject(const std::string& url) const {
    return (url == range_url_ ? "Prometheus range query to " : "Prometheus query to ") + url;
  }

  Options options_;
  Endpoint endpoint_;
  std::string query_url_, query_path_, range_url_, range_path_;
  common::X509StorePtr trust_;  // null for http://
  BearerToken token_;
  std::mutex pool_mu_;
  common::IdlePool<httplib::ClientImpl> idle_{8};
};

}  // namespace

common::Result<Matrix> Querier::range(const std::string&, common::TimePoint, common::TimePoint, std::chrono::seconds) {
  return common::fail("Prometheus range queries are not supported by this querier");
}

common::Result<std::unique_ptr<Querier>> connect(const Options& options) {
  auto endpoint = parse_endpoint(options.url);
  if (!endpoint) return std::unexpected(endpoint.error());
  if (options.timeout <= std::chrono::milliseconds::zero()) {
    return common::fail("must be > 0, got " + common::format_go_duration(options.timeout),
                        "spec.prometheus.requestTimeout");
  }
  common::X509StorePtr trust;
  if (!options.ca_file.empty()) {
    auto pem = common::read_file(options.ca_file);
    if (!pem) return common::fail("Prometheus CA file: " + pem.error().str());
    auto store = common::make_store(*pem);
    if (!store) return common::fail("Prometheus CA file " + options.ca_file + " holds no valid PEM certificate");
    if (endpoint->https) trust = std::move(*store);
  }
  if (endpoint->https && !trust) {
    trust.reset(X509_STORE_new());
    if (!trust || X509_STORE_set_default_paths(trust.get()) != 1) {
      return common::fail("cannot load the system certificate authorities for " + endpoint->url);
    }
  }
  return std::unique_ptr<Querier>(new Client(options, std::move(*endpoint), std::move(trust)));
}

}  // namespace kubex::prom
