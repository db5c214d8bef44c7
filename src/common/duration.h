// Go duration strings (GPU-4): the grammar of Go's time.ParseDuration and the output of Duration.String().
//
//   [-+]? ( digits* ('.' digits*)? unit )+   or the bare "0"
//   unit ::= ns | us | µs (U+00B5) | μs (U+03BC) | ms | s | m | h
//
// Every number needs a unit ("5" is rejected, "0" is the only exception), units may repeat and come in any
// order ("1m1h" is 61 minutes), and fractions are converted the way Go converts them. Values beyond
// ±(2^63-1) ns are rejected. Error messages are Go's: `time: invalid duration "x"`,
// `time: missing unit in duration "5"`, `time: unknown unit "d" in duration "1d"`.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/result.h"

namespace kubex::common {

// "90s" -> 90s, "1m30s" -> 90s, "1.5h" -> 90min, "-1m" -> -60s. Never throws.
Result<std::chrono::nanoseconds> parse_go_duration(std::string_view s);

// Go's Duration.String(): "1m30s", "1h0m0s", "10m0s", "500ms", "1.5µs", "0s", "-1m0s".
std::string format_go_duration(std::chrono::nanoseconds d);

}  // namespace kubex::common
