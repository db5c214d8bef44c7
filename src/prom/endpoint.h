// spec.prometheus.url taken apart for the client (internal to prom/, exposed for its tests). Pure.
#pragma once

#include <string>

#include "common/result.h"

namespace kubex::prom {

struct Endpoint {
  bool https = false;
  std::string host;  // a name or an IP address (an IPv6 address without its brackets)
  int port = 0;      // 80 / 443 unless the URL names one
  std::string path;  // the path prefix without trailing slashes: "" or e.g. "/prometheus"
  std::string url;   // the URL as given, without trailing slashes: what error messages name
  std::string query_url() const { return url + "/api/v1/query"; }
};

// "http://h:9090", "https://h/prometheus/", "http://[::1]:9090". An error (path "spec.prometheus.url") when
// the URL is not absolute http:// or https://, has no host, an invalid port, user information, a query or a
// fragment.
common::Result<Endpoint> parse_endpoint(const std::string& url);

}  // namespace kubex::prom
