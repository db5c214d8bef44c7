// Scale benchmark for kubex-sim's API server (issue 2): creates 33,000 pods over HTTPS, then measures
// LIST (unpaged and paged by 500) and WATCH fan-out to 20 watchers. The baseline, run side by side in the
// same process run, is nginx serving the same bytes as a static file over TLS on the same machine.
// Prints a Markdown report (medians of repeated runs).
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <thread>

#include "common/file_io.h"
#include "common/x509.h"
#include "sim/apiserver/api_server.h"
#include "sim/apiserver/credentials.h"
#include "sim/apiserver/http_server.h"

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  std::size_t i = static_cast<std::size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

struct Client {
  std::unique_ptr<httplib::SSLClient> c;
  Client(int port, const kubex::sim::Credentials& creds) {
    c = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    auto store = kubex::common::make_store(creds.ca.cert_pem);
    c->set_ca_cert_store(store->release());
    c->enable_server_certificate_verification(true);
    c->set_bearer_token_auth(creds.token);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);  // like Go's net/http clients
    c->set_read_timeout(300, 0);
  }
};

json make_pod(int i) {
  std::string name = "pod-" + std::to_string(i);
  std::string ns = "bench-" + std::to_string(i % 50);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"labels", {{"app", "app-" + std::to_string(i % 1000)}, {"tier", i % 2 ? "web" : "batch"}}},
            {"annotations", {{"gpu-fraction", "0.25"}}}}},
          {"spec",
           {{"nodeName", "node-" + std::to_string(i % 1000)},
            {"containers",
             {{{"name", "app"},
               {"image", "registry.example/app:1.0"},
               {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}}}}}}};
}

std::int64_t mono_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Child-process mode: `watchers` watch streams on all pods; each event's label `stamp` carries the writer's
// CLOCK_MONOTONIC send time, so latency is measured across processes. Prints one latency (ms) per line.
int run_watch_clients(int port, const std::string& ca_file, const std::string& token, const std::string& rv,
                      int watchers, int expected) {
  kubex::sim::Credentials creds;
  creds.ca.cert_pem = *kubex::common::read_file(ca_file);
  creds.token = token;
  std::vector<std::vector<double>> lat(static_cast<std::size_t>(watchers));
  std::vector<std::thread> ws;
  std::atomic<int> connected{0};
  for (int w = 0; w < watchers; ++w) {
    ws.emplace_back([&, w] {
      Client wc(port, creds);
      int seen = 0;
      std::string buf;
      wc.c->Get("/api/v1/pods?watch=1&timeoutSeconds=120&resourceVersion=" + rv, [&](const char* data, size_t len) {
        if (seen == 0 && buf.empty()) ++connected;
        buf.append(data, len);
        std::size_t nl;
        while ((nl = buf.find('\n')) != std::string::npos) {
          std::string line = buf.substr(0, nl);
          buf.erase(0, nl + 1);
          auto at = line.find("\"stamp\":\"");
          if (at == std::string::npos) continue;
          at += 9;
          std::int64_t sent = std::stoll(line.substr(at, line.find('"', at) - at));
          lat[static_cast<std::size_t>(w)].push_back(static_cast<double>(mono_ns() - sent) / 1e6);
          if (++seen >= expected) return false;
        }
        return true;
      });
    });
  }
  for (auto& t : ws) t.join();
  for (const auto& l : lat) {
    for (double v : l) std::printf("%.4f\n", v);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kubex-sim API server scale benchmark"};
  int pods = 33000, watchers = 20, reps = 5, updates = 2000, threads = 8, pace_us = 0;
  app.add_option("--pods", pods);
  app.add_option("--watchers", watchers);
  app.add_option("--reps", reps);
  app.add_option("--updates", updates);
  app.add_option("--threads", threads);
  app.add_option("--pace-us", pace_us, "pause between updates during the fan-out run");
  int child_port = 0;
  std::string child_ca, child_token, child_rv;
  app.add_option("--watch-client-port", child_port)->group("");
  app.add_option("--watch-client-ca", child_ca)->group("");
  app.add_option("--watch-client-token", child_token)->group("");
  app.add_option("--watch-client-rv", child_rv)->group("");
  CLI11_PARSE(app, argc, argv);
  if (child_port) return run_watch_clients(child_port, child_ca, child_token, child_rv, watchers, updates);
  kubex::common::set_log_level(kubex::common::LogLevel::kWarn);
  kubex::common::set_log_output(stderr);

  auto creds = kubex::sim::load_or_create_credentials("");
  kubex::sim::ApiServerOptions opts;
  opts.watch_window = 50000;
  kubex::sim::ApiServer api(opts);
  kubex::sim::HttpServer http(api, *creds, {});
  int port = *http.bind();
  std::thread serve([&] { http.serve(); });
  api.bootstrap(false);
  if (!std::getenv("BENCH_NO_GC")) api.start();

  auto phase = [start = Clock::now()](const char* what) {
    std::fprintf(stderr, "[%7.1f s] %s\n", std::chrono::duration<double>(Clock::now() - start).count(), what);
  };
  std::printf("## kubex-sim API server at %d pods\n\n", pods);
  // Namespaces, then pods from `threads` parallel clients.
  {
    Client c(port, *creds);
    for (int n = 0; n < 50; ++n) {
      json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "bench-" + std::to_string(n)}}}};
      c.c->Post("/api/v1/namespaces", ns.dump(), "application/json");
    }
  }
  auto t0 = Clock::now();
  std::atomic<int> next{0}, failed{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      Client c(port, *creds);
      for (int i = next++; i < pods; i = next++) {
        json p = make_pod(i);
        auto res = c.c->Post("/api/v1/namespaces/" + p["metadata"]["namespace"].get<std::string>() + "/pods",
                             p.dump(), "application/json");
        if (!res || res->status != 201) ++failed;
      }
    });
  }
  for (auto& t : ts) t.join();
  double create_ms = ms_since(t0);
  std::printf("| step | result |\n|---|---|\n");
  std::printf("| create %d pods (%d clients) | %.1f s, %.0f pods/s, %d failed |\n", pods, threads, create_ms / 1000,
              pods / (create_ms / 1000), failed.load());

  phase("created");
  Client c(port, *creds);
  std::vector<double> unpaged, paged;
  std::size_t bytes = 0;
  std::string body;
  for (int r = 0; r < reps; ++r) {
    auto t = Clock::now();
    auto res = c.c->Get("/api/v1/pods");
    unpaged.push_back(ms_since(t));
    bytes = res ? res->body.size() : 0;
    if (r == 0 && res) body = res->body;
  }
  int pages = 0;
  for (int r = 0; r < reps; ++r) {
    auto t = Clock::now();
    std::string cont;
    pages = 0;
    do {
      auto res = c.c->Get("/api/v1/pods?limit=500" +
                          (cont.empty() ? "" : "&continue=" + httplib::detail::encode_query_param(cont)));
      ++pages;
      // The token sits in the leading metadata; avoid parsing the whole page in the client.
      auto head = res->body.substr(0, 4096);
      auto at = head.find("\"continue\":\"");
      cont = at == std::string::npos ? "" : head.substr(at + 12, head.find('"', at + 12) - at - 12);
    } while (!cont.empty());
    paged.push_back(ms_since(t));
  }

  phase("listed");
  // Baseline: nginx serving the same LIST body as a static file over TLS (physical limit on this machine).
  double nginx_ms = -1;
  {
    namespace fs = std::filesystem;
    fs::path dir = fs::temp_directory_path() / ("kubex-bench-nginx-" + std::to_string(::getpid()));
    fs::create_directories(dir / "www");
    kubex::common::write_file_atomic((dir / "www/pods.json").string(), body, 0644);
    kubex::common::write_file_atomic((dir / "tls.crt").string(), creds->serving.cert_pem, 0644);
    kubex::common::write_file_atomic((dir / "tls.key").string(), creds->serving.key_pem, 0600);
    int nport = port + 1;
    std::string conf = "worker_processes 1; daemon off; pid " + (dir / "nginx.pid").string() +
                       "; error_log " + (dir / "error.log").string() +
                       ";\nevents { worker_connections 64; }\nhttp { access_log off; sendfile on; server { listen 127.0.0.1:" +
                       std::to_string(nport) + " ssl; ssl_certificate " + (dir / "tls.crt").string() +
                       "; ssl_certificate_key " + (dir / "tls.key").string() + "; root " + (dir / "www").string() +
                       "; } }\n";
    kubex::common::write_file_atomic((dir / "nginx.conf").string(), conf, 0644);
    std::string cmd = "nginx -c " + (dir / "nginx.conf").string() + " -p " + dir.string() + " >/dev/null 2>&1 & echo $!";
    FILE* f = popen(cmd.c_str(), "r");
    int pid = 0;
    if (f && std::fscanf(f, "%d", &pid) != 1) pid = 0;
    if (f) pclose(f);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    httplib::SSLClient nc("127.0.0.1", nport);
    nc.enable_server_certificate_verification(false);
    nc.set_keep_alive(true);
    std::vector<double> ng;
    for (int r = 0; r < reps; ++r) {
      auto t = Clock::now();
      auto res = nc.Get("/pods.json");
      if (res && res->status == 200) ng.push_back(ms_since(t));
    }
    if (!ng.empty()) nginx_ms = median(ng);
    if (pid > 0) kill(pid, SIGTERM);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::printf("| LIST all pods, unpaged (%.1f MB) | median %.0f ms |\n", bytes / 1e6, median(unpaged));
  std::printf("| baseline: nginx serving the same %.1f MB over TLS | median %.0f ms (kubex-sim / nginx = %.1fx) |\n",
              bytes / 1e6, nginx_ms, nginx_ms > 0 ? median(unpaged) / nginx_ms : 0.0);
  std::printf("| LIST all pods, paged by 500 (%d pages) | median %.0f ms |\n", pages, median(paged));

  phase("nginx baseline done");
  // WATCH fan-out: `watchers` watch streams in a separate process (so the clients' CPU is not the server's),
  // `updates` label patches whose `stamp` is the CLOCK_MONOTONIC send time; per-delivery latency.
  std::string rv = json::parse(c.c->Get("/api/v1/pods?limit=1")->body)["metadata"]["resourceVersion"];
  std::string ca_file = (std::filesystem::temp_directory_path() / ("kubex-bench-ca-" + std::to_string(::getpid()))).string();
  kubex::common::write_file_atomic(ca_file, creds->ca.cert_pem, 0644);
  std::vector<double> p50s;
  for (int nw : {1, watchers}) {
    rv = json::parse(c.c->Get("/api/v1/pods?limit=1")->body)["metadata"]["resourceVersion"];
    std::string cmd = std::string("'") + argv[0] + "' --watchers " + std::to_string(nw) + " --updates " +
                      std::to_string(updates) + " --watch-client-port " + std::to_string(port) + " --watch-client-ca " +
                      ca_file + " --watch-client-token " + creds->token + " --watch-client-rv " + rv;
    FILE* child = popen(cmd.c_str(), "r");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // let every watcher connect
    auto tw = Clock::now();
    std::vector<double> write_ms;
    for (int i = 0; i < updates; ++i) {
      auto tp = Clock::now();
      int p = (i * 16) % pods;
      json patch = {{"metadata", {{"labels", {{"stamp", std::to_string(mono_ns())}}}}}};
      c.c->Patch("/api/v1/namespaces/bench-" + std::to_string(p % 50) + "/pods/pod-" + std::to_string(p), patch.dump(),
                 "application/merge-patch+json");
      write_ms.push_back(ms_since(tp));
      if (pace_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(pace_us));
    }
    std::vector<double> all;
    char line[64];
    while (child && std::fgets(line, sizeof line, child)) all.push_back(std::atof(line));
    if (child) pclose(child);
    double fan_ms = ms_since(tw);
    std::printf("| PATCH during fan-out | latency p50 %.2f ms, p99 %.2f ms |\n", percentile(write_ms, 0.5),
                percentile(write_ms, 0.99));
    std::printf("| WATCH fan-out: %d updates to %d watchers in another process (%zu deliveries) | %.1f s; latency p50 %.2f ms, p99 %.2f ms |\n",
                updates, nw, all.size(), fan_ms / 1000, percentile(all, 0.5), percentile(all, 0.99));
    p50s.push_back(percentile(all, 0.5));
  }
  std::filesystem::remove(ca_file);
  std::printf("| baseline: the same updates to 1 watcher | fan-out to %d costs %.2fx the single-watcher p50 latency |\n",
              watchers, p50s[0] > 0 ? p50s[1] / p50s[0] : 0.0);
  phase("fan-out done");
  api.begin_shutdown();
  http.stop();
  serve.join();
  phase("server stopped");
  api.stop();
  return 0;
}
