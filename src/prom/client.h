// The Prometheus HTTP API client (DESIGN §3 prom/): instant and range queries, errors as values (REA-10, VAL-8).
//
// connect() validates the options and returns a Querier; instant() sends `POST <url>/api/v1/query` with the
// form body `query=<promql>` (REA-3) under a whole-request deadline (spec.prometheus.requestTimeout). Kept-
// alive connections are reused between queries; one that the server closed while it was idle is never
// turned into an error (common/http_reuse.h): an instant query is read-only, so a query that failed on a
// reused connection is sent once more on a fresh one.
//
// Every failure is a common::Error whose message names the URL queried, e.g.
//   Prometheus query to http://127.0.0.1:9090/api/v1/query failed: connection refused
//   Prometheus query to http://127.0.0.1:9090/api/v1/query timed out after 30s
//   Prometheus query to http://127.0.0.1:9090/api/v1/query returned HTTP 503: <start of the body>
//   Prometheus query to http://127.0.0.1:9090/api/v1/query returned status "error": bad_data: <error>
//   Prometheus query to http://127.0.0.1:9090/api/v1/query returned a "scalar" result, not a vector
// A range query (`kubex plan sizing`) goes to <url>/api/v1/query_range with `query`, `start`, `end` and `step`,
// and its messages name that URL.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"

namespace kubex::prom {

struct Options {
  // GlobalConfiguration spec.prometheus.url, e.g. "http://prom.kubex.svc:9090", or with a path prefix
  // "https://h/prometheus" (queries go to <url>/api/v1/query; trailing slashes are ignored).
  std::string url;
  // spec.prometheus.requestTimeout: the whole-request deadline (connect, TLS, send, wait, read, and the one
  // resend on a fresh connection together).
  std::chrono::milliseconds timeout{30000};
  // "" = none. Sent as "Authorization: Bearer <contents without surrounding whitespace>"; the file is read
  // again whenever it changes (token rotation, including Kubernetes' symlink swaps).
  std::string bearer_token_file;
  // "" = the system trust store; else a PEM CA bundle that Prometheus's https certificate must chain to.
  std::string ca_file;
};

// One sample of an instant vector: its labels (__name__ included when Prometheus kept it) and a finite value.
struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

// An instant vector. NaN, +Inf and -Inf samples are dropped and counted (VAL-8: they count as missing).
struct Vector {
  std::vector<Sample> samples;
  std::size_t non_finite = 0;
};

// One series of a range query's matrix: its labels and its finite points in time order.
struct RangePoint {
  common::TimePoint at;
  double value = 0;
};
struct RangeSeries {
  std::map<std::string, std::string> labels;
  std::vector<RangePoint> points;
};
// A range vector ("matrix"). NaN, +Inf and -Inf points are dropped and counted (VAL-8: they count as missing).
struct Matrix {
  std::vector<RangeSeries> series;
  std::size_t non_finite = 0;
};

// What a controller queries through; a fake implements it in controller tests.
class Querier {
 public:
  virtual ~Querier() = default;
  // One instant query: POST <url>/api/v1/query, form-encoded `query=<promql>` (REA-3). Thread-safe.
  virtual common::Result<Vector> instant(const std::string& promql) = 0;
  // One range query: POST <url>/api/v1/query_range, form-encoded `query`, `start` and `end` (unix seconds, to the
  // millisecond) and `step` (whole seconds). Thread-safe. The base answers with an error (fakes without ranges).
  virtual common::Result<Matrix> range(const std::string& promql, common::TimePoint start, common::TimePoint end,
                                       std::chrono::seconds step);
  virtual const Options& options() const = 0;
};

// Validates the options and returns a client: the URL is absolute http:// or https:// with a host (an
// optional port and path; no user info, query or fragment), the timeout is > 0, and a CA file is readable
// and holds at least one PEM certificate. No network I/O here; the token file is read by the first query.
common::Result<std::unique_ptr<Querier>> connect(const Options& options);

// Pure (VAL-8): an /api/v1/query response (HTTP status code and body) -> its vector, or the error. Anything
// but `"status": "success"` with a "vector" result is an error; a body with `"status": "error"` is reported
// by its errorType and error whatever the HTTP status (Prometheus sends them with 400, 422, 503...), else a
// non-2xx status is reported with the start of the body. The message starts with "Prometheus query"; the
// client's messages say "Prometheus query to <url>" instead.
common::Result<Vector> parse_query_response(int http_status, std::string_view body);

// parse_query_response with the queried URL named in the message ("Prometheus query to <query_url> ...").
common::Result<Vector> parse_query_response(int http_status, std::string_view body, std::string_view query_url);

// Pure (VAL-8): an /api/v1/query_range response -> its matrix, or the error, with the rules of
// parse_query_response except that the result must be a "matrix" of {"metric": {...}, "values": [[<ts>,
// "<number>"], ...]}; a series whose every point is NaN or Inf is left out.
common::Result<Matrix> parse_range_response(int http_status, std::string_view body);
common::Result<Matrix> parse_range_response(int http_status, std::string_view body, std::string_view query_url);

}  // namespace kubex::prom
