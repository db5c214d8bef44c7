// Quoting user input inside an error message: `"` and `\` are escaped with a backslash, ASCII control
// characters and DEL print as \xHH, every other byte (UTF-8 included) is kept as it is.
#pragma once

#include <string>
#include <string_view>

namespace kubex::common {

// quote("1d") == "\"1d\""; quote("a\"b") == "\"a\\\"b\""; quote("\n") == "\"\\x0a\"".
std::string quote(std::string_view s);

}  // namespace kubex::common
