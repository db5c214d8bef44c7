// The engine's HTTPS admission webhook server (DESIGN §3 webhook/, ADM-2, VAL-9, ENG-1): a registry of
// admission handlers by URL path, served over TLS on --webhook-bind-address with the current serving
// certificate (net/tls_server.h), plus GET /healthz.
//
// Per request: the body is decoded (VAL-9: HTTP 400 `invalid AdmissionReview: <reason>`), the path's
// handler runs on the thread that read the request with a deadline (ADM-2: 8 s; net/deadlines.h), and the
// response is encoded with the uid echoed. A handler that throws, overruns its deadline or returns an
// unencodable response is answered according to its HandlerOptions: fail-open (`allowed: true`, no patch) or
// HTTP 500 (the API server then applies the webhook's failurePolicy). An overrunning handler is answered at
// its deadline from the deadline thread, and another thread takes its place until it returns. Every request
// is reported to the observer with its outcome.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "webhook/admission_review.h"

namespace kubex::webhook {

class ServingCertificate;

using Handler = std::function<AdmissionResponse(const AdmissionRequest&)>;

struct HandlerOptions {
  // Mutating paths may answer with a patch (outcomes patched/unchanged); a patch from a validating
  // handler is an internal error (outcomes allowed/denied).
  bool mutating = true;
  // true: internal errors answer `allowed: true` without a patch (ADM-2); false: HTTP 500.
  bool fail_open = true;
  // ADM-2: the handler must answer within 8 s; after that the request is answered as an internal error.
  std::chrono::milliseconds deadline{8000};
  // The parts of request.object / request.oldObject the handler reads (review_fields); the rest of the
  // objects is checked as JSON but not built. nullptr: the handler gets the whole objects.
  std::shared_ptr<const common::JsonProjection> object_fields;
};

enum class Outcome { kPatched, kUnchanged, kAllowed, kDenied, kError, kBadRequest, kProbe };
// "patched", "unchanged", "allowed", "denied", "error", "bad_request" (OBS-5 result labels); "probe": the webhook
// health probe's own dry-run pods (WHH-1), whatever their answer, so they never count as kubex changing a pod.
const char* outcome_label(Outcome o);

// Called once per admission request (not for /healthz) with the URL path, the outcome and the time from
// receiving the body to having the answer.
using Observer = std::function<void(const std::string& path, Outcome outcome, double seconds)>;

struct ServerOptions {
  std::string bind_address = ":9443";  // HOST:PORT, :PORT; port 0 picks a free port
  // Threads serving connections; 0: default_server_threads(). A handler runs on the thread that read its
  // request. A handler that waits in a common::BlockingScope (owner resolution asking the API server) or
  // overruns its deadline is lent another thread until it returns, so a thread per CPU suffices: more only
  // share the same cores, and a review then waits out another thread's time slice (the closed-loop p99 in
  // docs/performance.md). Connections are not bound to threads: up to max_connections stay open (beyond
  // that, new ones wait).
  int threads = 0;
  int max_connections = 1024;
  // An idle kept-alive connection is closed after this long. The API server keeps its webhook connections
  // alive between calls (the probe calls every 10 s): like kube-apiserver's and Go's servers, well above that.
  int keep_alive_timeout_seconds = 90;
  int keep_alive_max_count = 1000;
  std::size_t max_body_bytes = 16u << 20;
  // Handlers still running after their deadline. Past this many, requests are answered as internal errors
  // at once instead of running another handler.
  int max_overrun_handlers = 32;
  // Called with OpenSSL's reason when a client's TLS handshake fails with a protocol error (an API server
  // that does not trust the serving certificate aborts with an alert); may be empty.
  std::function<void(const std::string& error)> on_tls_failure;
};

// One serving thread per CPU this process may run on (its affinity mask, and the cgroup's CPU quota when
// it has one), 1 to 8.
int default_server_threads();
// The same from `cpus` (CPUs in the affinity mask) and the text of cgroup v2's cpu.max ("" when absent): a
// quota rounds up to whole CPUs.
int server_threads_for(int cpus, std::string_view cpu_max);

// What the server answers for one request (also what serve() returns to tests).
struct HttpReply {
  int status = 200;
  std::string content_type;
  std::string body;
  Outcome outcome = Outcome::kBadRequest;
};

class Server {
 public:
  Server(ServerOptions options, std::shared_ptr<ServingCertificate> certificate);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Registers (or replaces) the handler of `path` (e.g. "/mutate--v1-pod"). Thread-safe, also while serving.
  void handle(const std::string& path, Handler handler, HandlerOptions options = {});
  void set_observer(Observer observer);  // before start()

  // Sets up TLS and binds; the error names the address and the flag. Then serves on a background thread.
  common::Result<void> start();
  // Waits for requests in flight, then for overrun handlers (at most `grace`). Safe to call more than once.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(2000));

  const std::string& host() const;  // the bind host ("0.0.0.0" for ":9443")
  int port() const;                 // the bound port after start()

  // Processes one admission request body for `path` exactly as the HTTP handler does (no TLS; the handler
  // runs on a thread of its own, so an overrun is answered at the deadline): for tests and benchmarks.
  HttpReply serve(const std::string& path, std::string_view body);

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace kubex::webhook
