// Admission webhook benchmark (issue 6): the engine's real pod mutation path — webhook::Server (TLS,
// keep-alive) with webhook::PodAdmission on /mutate--v1-pod and the OBS-5 metrics observer — fed a ~4 KB
// AdmissionReview of a vLLM Deployment pod, at 1, 8 and 64 concurrent keep-alive clients (closed loop) and at
// a fixed 1,000 reviews/s. Baseline, side by side in the same run with the same client: nginx serving a
// static JSON file of the size of the webhook's response over TLS with keep-alive, for the same POSTed body.
//
// The server (this process) and nginx are pinned to CPU 0, the load client (this binary in --client mode, a
// separate process) to CPU 1. Prints a Markdown report: medians of repeated runs, and the ratio kubex/nginx.
#include <httplib.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "api/keys.h"
#include "common/file_io.h"
#include "common/log.h"
#include "kube/runtime/metrics.h"
#include "kubex_paths.h"
#include "load_client.h"
#include "scenario.h"
#include "webhook/admission_metrics.h"
#include "webhook/certs.h"
#include "webhook/server.h"

namespace fs = std::filesystem;
using namespace kubex;
using bench::LoadResult;
using bench::median;

namespace {

double self_cpu() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// utime + stime of a process and its direct children (nginx master and worker), in seconds.
double proc_cpu(int pid) {
  auto one = [](const std::string& p) {
    std::ifstream f("/proc/" + p + "/stat");
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto close = s.rfind(')');
    if (close == std::string::npos) return 0.0;
    std::istringstream in(s.substr(close + 2));
    std::string field;
    double ut = 0, st = 0;
    for (int i = 3; i <= 15 && in >> field; ++i) {
      if (i == 14) ut = std::stod(field);
      if (i == 15) st = std::stod(field);
    }
    return (ut + st) / static_cast<double>(sysconf(_SC_CLK_TCK));
  };
  double total = one(std::to_string(pid));
  std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::string c;
  while (children >> c) total += one(c);
  return total;
}

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

bool wait_for_port(int port, std::chrono::seconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    httplib::SSLClient c("127.0.0.1", port);
    c.enable_server_certificate_verification(false);
    c.set_connection_timeout(0, 200000);
    if (auto r = c.Get("/healthz")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

struct Nginx {
  int pid = 0;
  int port = 0;
  std::string error;
};

// nginx-light, one worker on CPU 0 (like the webhook server), TLS with the same certificate, keep-alive
// defaults (1,000 requests per connection, as the webhook server). A POST to the static file is answered
// with the file (error_page 405 =200), so nginx reads the same request bodies as the webhook.
Nginx start_nginx(const fs::path& dir, const std::string& response, const common::PemPair& serving, int port,
                  bool pin) {
  Nginx n;
  n.port = port;
  fs::create_directories(dir / "www");
  (void)common::write_file_atomic((dir / "www/mutate--v1-pod").string(), response, 0644);
  (void)common::write_file_atomic((dir / "tls.crt").string(), serving.cert_pem, 0644);
  (void)common::write_file_atomic((dir / "tls.key").string(), serving.key_pem, 0600);
  const std::string d = dir.string();
  std::string conf =
      "worker_processes 1; daemon off; pid " + d + "/nginx.pid; error_log " + d +
      "/error.log;\nevents { worker_connections 512; }\nhttp {\n  access_log off; sendfile on;\n"
      "  client_body_buffer_size 64k; default_type application/json;\n  server {\n    listen 127.0.0.1:" +
      std::to_string(port) + " ssl;\n    ssl_certificate " + d + "/tls.crt; ssl_certificate_key " + d +
      "/tls.key;\n    root " + d +
      "/www;\n    location / { error_page 405 =200 $uri; }\n"
      "    location = /healthz { return 200 ok; }\n  }\n}\n";
  (void)common::write_file_atomic((dir / "nginx.conf").string(), conf, 0644);
  std::string cmd = std::string(pin ? "taskset -c 0 " : "") + "nginx -c " + d + "/nginx.conf -p " + d + " >" +
                    d + "/stdout.log 2>&1 & echo $!";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f || std::fscanf(f, "%d", &n.pid) != 1) n.pid = 0;
  if (f) pclose(f);
  if (n.pid <= 0 || !wait_for_port(port, std::chrono::seconds(10))) {
    auto log = common::read_file(d + "/error.log");
    n.error = "nginx did not start: " + (log ? *log : std::string("no error log"));
  }
  return n;
}

struct ClientArgs {
  std::string self, ca_file, body_file, expected_file;
  bool pin = true;
};

// Runs the load client in its own process (CPU 1) and returns its result.
LoadResult run_client(const ClientArgs& a, int port, bool echo_uid, int connections, double rate,
                      double warmup, double seconds) {
  std::ostringstream cmd;
  cmd << (a.pin ? "taskset -c 1 " : "") << "'" << a.self << "' --client --port " << port << " --ca "
      << a.ca_file << " --body-file " << a.body_file << " --expected-file " << a.expected_file
      << " --connections " << connections << " --rate " << rate << " --warmup " << warmup << " --seconds "
      << seconds << (echo_uid ? "" : " --no-echo");
  FILE* f = popen(cmd.str().c_str(), "r");
  std::string out;
  char buf[4096];
  while (f && std::fgets(buf, sizeof buf, f)) out += buf;
  if (f) pclose(f);
  return bench::load_result_from_json(out);
}

struct Sample {
  LoadResult r;
  double server_us_per_review = 0;  // server CPU over the whole run / answers over the whole run
};

struct Series {
  std::vector<Sample> s;
  double med(double LoadResult::*f) const {
    std::vector<double> v;
    for (const auto& x : s) v.push_back(x.r.*f);
    return median(v);
  }
  double server_us() const {
    std::vector<double> v;
    for (const auto& x : s) v.push_back(x.server_us_per_review);
    return median(v);
  }
  double client_cores() const {
    std::vector<double> v;
    for (const auto& x : s) v.push_back(x.r.cpu_seconds / x.r.seconds);
    return median(v);
  }
  std::uint64_t failed() const {
    std::uint64_t n = 0;
    for (const auto& x : s) n += x.r.failed;
    return n;
  }
  std::string first_error() const {
    for (const auto& x : s) {
      if (!x.r.error.empty()) return x.r.error;
    }
    return "";
  }
};

int client_main(int port, const std::string& ca, const std::string& body_file,
                const std::string& expected_file, bool echo, int connections, double rate, double warmup,
                double seconds) {
  bench::LoadSpec spec;
  spec.port = port;
  spec.path = api::keys::kLatePath;
  spec.ca_file = ca;
  spec.body = common::read_file(body_file).value_or("");
  spec.expected = common::read_file(expected_file).value_or("");
  spec.uid = bench::kUid;
  spec.echo_uid = echo;
  spec.connections = connections;
  spec.rate = rate;
  spec.warmup_seconds = warmup;
  spec.seconds = seconds;
  std::printf("%s\n", bench::to_json(bench::run_load(spec)).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kubex admission webhook benchmark (issue 6)"};
  int reps = 5;
  double seconds = 5, warmup = 1, rate = 1000, rate_seconds = 10;
  int rate_connections = 8;
  std::vector<int> concurrency = {1, 8, 64};
  bool no_pin = false;
  int threads_flag = 0;
  std::string source_dir = kubex_paths::source_dir();
  app.add_option("--reps", reps, "repetitions of every run (medians are reported)");
  app.add_option("--seconds", seconds, "measured seconds of every closed-loop run");
  app.add_option("--warmup", warmup, "seconds before measuring");
  app.add_option("--concurrency", concurrency, "concurrent keep-alive clients of the closed-loop runs");
  app.add_option("--rate", rate, "reviews/s of the fixed-rate run (0: skip it)");
  app.add_option("--rate-seconds", rate_seconds, "measured seconds of every fixed-rate run");
  app.add_option("--rate-connections", rate_connections, "keep-alive connections of the fixed-rate run");
  app.add_option("--threads", threads_flag, "webhook server threads (default: the engine's)");
  app.add_flag("--no-pin", no_pin, "do not pin the server and nginx to CPU 0 and the client to CPU 1");
  app.add_option("--source-dir", source_dir, "the kubex checkout (for examples/kai-gpu-sharing.yaml)");
  bool client = false, no_echo = false;
  int c_port = 0, c_connections = 1;
  std::string c_ca, c_body, c_expected;
  app.add_flag("--client", client)->group("");
  app.add_option("--port", c_port)->group("");
  app.add_option("--ca", c_ca)->group("");
  app.add_option("--body-file", c_body)->group("");
  app.add_option("--expected-file", c_expected)->group("");
  app.add_flag("--no-echo", no_echo)->group("");
  app.add_option("--connections", c_connections)->group("");
  CLI11_PARSE(app, argc, argv);
  if (client) {
    return client_main(c_port, c_ca, c_body, c_expected, !no_echo, c_connections, rate, warmup, seconds);
  }
  signal(SIGPIPE, SIG_IGN);
  const bool pin = !no_pin;
  if (pin && !pin_to(0)) {
    std::fprintf(stderr, "cannot pin to CPU 0; use --no-pin\n");
    return 1;
  }

  auto scenario = bench::make_scenario(source_dir);
  if (!scenario) {
    std::fprintf(stderr, "scenario: %s\n", scenario.error().str().c_str());
    return 1;
  }
  // The handler's one `rightsizing summary` line per review is formatted and written, as in the engine
  // (info level), to /dev/null instead of the container's stdout.
  std::FILE* devnull = std::fopen("/dev/null", "w");
  common::set_log_output(devnull);
  common::set_log_level(common::LogLevel::kInfo);

  auto certs = webhook::generate_self_signed({});
  if (!certs) {
    std::fprintf(stderr, "certificates: %s\n", certs.error().str().c_str());
    return 1;
  }
  auto serving = webhook::ServingCertificate::from_pem(certs->serving);
  if (!serving) {
    std::fprintf(stderr, "serving certificate: %s\n", serving.error().str().c_str());
    return 1;
  }
  kube::Metrics metrics;
  webhook::AdmissionMetrics admission_metrics(metrics);
  webhook::ServerOptions so;  // the engine's defaults (threads, keep-alive), on a free loopback port
  so.bind_address = "127.0.0.1:0";
  if (threads_flag > 0) so.threads = threads_flag;
  const int server_threads = so.threads > 0 ? so.threads : webhook::default_server_threads();
  webhook::Server server(so, *serving);
  server.set_observer(admission_metrics.observer());
  auto handler = std::make_shared<webhook::PodAdmission>(bench::pod_admission_deps(*scenario));
  const webhook::HandlerOptions ho = webhook::PodAdmission::handler_options();  // as the engine installs it
  server.handle(
      api::keys::kLatePath,
      [handler](const webhook::AdmissionRequest& r) { return handler->handle(r, decide::Pass::kLate); }, ho);
  if (auto r = server.start(); !r) {
    std::fprintf(stderr, "server: %s\n", r.error().str().c_str());
    return 1;
  }
  const int port = server.port();

  fs::path dir = fs::temp_directory_path() / ("kubex-bench-webhook-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ClientArgs ca{argv[0], (dir / "ca.crt").string(), (dir / "review.json").string(),
                (dir / "response.json").string(), pin};
  (void)common::write_file_atomic(ca.ca_file, certs->ca.cert_pem, 0644);
  (void)common::write_file_atomic(ca.body_file, scenario->review, 0644);

  // The reference response, fully checked (allowed, and a patch that makes the expected KAI pod), and the
  // same bytes for another uid: the load clients then compare every answer with it byte for byte.
  std::string expected;
  {
    httplib::SSLClient c("127.0.0.1", port);
    c.set_ca_cert_path(ca.ca_file.c_str());
    c.enable_server_certificate_verification(true);
    auto res = c.Post(api::keys::kLatePath, scenario->review, "application/json");
    std::string why = !res                 ? "no answer"
                      : res->status != 200 ? "HTTP " + std::to_string(res->status)
                                           : bench::check_response(*scenario, res->body, bench::kUid);
    std::string other = scenario->review;
    const std::string uid2 = "5f0b1c2d-3e4f-4a5b-8c6d-0123456789ab";
    other.replace(other.find(bench::kUid), uid2.size(), uid2);
    auto res2 = c.Post(api::keys::kLatePath, other, "application/json");
    if (why.empty()) why = !res2 ? "no answer" : bench::check_response(*scenario, res2->body, uid2);
    if (why.empty()) {
      std::string back = res2->body;
      back.replace(back.find(uid2), uid2.size(), bench::kUid);
      if (back != res->body) why = "the response is not the same for every uid";
    }
    if (!why.empty()) {
      std::fprintf(stderr, "the webhook's answer is wrong: %s\n", why.c_str());
      return 1;
    }
    expected = res->body;
  }
  (void)common::write_file_atomic(ca.expected_file, expected, 0644);
  Nginx nginx = start_nginx(dir / "nginx", expected, certs->serving, port + 1, pin);
  if (!nginx.error.empty()) {
    std::fprintf(stderr, "%s\n", nginx.error.c_str());
    return 1;
  }

  auto kubex_run = [&](int conns, double r, double secs) {
    double c0 = self_cpu();
    Sample s{run_client(ca, port, true, conns, r, warmup, secs)};
    double c1 = self_cpu();
    if (s.r.total) s.server_us_per_review = (c1 - c0) * 1e6 / static_cast<double>(s.r.total);
    return s;
  };
  auto nginx_run = [&](int conns, double r, double secs) {
    double c0 = proc_cpu(nginx.pid);
    Sample s{run_client(ca, nginx.port, false, conns, r, warmup, secs)};
    double c1 = proc_cpu(nginx.pid);
    if (s.r.total) s.server_us_per_review = (c1 - c0) * 1e6 / static_cast<double>(s.r.total);
    return s;
  };
  auto progress = [t0 = std::chrono::steady_clock::now()](const std::string& what, const Sample& s) {
    std::fprintf(stderr,
                 "[%6.1f s] %-20s %7.0f/s p50 %.3f ms p99 %.3f ms max %.1f ms; %d connections answered; "
                 "server %.0f us/answer; failed %llu %s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), what.c_str(),
                 s.r.throughput, s.r.p50_ms, s.r.p99_ms, s.r.max_ms, s.r.connections_answered,
                 s.server_us_per_review, static_cast<unsigned long long>(s.r.failed), s.r.error.c_str());
  };

  std::vector<std::pair<Series, Series>> closed(concurrency.size());
  for (std::size_t i = 0; i < concurrency.size(); ++i) {
    for (int r = 0; r < reps; ++r) {  // interleaved, so a disturbance hits both sides alike
      closed[i].first.s.push_back(kubex_run(concurrency[i], 0, seconds));
      progress("kubex c=" + std::to_string(concurrency[i]), closed[i].first.s.back());
      closed[i].second.s.push_back(nginx_run(concurrency[i], 0, seconds));
      progress("nginx c=" + std::to_string(concurrency[i]), closed[i].second.s.back());
    }
  }
  Series fixed_kubex, fixed_nginx;
  if (rate > 0) {
    for (int r = 0; r < reps; ++r) {
      fixed_kubex.s.push_back(kubex_run(rate_connections, rate, rate_seconds));
      progress("kubex fixed rate", fixed_kubex.s.back());
      fixed_nginx.s.push_back(nginx_run(rate_connections, rate, rate_seconds));
      progress("nginx fixed rate", fixed_nginx.s.back());
    }
  }
  kill(nginx.pid, SIGTERM);
  server.stop();

  std::uint64_t failed = 0;
  std::string error;
  for (auto& [k, n] : closed) {
    failed += k.failed() + n.failed();
    if (error.empty()) error = k.first_error().empty() ? n.first_error() : k.first_error();
  }
  failed += fixed_kubex.failed() + fixed_nginx.failed();
  if (error.empty())
    error = fixed_kubex.first_error().empty() ? fixed_nginx.first_error() : fixed_kubex.first_error();

  std::printf("## Admission webhook: /mutate--v1-pod over TLS vs nginx\n\n");
  std::printf(
      "AdmissionReview request %zu bytes, response %zu bytes (patch included); catalog %d strategies, "
      "%d policies; webhook server threads %d; %s; %d x %.0f s per closed-loop point (+%.0f s warm-up), "
      "medians.\n\n",
      scenario->review.size(), expected.size(), scenario->strategies, scenario->policies, server_threads,
      pin ? "server and nginx on CPU 0, client on CPU 1" : "not pinned", reps, seconds, warmup);
  std::printf(
      "| clients | kubex reviews/s | kubex p50 / p99 | nginx responses/s | nginx p50 / p99 | kubex/nginx "
      "throughput | server CPU per answer, kubex / nginx | client CPU (cores), kubex / nginx |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (std::size_t i = 0; i < concurrency.size(); ++i) {
    const Series& k = closed[i].first;
    const Series& n = closed[i].second;
    double kt = k.med(&LoadResult::throughput), nt = n.med(&LoadResult::throughput);
    std::printf(
        "| %d | %.0f | %.2f / %.2f ms | %.0f | %.2f / %.2f ms | **%.0f%%** | %.0f / %.0f µs | %.2f / %.2f "
        "|\n",
        concurrency[i], kt, k.med(&LoadResult::p50_ms), k.med(&LoadResult::p99_ms), nt,
        n.med(&LoadResult::p50_ms), n.med(&LoadResult::p99_ms), nt > 0 ? 100 * kt / nt : 0.0, k.server_us(),
        n.server_us(), k.client_cores(), n.client_cores());
  }
  if (rate > 0) {
    std::printf(
        "\nFixed rate: %.0f reviews/s over %d keep-alive connections, %.0f s per run, latency from each "
        "request's scheduled send time.\n\n",
        rate, rate_connections, rate_seconds);
    std::printf(
        "| server | achieved/s | p50 | p99 | p99.9 | max | sent > 1 ms late | server CPU (cores) |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const auto& [name, s] :
         {std::pair<const char*, Series*>{"kubex", &fixed_kubex}, {"nginx", &fixed_nginx}}) {
      std::vector<double> late;
      for (const auto& x : s->s) late.push_back(static_cast<double>(x.r.late));
      std::printf("| %s | %.0f | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.0f | %.2f |\n", name,
                  s->med(&LoadResult::throughput), s->med(&LoadResult::p50_ms), s->med(&LoadResult::p99_ms),
                  s->med(&LoadResult::p999_ms), s->med(&LoadResult::max_ms), median(late),
                  s->server_us() * rate / 1e6);
    }
  }
  std::printf("\nfailed or wrong answers: %llu%s%s\n", static_cast<unsigned long long>(failed),
              error.empty() ? "" : " — first: ", error.c_str());
  std::error_code ec;
  fs::remove_all(dir, ec);
  return failed == 0 ? 0 : 2;
}
