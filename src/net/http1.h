// HTTP/1.1 requests and responses for the engine's own listener (RFC 9112; net/tls_server.h): an
// incremental request parser for the bytes of one connection, and response formatting. Pure: no I/O.
//
// What it accepts is what kube-apiserver, kubectl proxies, curl and the Python client send: a request line,
// headers, and a body framed by Content-Length or `Transfer-Encoding: chunked` (never both: that framing
// conflict is how requests are smuggled, so it is a 400). Keep-alive follows the version and `Connection`;
// `Expect: 100-continue` is reported so the server can answer 100 before the body arrives.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kubex::net::http1 {

struct Limits {
  std::size_t max_header_bytes = 64u << 10;  // request line + headers; beyond: 431
  std::size_t max_body_bytes = 16u << 20;    // beyond: 413
};

struct Request {
  std::string method;
  std::string target;  // as sent, e.g. "/mutate--v1-pod?timeout=10s"
  std::string path;    // target without the query
  int minor_version = 1;
  bool keep_alive = true;  // HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `keep-alive`
  bool expect_continue = false;
  std::string body;
};

enum class State { kIncomplete, kComplete, kError };

class Parser {
 public:
  explicit Parser(Limits limits = {}) : limits_(limits) {}

  // `input` holds the bytes received for this request so far (and possibly the next one's after it); the
  // same prefix must be passed again, longer, after kIncomplete. kComplete: request() is ready and the
  // first consumed() bytes of `input` belonged to it; call reset() before the next request.
  State parse(std::string_view input);
  // After kIncomplete: the head was read and asked for `100 Continue`, and the body has not arrived.
  bool wants_continue() const { return head_len_ != 0 && request_.expect_continue; }
  // After kIncomplete: part of a request has arrived (for telling an idle connection from a slow one).
  bool started() const { return started_; }

  Request& request() { return request_; }
  std::size_t consumed() const { return consumed_; }
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }
  void reset();

 private:
  State fail(int status, std::string message);
  State parse_head(std::string_view head);
  State parse_chunked(std::string_view input);

  Limits limits_;
  Request request_;
  bool started_ = false;
  std::size_t searched_ = 0;  // bytes already searched for the end of the head
  std::size_t head_len_ = 0;  // 0 until the head is parsed
  bool chunked_ = false;
  std::size_t content_length_ = 0;
  std::size_t chunk_pos_ = 0;   // chunked: where the next chunk-size line (or data) starts
  std::size_t chunk_left_ = 0;  // chunked: data bytes left in the current chunk (then CRLF)
  bool in_chunk_ = false, in_trailers_ = false;
  std::size_t consumed_ = 0;
  int error_status_ = 0;
  std::string error_message_;
};

// "OK", "Bad Request", ... ("Unknown" for codes it does not know).
const char* reason_phrase(int status);

// A whole response: status line, Content-Type (when not empty), Content-Length, Connection, body.
std::string format_response(int status, std::string_view content_type, std::string_view body,
                            bool keep_alive);

}  // namespace kubex::net::http1
