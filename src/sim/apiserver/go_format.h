// Go's formatting where it leaks into kube-apiserver's messages: strconv.Quote (%q), fmt's %v of a
// float64 and of a decoded interface{}, %T-style type names, and encoding/json's Marshal of a value
// apimachinery decoded (numbers int64 when they fit, float64 otherwise; maps sorted by key; HTML-safe
// strings). One renderer for the schema, patch and CEL messages, so they print a value the same way.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace kubex::sim {

// strconv.Quote: go_quote("a\"b\n") == R"("a\"b\n")"; invalid UTF-8 bytes print as \xff, unprintable code
// points as \u200b / \U000f0000.
std::string go_quote(std::string_view s);

// Appends Go's backslash escape of `c` when it has a one-letter one (\a \b \f \n \r \t \v \\ \"); false,
// appending nothing, for every other code point.
bool append_go_escape(std::string& out, char32_t c);

// fmt's %v of a float64 (strconv.FormatFloat(v, 'g', -1, 64)): 1.5, 1e+06, 1e-05, -0, NaN, +Inf.
std::string go_float(double v);

// json.Marshal of a decoded value: {"a":1,"b":[true,null]}.
std::string go_json(const nlohmann::json& v);

// How field.Error renders a bad value: %v for numbers and booleans, %q for strings, JSON otherwise.
std::string go_value(const nlohmann::json& v);

// fmt's %v of a decoded interface{}: map[a:1 b:[x y]], <nil>, strings unquoted.
std::string go_print(const nlohmann::json& v);

// The Go type the apiserver's int-preserving decoder gives a value: int64, float64, string, bool, <nil>,
// []interface {}, map[string]interface {}.
std::string go_type(const nlohmann::json& v);

// An unsigned number beyond int64: apimachinery decodes it as a float64.
bool is_big_unsigned(const nlohmann::json& v);

}  // namespace kubex::sim
