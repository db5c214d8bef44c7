#include "sim/gpu/exporter.h"

#include <httplib.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <thread>
#include <utility>

namespace kubex::sim::gpu {

struct MetricsServer::Impl {
  std::function<std::string()> render;
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> done{false};
};

MetricsServer::MetricsServer(std::function<std::string()> render) : impl_(std::make_unique<Impl>()) {
  impl_->render = std::move(render);
  auto& s = impl_->server;
  // Prometheus keeps one connection alive per target; leave room for a few ad-hoc clients.
  s.new_task_queue = [] { return new httplib::ThreadPool(4); };
  s.set_keep_alive_max_count(100000);
  s.set_keep_alive_timeout(10);
  s.set_read_timeout(10, 0);
  s.set_write_timeout(30, 0);
  Impl* impl = impl_.get();
  s.Get("/metrics", [impl](const httplib::Request&, httplib::Response& res) {
    res.set_content(impl->render(), kMetricsContentType);
  });
  s.Get("/healthz",
        [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    res.status = 500;
    res.set_content("internal error\n", "text/plain");
  });
}

MetricsServer::~MetricsServer() {
  stop();
}

common::Result<int> MetricsServer::listen(const std::string& host_port) {
  if (impl_->thread.joinable()) return common::fail("the GPU metrics server is already listening");
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos)
    return common::fail("must be HOST:PORT, got \"" + host_port + "\"", "metrics-listen");
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = -1;
  std::string port_text = host_port.substr(colon + 1);
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 ||
      port > 65535) {
    return common::fail("invalid port in \"" + host_port + "\"", "metrics-listen");
  }
  int bound =
      port == 0 ? impl_->server.bind_to_any_port(host) : (impl_->server.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) return common::fail("cannot listen on " + host_port, "metrics-listen");
  impl_->done = false;
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->server.listen_after_bind();
    impl->done = true;
  });
  return bound;
}

void MetricsServer::stop() {
  if (!impl_) return;
  if (!impl_->thread.joinable()) return;
  // httplib's stop() does nothing until the accept loop runs: wait for it (it starts at once).
  for (int i = 0; i < 5000 && !impl_->server.is_running() && !impl_->done; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->server.stop();
  impl_->thread.join();
}

}  // namespace kubex::sim::gpu
