#include "prom/endpoint.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "common/quote.h"

namespace kubex::prom {

namespace {

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), s.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         });
}

bool valid_host(std::string_view h, bool bracketed) {
  if (h.empty()) return false;
  return std::all_of(h.begin(), h.end(), [bracketed](char ch) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f) return false;
    if (c == ':') return bracketed;
    return std::string_view("/\\[]<>\"{}|^`%").find(ch) == std::string_view::npos;
  });
}

}  // namespace

common::Result<Endpoint> parse_endpoint(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return common::fail(common::quote(url) + " " + why, "spec.prometheus.url");
  };
  std::string_view u = url;
  Endpoint ep;
  std::size_t scheme = 0;
  if (starts_with_nocase(u, "http://")) {
    scheme = 7;
  } else if (starts_with_nocase(u, "https://")) {
    ep.https = true;
    scheme = 8;
  } else {
    return bad("is not an absolute http:// or https:// URL");
  }
  std::string_view rest = u.substr(scheme);
  std::size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view path = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  if (path.find_first_of("?#") != std::string_view::npos) return bad("must not have a query or a fragment");
  if (authority.find('@') != std::string_view::npos) {
    return bad("must not hold user information (use a bearer token file)");
  }
  std::string_view host = authority, port;
  bool has_port = false, bracketed = false;
  if (authority.starts_with('[')) {
    std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("has an unterminated IPv6 address");
    host = authority.substr(1, close - 1);
    bracketed = true;
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("has an invalid port");
      port = after.substr(1);
      has_port = true;
    }
  } else if (std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    has_port = true;
  }
  if (host.empty()) return bad("has no host");
  if (!valid_host(host, bracketed)) return bad("has an invalid host");
  ep.host = std::string(host);
  ep.port = ep.https ? 443 : 80;
  if (has_port) {
    if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) {
          return c >= '0' && c <= '9';
        })) {
      return bad("has an invalid port");
    }
    ep.port = std::stoi(std::string(port));
    if (ep.port < 1 || ep.port > 65535) return bad("has an invalid port");
  }
  while (path.ends_with('/')) path.remove_suffix(1);
  ep.path = std::string(path);
  ep.url = std::string(u.substr(0, scheme + authority.size())) + ep.path;
  return ep;
}

}  // namespace kubex::prom
