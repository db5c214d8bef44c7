#include "sim/gpu/exporter.h"

#include <httplib.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>

namespace kubex::sim::gpu {

namespace {

struct Family {
  const char* name;
  const char* type;
  const char* help;
};

constexpr Family kSm{
    "kubex_gpu_container_sm_utilization_percent", "gauge",
    "SM utilization of the container on this GPU in percent of the whole GPU, after contention "
    "with the other containers sharing the GPU."};
constexpr Family kSmTotal{"kubex_gpu_container_sm_utilization_percent_seconds_total", "counter",
                          "Accumulated SM utilization in percent-seconds (the integral of "
                          "kubex_gpu_container_sm_utilization_percent over time)."};
constexpr Family kFootprint{
    "kubex_gpu_container_memory_footprint_percent", "gauge",
    "GPU memory used by the container in percent of its allocation on this GPU: "
    "gpu-fraction times the device memory for KAI fraction pods, one whole device for "
    "nvidia.com/gpu pods."};
constexpr Family kBytes{"kubex_gpu_container_memory_bytes", "gauge",
                        "GPU memory used by the container on this GPU, in bytes."};
constexpr Family kTotalBytes{
    "kubex_gpu_container_memory_total_bytes", "gauge",
    "GPU memory allocated to the container on this GPU, in bytes (the denominator of "
    "kubex_gpu_container_memory_footprint_percent)."};

void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? end : buf);
  }
}

void append_header(std::string& out, const Family& f) {
  out += "# HELP ";
  out += f.name;
  out += ' ';
  out += f.help;
  out += "\n# TYPE ";
  out += f.name;
  out += ' ';
  out += f.type;
  out += '\n';
}

std::string labels_of(const Sample& s) {
  const std::pair<const char*, const std::string*> labels[] = {
      {"namespace", &s.ns},          {"pod", &s.pod},           {"container", &s.container},
      {"node", &s.node},             {"gpu_uuid", &s.gpu_uuid}, {"gpu_model", &s.gpu_model},
      {"gpu_allocation_type", &s.allocation_type}};
  std::string out = "{";
  for (const auto& [name, value] : labels) {
    if (out.size() > 1) out += ',';
    out += name;
    out += "=\"";
    out += escape_label_value(*value);
    out += '"';
  }
  out += '}';
  return out;
}

}  // namespace

std::string escape_label_value(const std::string& v) {
  if (v.find_first_of("\\\"\n") == std::string::npos) return v;
  std::string out;
  out.reserve(v.size() + 8);
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_text(const std::vector<Sample>& samples) {
  std::vector<std::string> labels;
  labels.reserve(samples.size());
  std::size_t size = 2048;
  for (const auto& s : samples) {
    labels.push_back(labels_of(s));
    size += 5 * (labels.back().size() + 80);
  }
  std::string out;
  out.reserve(size);
  auto family = [&](const Family& f, auto value) {
    append_header(out, f);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      out += f.name;
      out += labels[i];
      out += ' ';
      append_number(out, value(samples[i]));
      out += '\n';
    }
  };
  family(kSm, [](const Sample& s) { return s.sm_percent; });
  family(kSmTotal, [](const Sample& s) { return s.sm_percent_seconds_total; });
  family(kFootprint, [](const Sample& s) { return s.memory_footprint_percent; });
  family(kBytes, [](const Sample& s) { return static_cast<double>(s.memory_bytes); });
  family(kTotalBytes, [](const Sample& s) { return static_cast<double>(s.memory_total_bytes); });
  return out;
}

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
