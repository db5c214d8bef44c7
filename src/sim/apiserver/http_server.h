// HTTPS front end of kubex-sim: authentication (client certificate or bearer token), request decoding,
// streaming WATCH responses, Warning headers, and the injected API faults of `--faults` (faults.h).
#pragma once

#include <memory>
#include <string>

#include "common/result.h"
#include "sim/apiserver/credentials.h"

namespace kubex::sim {

class ApiServer;
class FaultInjector;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0 = pick a free port
  std::size_t threads = 256;
  std::shared_ptr<FaultInjector> faults;  // SIM-8 `--faults`; null (the default) injects nothing
};

class HttpServer {
 public:
  HttpServer(ApiServer& api, Credentials creds, HttpServerOptions options);
  ~HttpServer();
  // Binds the listening socket; returns the bound port.
  common::Result<int> bind();
  // Serves until stop() (blocking).
  void serve();
  void stop();
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubex::sim
