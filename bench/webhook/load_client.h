// The benchmark's load client: N threads, each with one keep-alive HTTPS connection (cpp-httplib SSLClient,
// TCP_NODELAY, server certificate verified), POSTing the same AdmissionReview body with a fresh uid per
// request, and checking every answer byte for byte against the reference response (the uid echoed or not).
//
// Closed loop (rate 0): each thread sends its next request as soon as the previous answer arrived.
// Fixed rate: requests are scheduled at `rate` per second in total, spread round-robin over the threads, and
// latency is measured from each request's SCHEDULED send time, so a slow answer that delays the next request
// on its connection is charged to that request too (no coordinated omission).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kubex::bench {

struct LoadSpec {
  int port = 0;
  std::string path;  // e.g. /mutate--v1-pod
  std::string ca_file;
  std::string body;      // the request body; contains `uid` once
  std::string uid;       // rewritten in place (same length) per request
  std::string expected;  // the reference response, with `uid` where the server echoes it
  bool echo_uid = true;  // kubex echoes the request uid; nginx's static file does not
  int connections = 1;
  double rate = 0;  // reviews/s in total; 0 = closed loop
  double warmup_seconds = 1;
  double seconds = 5;
};

struct LoadResult {
  std::uint64_t ok = 0, failed = 0;
  std::uint64_t total = 0;  // correct answers over the whole run, warm-up included (server CPU per review)
  double seconds = 0;       // the measured window
  double throughput = 0;
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;
  double cpu_seconds = 0;        // the client process's user+system CPU during the window
  std::uint64_t late = 0;        // fixed rate: requests sent more than 1 ms after their scheduled time
  int connections_answered = 0;  // connections that got at least one answer inside the window
  std::string error;             // the first failure, if any
};

LoadResult run_load(const LoadSpec& spec);

// One line of JSON, and back (how the client process reports to the benchmark driver).
std::string to_json(const LoadResult& r);
LoadResult load_result_from_json(const std::string& text);

double percentile(std::vector<double> v, double p);
double median(std::vector<double> v);

}  // namespace kubex::bench
