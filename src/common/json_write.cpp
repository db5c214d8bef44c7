#include "common/json_write.h"

#include <nlohmann/json.hpp>

namespace kubex::common {

void append_json_string(std::string& out, std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') {
      out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return;
    }
  }
  out += '"';  // printable ASCII: nothing to escape
  out += s;
  out += '"';
}

}  // namespace kubex::common
