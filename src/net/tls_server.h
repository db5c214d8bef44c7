// The engine's HTTP/1.1 server (DESIGN §3 net/): keep-alive over non-blocking OpenSSL, or over plain TCP,
// on one epoll set shared by a few worker threads. The webhook server runs on it with TLS (ADM-2, ENG-3),
// the metrics and health endpoints without (kube/runtime/http_endpoints.h). OpenSSL and epoll stay in the
// .cpp.
//
// Why not httplib: it holds a thread per open connection and hands every request to another thread, so
// on a busy core a review paid several context switches and more kernel time than its TLS (see
// docs/performance.md, admission webhook). Here a worker takes one ready connection at a time
// (EPOLLONESHOT), reads, runs the request handler inline, writes the answer as one TLS record, and
// takes the next; no connection is bound to a thread.
//
// A handler that blocks keeps its worker: others go on serving. Whoever owns the handler's deadline may
// answer the request from another thread through its Reply (the first answer wins) and call
// add_worker() so the pool does not shrink while the handler overruns, then retire_worker() when it
// returns.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "net/http1.h"

struct ssl_ctx_st;

namespace kubex::net {

struct TlsServerOptions {
  int workers = 4;                         // threads serving connections (more are added by add_worker())
  int max_connections = 1024;              // beyond: new connections wait in the listen backlog
  int idle_timeout_seconds = 90;           // a kept-alive connection with no request for this long is closed
  int read_timeout_seconds = 15;           // a started request (or TLS handshake) must arrive within this
  int max_requests_per_connection = 1000;  // the last answer says `Connection: close`
  http1::Limits limits;
  // A handshake that failed with a TLS protocol error (not a plain disconnect): OpenSSL's reason, e.g.
  // "tlsv1 alert unknown ca" when the client does not trust the certificate. Called on a worker thread.
  std::function<void(const std::string& error)> on_tls_failure;
};

// The answer to one request. The first send() wins (true); later ones do nothing (false). Thread-safe.
class Reply {
 public:
  virtual ~Reply() = default;
  virtual bool send(int status, std::string_view content_type, std::string_view body) = 0;
  virtual bool answered() const = 0;
};

// Called on a worker thread for every complete request. It answers through reply (the server answers
// 500 for a handler that returned without an answer, and closes the connection if it threw). The answer to
// a HEAD request is sent without its body (its Content-Length is the body's, as for GET).
using RequestHandler = std::function<void(http1::Request& request, const std::shared_ptr<Reply>& reply)>;

class TlsServer {
 public:
  // HTTPS: `setup` configures the server SSL_CTX (certificate, verification); its error fails bind().
  TlsServer(TlsServerOptions options, std::function<common::Result<void>(ssl_ctx_st*)> setup,
            RequestHandler handler);
  // Plain HTTP (no TLS; on_tls_failure is not used): the same workers, keep-alive, timeouts and limits.
  TlsServer(TlsServerOptions options, RequestHandler handler);
  ~TlsServer();  // stop()
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  // Sets up TLS (unless plain) and listens on HOST:PORT (port 0 picks one). Errors say what failed; the
  // caller names the flag.
  common::Result<void> bind(const std::string& host, int port);
  int port() const;
  void start();  // the worker threads
  // Stops accepting, lets requests in flight finish (at most `grace`), closes every connection and ends
  // the workers (a worker still inside a handler after `grace` is left to finish on its own).
  void stop(std::chrono::milliseconds grace);

  void add_worker();     // one more worker thread
  void retire_worker();  // the next worker that finishes a request ends (undoes add_worker())

 private:
  struct State;
  std::shared_ptr<State> st_;
};

}  // namespace kubex::net
