#include "net/http1.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace kubex::net::http1 {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
           return lower(x) == lower(y);
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// RFC 9110 token characters (header names, methods).
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (c <= 32 || c >= 127) return false;
    if (std::string_view("\"(),/:;<=>?@[\\]{}").find(static_cast<char>(c)) != std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// Calls fn(token) for each comma-separated element of a header value.
template <typename Fn>
void each_token(std::string_view value, Fn fn) {
  while (!value.empty()) {
    auto comma = value.find(',');
    fn(trim(value.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

}  // namespace

void Parser::reset() {
  Limits limits = limits_;
  *this = Parser(limits);
}

State Parser::fail(int status, std::string message) {
  error_status_ = status;
  error_message_ = std::move(message);
  return State::kError;
}

State Parser::parse(std::string_view input) {
  if (error_status_ != 0) return State::kError;
  if (head_len_ == 0) {
    // RFC 9112 §2.2: empty lines before the request line are ignored.
    std::size_t lead = 0;
    while (lead + 1 < input.size() && input[lead] == '\r' && input[lead + 1] == '\n') lead += 2;
    if (input.size() > lead) started_ = true;
    std::size_t from = std::max(searched_, lead);
    auto end = input.find("\r\n\r\n", from);
    if (end == std::string_view::npos) {
      if (input.size() - lead > limits_.max_header_bytes) {
        return fail(431,
                    "request headers are larger than " + std::to_string(limits_.max_header_bytes) + " bytes");
      }
      searched_ = input.size() >= 3 ? input.size() - 3 : 0;
      return State::kIncomplete;
    }
    if (end + 4 - lead > limits_.max_header_bytes) {
      return fail(431,
                  "request headers are larger than " + std::to_string(limits_.max_header_bytes) + " bytes");
    }
    if (auto st = parse_head(input.substr(lead, end + 2 - lead)); st == State::kError) return st;
    head_len_ = end + 4;
    chunk_pos_ = head_len_;
  }
  if (chunked_) return parse_chunked(input);
  if (input.size() - head_len_ < content_length_) return State::kIncomplete;
  request_.body.assign(input.substr(head_len_, content_length_));
  consumed_ = head_len_ + content_length_;
  return State::kComplete;
}

State Parser::parse_head(std::string_view head) {
  auto eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  head.remove_prefix(eol + 2);
  auto sp1 = line.find(' ');
  auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return fail(400, "malformed request line");
  }
  std::string_view method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1),
                   version = line.substr(sp2 + 1);
  if (!is_token(method)) return fail(400, "malformed request method");
  if (target.empty() || target.front() != '/')
    return fail(400, "the request target must be an absolute path");
  for (unsigned char c : target) {
    if (c <= 32 || c >= 127) return fail(400, "malformed request target");
  }
  if (version == "HTTP/1.1") {
    request_.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    request_.minor_version = 0;
  } else if (version.starts_with("HTTP/")) {
    return fail(505, "HTTP version " + std::string(version.substr(5)) + " is not supported");
  } else {
    return fail(400, "malformed request line");
  }
  request_.method.assign(method);
  request_.target.assign(target);
  request_.path.assign(target.substr(0, target.find('?')));
  request_.keep_alive = request_.minor_version == 1;

  bool have_length = false, have_te = false;
  while (!head.empty()) {
    eol = head.find("\r\n");
    line = head.substr(0, eol);
    head.remove_prefix(eol == std::string_view::npos ? head.size() : eol + 2);
    if (line.empty()) continue;
    if (line.front() == ' ' || line.front() == '\t') return fail(400, "obsolete header line folding");
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return fail(400, "malformed header line");
    std::string_view name = line.substr(0, colon), value = trim(line.substr(colon + 1));
    if (!is_token(name)) return fail(400, "malformed header name");
    if (iequals(name, "Content-Length")) {
      std::size_t n = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size()) {
        return fail(400, "Content-Length is not a number");
      }
      if (have_length && n != content_length_) return fail(400, "conflicting Content-Length headers");
      have_length = true;
      content_length_ = n;
    } else if (iequals(name, "Transfer-Encoding")) {
      std::string_view last;
      each_token(value, [&](std::string_view t) { last = t; });
      if (!iequals(last, "chunked")) {
        return fail(501, "Transfer-Encoding " + std::string(value) + " is not supported");
      }
      have_te = chunked_ = true;
    } else if (iequals(name, "Connection")) {
      each_token(value, [&](std::string_view t) {
        if (iequals(t, "close")) request_.keep_alive = false;
        if (iequals(t, "keep-alive") && request_.minor_version == 0) request_.keep_alive = true;
      });
    } else if (iequals(name, "Expect")) {
      if (!iequals(value, "100-continue"))
        return fail(417, "Expect " + std::string(value) + " is not supported");
      request_.expect_continue = request_.minor_version == 1;
    }
  }
  if (have_length && have_te) return fail(400, "both Content-Length and Transfer-Encoding are set");
  if (have_length && content_length_ > limits_.max_body_bytes) {
    return fail(413, "the request body is larger than " + std::to_string(limits_.max_body_bytes) + " bytes");
  }
  return State::kIncomplete;
}

State Parser::parse_chunked(std::string_view input) {
  while (true) {
    if (in_chunk_) {
      // chunk_left_ data bytes, then CRLF.
      if (input.size() - chunk_pos_ < chunk_left_ + 2) return State::kIncomplete;
      if (input.substr(chunk_pos_ + chunk_left_, 2) != "\r\n") return fail(400, "malformed chunked body");
      request_.body.append(input.substr(chunk_pos_, chunk_left_));
      chunk_pos_ += chunk_left_ + 2;
      in_chunk_ = false;
      continue;
    }
    auto eol = input.find("\r\n", chunk_pos_);
    if (eol == std::string_view::npos) {
      if (input.size() - chunk_pos_ > 4096) return fail(400, "malformed chunked body");
      return State::kIncomplete;
    }
    std::string_view line = input.substr(chunk_pos_, eol - chunk_pos_);
    chunk_pos_ = eol + 2;
    if (in_trailers_) {
      if (line.empty()) {
        consumed_ = chunk_pos_;
        return State::kComplete;
      }
      continue;  // trailer fields are ignored
    }
    std::string_view size = trim(line.substr(0, line.find(';')));
    std::size_t n = 0;
    auto [p, ec] = std::from_chars(size.data(), size.data() + size.size(), n, 16);
    if (size.empty() || ec != std::errc() || p != size.data() + size.size()) {
      return fail(400, "malformed chunk size");
    }
    if (n == 0) {
      in_trailers_ = true;
      continue;
    }
    if (n > limits_.max_body_bytes || request_.body.size() + n > limits_.max_body_bytes) {
      return fail(413,
                  "the request body is larger than " + std::to_string(limits_.max_body_bytes) + " bytes");
    }
    chunk_left_ = n;
    in_chunk_ = true;
  }
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string format_response(int status, std::string_view content_type, std::string_view body,
                            bool keep_alive) {
  std::string out;
  out.reserve(128 + content_type.size() + body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += reason_phrase(status);
  out += "\r\n";
  if (!content_type.empty()) {
    out += "Content-Type: ";
    out += content_type;
    out += "\r\n";
  }
  out += "Content-Length: ";
  out += std::to_string(body.size());
  out += keep_alive ? "\r\nConnection: keep-alive\r\n\r\n" : "\r\nConnection: close\r\n\r\n";
  out += body;
  return out;
}

}  // namespace kubex::net::http1
