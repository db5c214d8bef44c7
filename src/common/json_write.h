// Writing JSON text directly (for hot paths that would otherwise build a value only to dump it).
#pragma once

#include <string>
#include <string_view>

namespace kubex::common {

// Appends `s` as a JSON string exactly as nlohmann's dump writes it (control characters escaped, UTF-8 kept,
// invalid UTF-8 replaced by U+FFFD).
void append_json_string(std::string& out, std::string_view s);

}  // namespace kubex::common
