// A fast JSON text → nlohmann::json parser for hot paths (the admission webhook decodes a ~4 KB
// AdmissionReview per pod created). It accepts exactly what nlohmann::json::parse accepts and builds the
// same value (RFC 8259: UTF-8 checked, surrogate pairs, a leading BOM skipped, last duplicate key wins,
// non-negative integers unsigned, negative ones signed, others double), in about a third of the time: one
// pass, strings built in place, no token buffer.
//
// It does not explain failures: on false the caller parses again with nlohmann::json::parse for its
// message. It also says false (never a different value) for what it does not handle itself: numbers out of
// the 64-bit or double range and nesting deeper than `max_depth`. tests/fuzz/json_parse_fuzz.cpp compares
// the two parsers on arbitrary input.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

namespace kubex::common {

class JsonProjection;

// true: `out` holds the value of `text`. false: `text` is not JSON (or is beyond this parser; see above),
// `out` is unspecified.
//
// With a `projection` (json_projection.h), `out` holds project(value of `text`, *projection): the parts
// left out are checked as JSON exactly as the rest (so true and false mean the same as without it) but
// never built.
bool parse_json_fast(std::string_view text, nlohmann::json& out, int max_depth = 512,
                     const JsonProjection* projection = nullptr);

}  // namespace kubex::common
