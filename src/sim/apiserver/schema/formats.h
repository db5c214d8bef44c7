// String formats (k8s.io/kube-openapi strfmt) that kube-apiserver checks or keeps on string schemas.
#pragma once

#include <string_view>

namespace kubex::sim::schema {

// time.Parse("2006-01-02", s) == nil
bool is_date(std::string_view s);

// strfmt.IsDateTime (RFC 3339 date-time, case-insensitive).
bool is_date_time(std::string_view s);

// Formats kube-apiserver keeps on string (or untyped) schemas, normalised without "-" ("datetime").
bool is_supported_string_format(std::string_view normalized);

}  // namespace kubex::sim::schema
