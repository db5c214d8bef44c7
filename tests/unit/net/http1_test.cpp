// HTTP/1.1 request parsing and response formatting of the engine's listener (net/tls_server.h): framing by
// Content-Length and chunked, keep-alive rules, 100-continue, and the errors a bad request gets.
#include "net/http1.h"

#include <gtest/gtest.h>

namespace kubex::net::http1 {
namespace {

struct Parsed {
  State state;
  Request request;
  std::size_t consumed = 0;
  int status = 0;
  std::string message;
};

Parsed parse(std::string_view input, Limits limits = {}) {
  Parser p(limits);
  Parsed out;
  out.state = p.parse(input);
  out.request = p.request();
  out.consumed = p.consumed();
  out.status = p.error_status();
  out.message = p.error_message();
  return out;
}

TEST(Http1, ContentLengthBodyAndQueryStripped) {  // kube-apiserver appends ?timeout=10s
  std::string req =
      "POST /mutate--v1-pod?timeout=10s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: 5\r\n\r\nhello";
  Parsed p = parse(req + "GET /next");
  ASSERT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.request.method, "POST");
  EXPECT_EQ(p.request.target, "/mutate--v1-pod?timeout=10s");
  EXPECT_EQ(p.request.path, "/mutate--v1-pod");
  EXPECT_EQ(p.request.body, "hello");
  EXPECT_TRUE(p.request.keep_alive);
  EXPECT_EQ(p.consumed, req.size());  // the next request's bytes are left
}

TEST(Http1, IncrementalArrivalCompletesOnce) {
  std::string req = "POST /v HTTP/1.1\r\ncontent-length: 3\r\n\r\nabc";
  Parser p;
  for (std::size_t n = 0; n < req.size(); ++n) {
    ASSERT_EQ(p.parse(std::string_view(req).substr(0, n)), State::kIncomplete) << n;
  }
  ASSERT_EQ(p.parse(req), State::kComplete);
  EXPECT_EQ(p.request().body, "abc");
}

TEST(Http1, ChunkedBodyWithExtensionsAndTrailers) {
  std::string req =
      "POST /v HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Trailer: y\r\n\r\n";
  Parser p;
  for (std::size_t n = 0; n < req.size(); ++n) {
    ASSERT_NE(p.parse(std::string_view(req).substr(0, n)), State::kComplete) << n;
  }
  ASSERT_EQ(p.parse(req), State::kComplete);
  EXPECT_EQ(p.request().body, "Wikipedia");
  EXPECT_EQ(p.consumed(), req.size());
}

TEST(Http1, KeepAliveByVersionAndConnectionHeader) {
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").request.keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").request.keep_alive);
  EXPECT_TRUE(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").request.keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.1\r\nConnection: TE, close\r\n\r\n").request.keep_alive);
}

TEST(Http1, ExpectContinueIsReportedBeforeTheBody) {
  Parser p;
  std::string head = "POST /v HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
  EXPECT_FALSE(p.wants_continue());
  ASSERT_EQ(p.parse(head), State::kIncomplete);
  EXPECT_TRUE(p.wants_continue());
  ASSERT_EQ(p.parse(head + "ok"), State::kComplete);
  EXPECT_EQ(p.request().body, "ok");
}

TEST(Http1, LeadingEmptyLinesAreIgnored) {
  Parsed p = parse("\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n");
  ASSERT_EQ(p.state, State::kComplete);
  EXPECT_EQ(p.request.path, "/healthz");
}

TEST(Http1, BadRequestsGetTheirStatus) {
  struct Case {
    std::string input;
    int status;
    std::string message_part;
  };
  const std::vector<Case> cases = {
      {"GARBAGE\r\n\r\n", 400, "request line"},
      {"GET  / HTTP/1.1\r\n\r\n", 400, "request line"},
      {"GET http://x/ HTTP/1.1\r\n\r\n", 400, "absolute path"},
      {"GET / HTTP/2.0\r\n\r\n", 505, "not supported"},
      {"GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400, "header line"},
      {"GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", 400, "folding"},
      {"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400, "not a number"},
      {"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400, "conflicting"},
      // Both framings: how requests are smuggled past a proxy.
      {"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400, "both"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "gzip"},
      {"POST / HTTP/1.1\r\nExpect: magic\r\n\r\n", 417, "magic"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "chunk size"},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n", 400, "chunked body"},
  };
  for (const auto& c : cases) {
    Parsed p = parse(c.input);
    EXPECT_EQ(p.state, State::kError) << c.input;
    EXPECT_EQ(p.status, c.status) << c.input;
    EXPECT_NE(p.message.find(c.message_part), std::string::npos) << c.input << " -> " << p.message;
  }
}

TEST(Http1, LimitsOnHeadersAndBody) {
  Limits small{64, 10};
  EXPECT_EQ(parse("GET / HTTP/1.1\r\nX: " + std::string(100, 'a'), small).status, 431);
  EXPECT_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n", small).status, 413);
  EXPECT_EQ(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\n", small).status,
            413);
  EXPECT_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789", small).state, State::kComplete);
}

TEST(Http1, ResetReadsTheNextRequest) {
  std::string two = "GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
  Parser p;
  ASSERT_EQ(p.parse(two), State::kComplete);
  EXPECT_EQ(p.request().path, "/a");
  std::string rest = two.substr(p.consumed());
  p.reset();
  ASSERT_EQ(p.parse(rest), State::kComplete);
  EXPECT_EQ(p.request().path, "/b");
}

TEST(Http1, FormatResponse) {
  EXPECT_EQ(format_response(200, "application/json", "{}", true),
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            "Connection: keep-alive\r\n\r\n{}");
  EXPECT_EQ(format_response(400, "", "", false),
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

}  // namespace
}  // namespace kubex::net::http1
