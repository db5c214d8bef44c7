#include "net/tls_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/blocking.h"

namespace kubex::net {

namespace {

using Clock = std::chrono::steady_clock;

// A connection is owned by the worker handling its event (EPOLLONESHOT: at most one at a time); `mu`
// guards it against the others that may touch it: a Reply sent from another thread, the housekeeper and
// stop().
enum class Phase { kHandshake, kReading, kHandling, kWriting, kClosed };

struct Conn : std::enable_shared_from_this<Conn> {
  explicit Conn(const http1::Limits& limits) : parser(limits) {}
  ~Conn() {
    if (ssl != nullptr) SSL_free(ssl);
    if (fd >= 0) ::close(fd);  // only here, so the descriptor number is not reused while anyone holds this
  }
  int fd = -1;
  SSL* ssl = nullptr;  // nullptr: plain HTTP
  std::mutex mu;
  Phase phase = Phase::kHandshake;
  std::string in;
  http1::Parser parser;
  std::string out;
  std::size_t out_off = 0;
  int served = 0;
  bool close_after_write = false, write_failed = false, continue_sent = false;
  Clock::time_point last_active = Clock::now();
};

char kListenTag, kWakeTag;  // epoll data of the listening socket and the stop eventfd

// Writes what is pending in c.out. false on a write error; true when done or when the socket is full.
bool flush(Conn& c) {
  while (c.out_off < c.out.size()) {
    if (c.ssl == nullptr) {  // plain HTTP
      ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_off += static_cast<std::size_t>(n);
        c.last_active = Clock::now();
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      c.write_failed = true;
      return false;
    }
    ERR_clear_error();
    int n = SSL_write(c.ssl, c.out.data() + c.out_off, static_cast<int>(c.out.size() - c.out_off));
    if (n > 0) {
      c.out_off += static_cast<std::size_t>(n);
      c.last_active = Clock::now();
      continue;
    }
    int e = SSL_get_error(c.ssl, n);
    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) return true;
    c.write_failed = true;
    return false;
  }
  c.out.clear();
  c.out_off = 0;
  return true;
}

bool pending(const Conn& c) {
  return c.out_off < c.out.size();
}

}  // namespace

struct TlsServer::State : std::enable_shared_from_this<TlsServer::State> {
  TlsServerOptions options;
  bool tls = true;
  std::function<common::Result<void>(ssl_ctx_st*)> setup;
  RequestHandler handler;
  SSL_CTX* ctx = nullptr;
  int listen_fd = -1, epfd = -1, wake_fd = -1, port = 0;

  std::mutex mu;  // conns, listen_paused, running
  std::condition_variable cv;
  std::unordered_map<Conn*, std::shared_ptr<Conn>> conns;
  bool listen_paused = false, started = false;
  int running = 0;  // worker threads
  std::atomic<bool> stopping{false};
  std::atomic<int> surplus{0}, handling{0};
  std::thread housekeeper;

  // A worker whose handler waits (common::BlockingScope) lends the pool another worker meanwhile.
  struct LendWhileBlocked : common::BlockingHook {
    explicit LendWhileBlocked(State* s) : state(s) {}
    State* state;
    void begin() override { state->add_worker(); }
    void end() override { state->retire_worker(); }
  } lend_while_blocked{this};

  void add_worker() {
    std::lock_guard lk(mu);
    if (stopping || !started) return;
    ++running;
    std::thread([st = shared_from_this()] {
      st->work();
    }).detach();  // holds the state; stop() waits for it (within its grace)
  }
  void retire_worker() { ++surplus; }  // the next worker that finishes a request ends

  ~State() {
    for (int fd : {listen_fd, epfd, wake_fd}) {
      if (fd >= 0) ::close(fd);
    }
    if (ctx != nullptr) SSL_CTX_free(ctx);
  }

  void arm(Conn& c, uint32_t events) {
    epoll_event ev{};
    ev.events = events | EPOLLONESHOT;
    ev.data.ptr = &c;
    epoll_ctl(epfd, EPOLL_CTL_MOD, c.fd, &ev);
  }

  void arm_listen() {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLONESHOT;
    ev.data.ptr = &kListenTag;
    epoll_ctl(epfd, EPOLL_CTL_MOD, listen_fd, &ev);
  }

  // By the owner of c, with c.mu held.
  void close_conn(Conn& c) {
    c.phase = Phase::kClosed;
    epoll_ctl(epfd, EPOLL_CTL_DEL, c.fd, nullptr);
    if (c.ssl != nullptr) {
      ERR_clear_error();
      if (SSL_is_init_finished(c.ssl)) SSL_shutdown(c.ssl);  // close_notify, best effort
      ERR_clear_error();
    }
    std::shared_ptr<Conn> keep;  // freed after the lock
    std::lock_guard lk(mu);
    if (auto it = conns.find(&c); it != conns.end()) {
      keep = std::move(it->second);
      conns.erase(it);
    }
    if (listen_paused && !stopping && conns.size() < static_cast<std::size_t>(options.max_connections)) {
      listen_paused = false;
      arm_listen();
    }
  }

  void accept_all() {
    for (int i = 0; i < 64; ++i) {
      int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          std::lock_guard lk(mu);
          listen_paused = true;  // the housekeeper tries again
          return;
        }
        break;  // EAGAIN: all accepted
      }
      int yes = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      auto c = std::make_shared<Conn>(options.limits);
      c->fd = fd;
      if (tls) {
        c->ssl = SSL_new(ctx);
        if (c->ssl == nullptr) continue;  // ~Conn closes fd
        SSL_set_fd(c->ssl, fd);
        SSL_set_accept_state(c->ssl);
      } else {
        c->phase = Phase::kReading;  // no handshake
      }
      std::lock_guard lk(mu);
      if (stopping) return;
      conns.emplace(c.get(), c);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLONESHOT;
      ev.data.ptr = c.get();
      epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
      if (conns.size() >= static_cast<std::size_t>(options.max_connections)) {
        listen_paused = true;
        return;
      }
    }
    arm_listen();
  }

  void serve(Conn& c) {
    std::shared_ptr<Conn> self = c.shared_from_this();
    std::unique_lock lk(c.mu);
    switch (c.phase) {
      case Phase::kClosed:
      case Phase::kHandling:
        return;
      case Phase::kHandshake: {
        ERR_clear_error();
        int r = SSL_do_handshake(c.ssl);
        if (r != 1) {
          int e = SSL_get_error(c.ssl, r);
          if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            arm(c, e == SSL_ERROR_WANT_READ ? EPOLLIN : EPOLLOUT);
          } else {
            if (e == SSL_ERROR_SSL && options.on_tls_failure) {
              char why[256];
              ERR_error_string_n(ERR_peek_last_error(), why, sizeof why);
              const char* reason = ERR_reason_error_string(ERR_peek_last_error());
              options.on_tls_failure(reason ? reason : why);
            }
            close_conn(c);
          }
          return;
        }
        c.phase = Phase::kReading;
        break;
      }
      case Phase::kWriting:
        if (!flush(c)) return close_conn(c);
        if (pending(c)) return arm(c, EPOLLOUT);
        if (c.close_after_write) return close_conn(c);
        c.phase = Phase::kReading;
        break;
      case Phase::kReading:
        break;
    }
    read_and_handle(c, lk);
  }

  void read_and_handle(Conn& c, std::unique_lock<std::mutex>& lk);
  void work();
  void housekeep();
};

namespace {

// The Reply of one request on one connection. Sent by the worker running the handler, the answer is
// written at once (the worker finishes a partial write); sent from another thread while the handler
// still runs, it is written there and the connection is closed after it.
class ConnReply : public Reply {
 public:
  ConnReply(std::shared_ptr<Conn> c, bool keep_alive, bool head)
      : c_(std::move(c)), keep_alive_(keep_alive), head_(head), worker_(std::this_thread::get_id()) {}

  bool send(int status, std::string_view content_type, std::string_view body) override {
    std::lock_guard lk(c_->mu);
    if (answered_.exchange(true)) return false;
    if (c_->phase == Phase::kClosed) return true;
    bool inline_send = std::this_thread::get_id() == worker_;
    bool keep = keep_alive_ && inline_send;
    c_->out = http1::format_response(status, content_type, body, keep);
    if (head_) c_->out.resize(c_->out.size() - body.size());  // HEAD: the headers a GET would get, no body
    c_->out_off = 0;
    if (!keep) c_->close_after_write = true;
    if (!flush(*c_) || inline_send) return true;
    // From another thread: the worker is busy in the handler, so finish the write here (briefly).
    auto until = Clock::now() + std::chrono::seconds(2);
    while (pending(*c_) && Clock::now() < until) {
      pollfd p{c_->fd, POLLOUT, 0};
      poll(&p, 1, 100);
      if (!flush(*c_)) return true;
    }
    if (!pending(*c_)) {
      // The client sees the end now, not when the handler returns.
      if (c_->ssl != nullptr) {
        ERR_clear_error();
        SSL_shutdown(c_->ssl);
        ERR_clear_error();
      }
      ::shutdown(c_->fd, SHUT_WR);
    }
    return true;
  }
  bool answered() const override { return answered_.load(); }

 private:
  std::shared_ptr<Conn> c_;
  bool keep_alive_, head_;
  std::thread::id worker_;
  std::atomic<bool> answered_{false};
};

}  // namespace

void TlsServer::State::read_and_handle(Conn& c, std::unique_lock<std::mutex>& lk) {
  char buf[16384];
  while (true) {
    http1::State ps = c.parser.parse(c.in);
    if (ps == http1::State::kComplete) {
      http1::Request request = std::move(c.parser.request());
      c.in.erase(0, c.parser.consumed());
      c.parser.reset();
      c.continue_sent = false;
      ++c.served;
      bool keep = request.keep_alive && c.served < options.max_requests_per_connection && !stopping;
      c.phase = Phase::kHandling;
      auto reply = std::make_shared<ConnReply>(c.shared_from_this(), keep, request.method == "HEAD");
      ++handling;
      lk.unlock();
      try {
        handler(request, reply);
      } catch (...) {
        reply->send(500, "text/plain; charset=utf-8", "internal error");
      }
      if (!reply->answered()) {
        reply->send(500, "text/plain; charset=utf-8", "internal error: the request was not answered");
      }
      lk.lock();
      --handling;
      if (c.phase == Phase::kClosed) return;
      if (c.write_failed) return close_conn(c);
      if (pending(c)) {
        c.phase = Phase::kWriting;
        return arm(c, EPOLLOUT);
      }
      if (c.close_after_write) return close_conn(c);
      c.phase = Phase::kReading;
      continue;
    }
    if (ps == http1::State::kError) {
      c.out = http1::format_response(c.parser.error_status(), "text/plain; charset=utf-8",
                                     c.parser.error_message(), false);
      c.out_off = 0;
      flush(c);  // best effort: the connection ends either way
      return close_conn(c);
    }
    if (c.parser.wants_continue() && !c.continue_sent) {
      c.continue_sent = true;
      c.out = "HTTP/1.1 100 Continue\r\n\r\n";
      c.out_off = 0;
      if (!flush(c)) return close_conn(c);
      if (pending(c)) {
        c.phase = Phase::kWriting;
        return arm(c, EPOLLOUT);
      }
    }
    if (c.ssl == nullptr) {  // plain HTTP
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        c.in.append(buf, static_cast<std::size_t>(n));
        c.last_active = Clock::now();
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return arm(c, EPOLLIN);
      return close_conn(c);  // the peer closed, or a socket error
    }
    ERR_clear_error();
    int n = SSL_read(c.ssl, buf, sizeof buf);
    if (n > 0) {
      c.in.append(buf, static_cast<std::size_t>(n));
      c.last_active = Clock::now();
      continue;
    }
    int e = SSL_get_error(c.ssl, n);
    if (e == SSL_ERROR_WANT_READ) return arm(c, EPOLLIN);
    if (e == SSL_ERROR_WANT_WRITE) return arm(c, EPOLLOUT);
    return close_conn(c);  // the peer closed, or a TLS or socket error
  }
}

TlsServer::TlsServer(TlsServerOptions options, std::function<common::Result<void>(ssl_ctx_st*)> setup,
                     RequestHandler handler)
    : st_(std::make_shared<State>()) {
  st_->options = std::move(options);
  st_->setup = std::move(setup);
  st_->handler = std::move(handler);
}

TlsServer::TlsServer(TlsServerOptions options, RequestHandler handler) : st_(std::make_shared<State>()) {
  st_->options = std::move(options);
  st_->tls = false;
  st_->handler = std::move(handler);
}

TlsServer::~TlsServer() {
  stop(std::chrono::milliseconds(2000));
}

common::Result<void> TlsServer::bind(const std::string& host, int port) {
  State& s = *st_;
  if (s.listen_fd >= 0) return common::fail("already listening");
  if (s.tls) {
    s.ctx = SSL_CTX_new(TLS_server_method());
    if (s.ctx == nullptr) return common::fail("cannot create the TLS context");
    SSL_CTX_set_mode(s.ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(s.ctx, SSL_OP_NO_RENEGOTIATION);
    // One read(2) takes a whole record (and whatever follows it) instead of its 5-byte header first and the
    // rest second. The worker loop reads until WANT_READ, so nothing buffered is left unread before it waits.
    SSL_CTX_set_read_ahead(s.ctx, 1);
    static const unsigned char kSessionContext[] = "kubex-webhook";
    SSL_CTX_set_session_id_context(s.ctx, kSessionContext, sizeof kSessionContext - 1);
    if (s.setup) {
      if (auto r = s.setup(s.ctx); !r) return r;
    }
  }

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return common::fail(std::string("cannot resolve ") + host + ": " + gai_strerror(rc));
  }
  std::string why = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes,
               sizeof yes);  // not SO_REUSEPORT: a port in use is an error
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 1024) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      continue;
    }
    s.listen_fd = fd;
    break;
  }
  freeaddrinfo(found);
  if (s.listen_fd < 0) return common::fail(why);
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  s.port = addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);

  s.epfd = epoll_create1(EPOLL_CLOEXEC);
  s.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (s.epfd < 0 || s.wake_fd < 0) return common::fail(std::string("epoll: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;  // level-triggered and never read: once written, every worker sees it
  ev.data.ptr = &kWakeTag;
  epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.wake_fd, &ev);
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.ptr = &kListenTag;
  epoll_ctl(s.epfd, EPOLL_CTL_ADD, s.listen_fd, &ev);
  return {};
}

int TlsServer::port() const {
  return st_->port;
}

void TlsServer::start() {
  // A peer that went away makes the next write raise SIGPIPE: see EPIPE instead, as the client does.
  static std::once_flag sigpipe_once;
  std::call_once(sigpipe_once, [] { std::signal(SIGPIPE, SIG_IGN); });
  {
    std::lock_guard lk(st_->mu);
    if (st_->started || st_->listen_fd < 0) return;
    st_->started = true;
  }
  for (int i = 0; i < std::max(1, st_->options.workers); ++i) add_worker();
  st_->housekeeper = std::thread([st = st_] { st->housekeep(); });
}

void TlsServer::add_worker() {
  st_->add_worker();
}

void TlsServer::retire_worker() {
  st_->retire_worker();
}

void TlsServer::stop(std::chrono::milliseconds grace) {
  State& s = *st_;
  if (s.stopping.exchange(true)) return;
  bool was_started;
  {
    std::lock_guard lk(s.mu);
    was_started = s.started;
  }
  auto until = Clock::now() + grace;
  if (was_started) {
    epoll_ctl(s.epfd, EPOLL_CTL_DEL, s.listen_fd, nullptr);
    while (s.handling.load() > 0 && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    uint64_t one = 1;
    [[maybe_unused]] auto w = ::write(s.wake_fd, &one, sizeof one);
    s.cv.notify_all();
    if (s.housekeeper.joinable()) s.housekeeper.join();
    std::unique_lock lk(s.mu);
    s.cv.wait_until(lk, until + std::chrono::milliseconds(200), [&] { return s.running == 0; });
  }
  // Close what is left (a connection whose handler still runs is closed by its worker when it returns).
  std::vector<std::shared_ptr<Conn>> left;
  {
    std::lock_guard lk(s.mu);
    for (auto& [p, c] : s.conns) left.push_back(c);
  }
  for (auto& c : left) {
    std::unique_lock lk(c->mu);
    if (c->phase != Phase::kHandling && c->phase != Phase::kClosed) s.close_conn(*c);
  }
  if (s.listen_fd >= 0) {
    ::close(s.listen_fd);
    s.listen_fd = -1;
  }
}

void TlsServer::State::work() {
  common::set_thread_blocking_hook(&lend_while_blocked);
  while (true) {
    epoll_event ev{};
    int n = epoll_wait(epfd, &ev, 1, -1);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (ev.data.ptr == &kWakeTag) break;
    if (ev.data.ptr == &kListenTag) {
      accept_all();
    } else {
      serve(*static_cast<Conn*>(ev.data.ptr));
    }
    int s = surplus.load();
    bool retire = false;
    while (s > 0 && !(retire = surplus.compare_exchange_weak(s, s - 1))) {
    }
    if (retire) break;
  }
  common::set_thread_blocking_hook(nullptr);
  std::lock_guard lk(mu);
  --running;
  cv.notify_all();
}

// Closes connections idle past their timeout (by shutting the socket down: the owning worker then sees the
// end and closes it) and resumes accepting after running out of descriptors.
void TlsServer::State::housekeep() {
  const auto idle = std::chrono::seconds(std::max(1, options.idle_timeout_seconds));
  const auto slow = std::chrono::seconds(std::max(1, options.read_timeout_seconds));
  std::unique_lock lk(mu);
  while (!stopping) {
    cv.wait_for(lk, std::chrono::milliseconds(250));
    if (stopping) break;
    std::vector<std::shared_ptr<Conn>> all;
    all.reserve(conns.size());
    for (auto& [p, c] : conns) all.push_back(c);
    if (listen_paused && conns.size() < static_cast<std::size_t>(options.max_connections)) {
      listen_paused = false;
      arm_listen();
    }
    lk.unlock();
    auto now = Clock::now();
    for (auto& c : all) {
      std::unique_lock clk(c->mu, std::try_to_lock);
      if (!clk.owns_lock()) continue;
      bool idle_wait = c->phase == Phase::kReading && c->in.empty();
      bool slow_wait = c->phase == Phase::kHandshake || c->phase == Phase::kWriting ||
                       (c->phase == Phase::kReading && !c->in.empty());
      if ((idle_wait && now - c->last_active > idle) || (slow_wait && now - c->last_active > slow)) {
        if (c->phase == Phase::kReading && c->ssl != nullptr) {  // close_notify first: a clean end
          ERR_clear_error();
          SSL_shutdown(c->ssl);
          ERR_clear_error();
        }
        ::shutdown(c->fd, SHUT_RDWR);
      }
    }
    all.clear();
    lk.lock();
  }
}

}  // namespace kubex::net
