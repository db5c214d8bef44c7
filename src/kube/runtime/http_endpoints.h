// The engine's plain-HTTP endpoints (ENG-1, OBS-5): /metrics on --metrics-bind-address and /healthz +
// /readyz on --health-probe-bind-address, each served over plain HTTP by the engine's own HTTP/1.1 server
// (net/tls_server.h, included only in the .cpp; DESIGN §3: kube -> net). /readyz (and /healthz) answer 200
// "ok" when every check passes, else 500 listing each check as "[+]name ok" or "[-]name failed: reason", like
// controller-runtime's healthz handler.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace kubex::kube {

// "" when healthy, else the reason.
using Check = std::function<std::string()>;

struct BindAddress {
  std::string host;       // "0.0.0.0" for ":8080"
  int port = 0;           // 0 = any free port
  bool disabled = false;  // "0" (controller-runtime's way to turn an endpoint off)
};
// ":8080", "127.0.0.1:0", "[::1]:8080", "0".
common::Result<BindAddress> parse_bind_address(const std::string& s);

// Renders a healthz-style body and status for `checks`, in order.
struct CheckReport {
  int status = 200;
  std::string body;
};
CheckReport run_checks(const std::vector<std::pair<std::string, Check>>& checks, const std::string& endpoint);

class HttpEndpoints {
 public:
  struct Options {
    std::string metrics_bind = ":8080";
    std::string health_bind = ":8081";
    std::function<std::string()> render_metrics;  // Prometheus text
    int threads = 2;                              // worker threads per server
  };
  // Binds both servers (an error names the address) and serves them on background threads.
  static common::Result<std::unique_ptr<HttpEndpoints>> start(Options options);
  ~HttpEndpoints();
  HttpEndpoints(const HttpEndpoints&) = delete;
  HttpEndpoints& operator=(const HttpEndpoints&) = delete;

  // Checks may be added at any time; a name added twice replaces the earlier check.
  void add_health_check(const std::string& name, Check check);
  void add_readiness_check(const std::string& name, Check check);

  int metrics_port() const;  // 0 when disabled
  int health_port() const;
  void stop();

 private:
  struct Impl;
  explicit HttpEndpoints(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubex::kube
