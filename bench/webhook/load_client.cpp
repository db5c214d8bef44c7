#include "load_client.h"

#include <httplib.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

namespace kubex::bench {

namespace {

using Clock = std::chrono::steady_clock;

double cpu_now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// Writes `n` as 12 lowercase hex digits over the last 12 characters of the uid at `at`.
void stamp_uid(std::string& s, std::size_t at, std::size_t uid_len, std::uint64_t n) {
  static const char* kHex = "0123456789abcdef";
  for (std::size_t i = 0; i < 12; ++i) {
    s[at + uid_len - 1 - i] = kHex[n & 0xf];
    n >>= 4;
  }
}

struct Worker {
  std::vector<double> latencies;
  std::uint64_t ok = 0, failed = 0, late = 0, total = 0, in_window = 0;
  std::string error;
};

}  // namespace

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

LoadResult run_load(const LoadSpec& spec) {
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // fixed-rate sleeps wake on time
  LoadResult out;
  const std::size_t body_uid = spec.body.find(spec.uid);
  const std::size_t expected_uid = spec.echo_uid ? spec.expected.find(spec.uid) : std::string::npos;
  if (body_uid == std::string::npos || (spec.echo_uid && expected_uid == std::string::npos)) {
    out.error = "the request body or the reference response does not contain the uid";
    return out;
  }
  const int n = std::max(1, spec.connections);
  const auto t0 = Clock::now() + std::chrono::milliseconds(100);
  const auto warm_end =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.warmup_seconds));
  const auto end =
      warm_end + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.seconds));
  std::vector<Worker> workers(static_cast<std::size_t>(n));
  std::vector<std::thread> threads;
  for (int w = 0; w < n; ++w) {
    threads.emplace_back([&, w] {
      Worker& me = workers[static_cast<std::size_t>(w)];
      me.latencies.reserve(spec.rate > 0 ? static_cast<std::size_t>(spec.rate * spec.seconds / n) + 16
                                         : 200000);
      httplib::SSLClient c("127.0.0.1", spec.port);
      c.set_ca_cert_path(spec.ca_file.c_str());
      c.enable_server_certificate_verification(true);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);
      c.set_read_timeout(10, 0);
      c.set_write_timeout(10, 0);
      std::string body = spec.body;
      std::uint64_t seq = static_cast<std::uint64_t>(w) << 40;
      std::this_thread::sleep_until(t0);
      for (std::uint64_t k = 0;; ++k) {
        Clock::time_point scheduled{};
        if (spec.rate > 0) {
          double at = static_cast<double>(k * static_cast<std::uint64_t>(n) + static_cast<std::uint64_t>(w)) /
                      spec.rate;
          scheduled = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(at));
          if (scheduled >= end) break;
          std::this_thread::sleep_until(scheduled);
        }
        stamp_uid(body, body_uid, spec.uid.size(), ++seq);
        const auto sent = Clock::now();
        if (spec.rate <= 0) {
          if (sent >= end) break;
          scheduled = sent;
        }
        auto res = c.Post(spec.path, body, "application/json");
        const auto done = Clock::now();
        std::string why;
        if (!res) {
          why = "request failed: " + httplib::to_string(res.error());
        } else if (res->status != 200) {
          why = "HTTP " + std::to_string(res->status) + ": " + res->body.substr(0, 200);
        } else if (res->body.size() != spec.expected.size()) {
          why = "response of " + std::to_string(res->body.size()) + " bytes, expected " +
                std::to_string(spec.expected.size()) + ": " + res->body.substr(0, 300);
        } else if (!spec.echo_uid) {
          if (res->body != spec.expected) why = "response differs from the reference";
        } else {
          const std::string& b = res->body;
          const std::size_t tail = expected_uid + spec.uid.size();
          if (b.compare(0, expected_uid, spec.expected, 0, expected_uid) != 0 ||
              b.compare(expected_uid, spec.uid.size(), body, body_uid, spec.uid.size()) != 0 ||
              b.compare(tail, std::string::npos, spec.expected, tail, std::string::npos) != 0) {
            why = "response differs from the reference (or does not echo the uid)";
          }
        }
        if (why.empty()) ++me.total;
        // Latency: every request sent (closed loop) or scheduled (fixed rate) inside the window, however late
        // it is answered, so a connection the server leaves waiting is not dropped from the percentiles.
        // Throughput: correct answers received inside the window.
        if (why.empty() && done >= warm_end && done <= end) ++me.in_window;
        if (scheduled < warm_end) continue;
        if (!why.empty()) {
          ++me.failed;
          if (me.error.empty()) me.error = why;
          continue;
        }
        ++me.ok;
        me.latencies.push_back(ms(done - scheduled));
        if (spec.rate > 0 && sent - scheduled > std::chrono::milliseconds(1)) ++me.late;
      }
    });
  }
  std::this_thread::sleep_until(warm_end);
  double cpu0 = cpu_now();
  std::this_thread::sleep_until(end);
  double cpu1 = cpu_now();
  for (auto& t : threads) t.join();
  std::vector<double> all;
  std::uint64_t in_window = 0;
  for (auto& w : workers) {
    out.ok += w.ok;
    out.failed += w.failed;
    out.late += w.late;
    out.total += w.total;
    in_window += w.in_window;
    if (w.in_window > 0) ++out.connections_answered;
    if (out.error.empty()) out.error = w.error;
    all.insert(all.end(), w.latencies.begin(), w.latencies.end());
  }
  out.seconds = spec.seconds;
  out.throughput = static_cast<double>(in_window) / spec.seconds;
  out.cpu_seconds = cpu1 - cpu0;
  out.p50_ms = percentile(all, 0.50);
  out.p99_ms = percentile(all, 0.99);
  out.p999_ms = percentile(all, 0.999);
  out.max_ms = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  return out;
}

std::string to_json(const LoadResult& r) {
  return nlohmann::json{{"ok", r.ok},           {"failed", r.failed},
                        {"seconds", r.seconds}, {"throughput", r.throughput},
                        {"p50", r.p50_ms},      {"p99", r.p99_ms},
                        {"p999", r.p999_ms},    {"max", r.max_ms},
                        {"cpu", r.cpu_seconds}, {"late", r.late},
                        {"total", r.total},     {"answered", r.connections_answered},
                        {"error", r.error}}
      .dump();
}

LoadResult load_result_from_json(const std::string& text) {
  LoadResult r;
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) {
    r.error = "the load client printed no result: " + text.substr(0, 300);
    return r;
  }
  r.ok = j.value("ok", std::uint64_t{0});
  r.failed = j.value("failed", std::uint64_t{0});
  r.seconds = j.value("seconds", 0.0);
  r.throughput = j.value("throughput", 0.0);
  r.p50_ms = j.value("p50", 0.0);
  r.p99_ms = j.value("p99", 0.0);
  r.p999_ms = j.value("p999", 0.0);
  r.max_ms = j.value("max", 0.0);
  r.cpu_seconds = j.value("cpu", 0.0);
  r.late = j.value("late", std::uint64_t{0});
  r.total = j.value("total", std::uint64_t{0});
  r.connections_answered = j.value("answered", 0);
  r.error = j.value("error", "");
  return r;
}

}  // namespace kubex::bench
