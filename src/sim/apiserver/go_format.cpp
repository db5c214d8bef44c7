#include "sim/apiserver/go_format.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/utf8.h"

namespace kubex::sim {

using nlohmann::json;

bool is_big_unsigned(const json& v) {
  return v.is_number_unsigned() &&
         v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
}

namespace {

// Decodes one UTF-8 sequence at s[i]; advances i. Returns -1 (and advances one byte) for invalid input.
int32_t decode_utf8(std::string_view s, std::size_t& i) {
  const common::Utf8Rune r = common::utf8_decode(s, i);
  if (r.len == 0) {
    ++i;
    return -1;
  }
  i += r.len;
  return static_cast<int32_t>(r.cp);
}

// unicode.IsPrint for code points >= 0x80, close enough for messages: controls, format characters, line and
// paragraph separators, private use and non-characters are not printable.
bool go_is_print_non_ascii(int32_t cp) {
  if (cp <= 0x9F || cp == 0xAD || cp == 0x61C || cp == 0x180E) return false;
  if ((cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F)) {
    return false;
  }
  if (cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) || (cp & 0xFFFE) == 0xFFFE) return false;
  if ((cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000) return false;
  return true;
}

void append_hex(std::string& out, uint32_t v, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int k = digits - 1; k >= 0; --k) out += kHex[(v >> (4 * k)) & 0xF];
}

std::string chars(double v, std::chars_format f) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, f);
  return std::string(buf, res.ptr);
}

// Decimal exponent of the shortest scientific representation ("1.5e+06" -> 6).
int sci_exponent(const std::string& sci) {
  auto e = sci.find('e');
  std::size_t p = e + 1;
  bool neg = sci[p] == '-';
  if (sci[p] == '-' || sci[p] == '+') ++p;
  int exp = 0;
  std::from_chars(sci.data() + p, sci.data() + sci.size(), exp);
  return neg ? -exp : exp;
}

// encoding/json's float64 encoding.
std::string go_json_float(double v) {
  if (!std::isfinite(v)) return "null";
  double a = std::fabs(v);
  if (a != 0 && (a < 1e-6 || a >= 1e21)) {
    std::string s = chars(v, std::chars_format::scientific);
    std::size_t n = s.size();
    if (n >= 4 && s[n - 4] == 'e' && s[n - 3] == '-' && s[n - 2] == '0') s.erase(n - 2, 1);
    return s;
  }
  return chars(v, std::chars_format::fixed);
}

// encoding/json string encoding (HTML-safe, as json.Marshal does).
void go_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    const int32_t cp = decode_utf8(s, i);
    if (cp < 0) {
      out += "\\ufffd";
    } else if (cp < 0x80) {
      switch (cp) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '<':
        case '>':
        case '&':
          out += "\\u00";
          append_hex(out, static_cast<uint32_t>(cp), 2);
          break;
        default:
          if (cp < 0x20) {
            out += "\\u00";
            append_hex(out, static_cast<uint32_t>(cp), 2);
          } else {
            out += static_cast<char>(cp);
          }
      }
    } else if (cp == 0x2028 || cp == 0x2029) {
      out += "\\u";
      append_hex(out, static_cast<uint32_t>(cp), 4);
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  out += '"';
}

// json.Marshal of a value decoded by apimachinery (numbers are int64 or float64, maps sorted by key).
void go_json(std::string& out, const json& v) {
  switch (v.type()) {
    case json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case json::value_t::number_integer:
      out += std::to_string(v.get<int64_t>());
      return;
    case json::value_t::number_unsigned:
      out += is_big_unsigned(v) ? go_json_float(v.get<double>()) : std::to_string(v.get<uint64_t>());
      return;
    case json::value_t::number_float:
      out += go_json_float(v.get<double>());
      return;
    case json::value_t::string:
      go_json_string(out, v.get_ref<const std::string&>());
      return;
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ',';
        first = false;
        go_json(out, e);
      }
      out += ']';
      return;
    }
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [k, e] : v.items()) {
        if (!first) out += ',';
        first = false;
        go_json_string(out, k);
        out += ':';
        go_json(out, e);
      }
      out += '}';
      return;
    }
    default:
      out += "null";
      return;
  }
}

void append_go(const json& v, std::string& out) {
  switch (v.type()) {
    case json::value_t::null:
      out += "<nil>";
      break;
    case json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      break;
    case json::value_t::number_integer:
      out += std::to_string(v.get<std::int64_t>());
      break;
    case json::value_t::number_unsigned:
      out += std::to_string(v.get<std::uint64_t>());
      break;
    case json::value_t::number_float:
      out += go_float(v.get<double>());
      break;
    case json::value_t::string:
      out += v.get_ref<const std::string&>();
      break;
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ' ';
        first = false;
        append_go(e, out);
      }
      out += ']';
      break;
    }
    case json::value_t::object: {
      out += "map[";
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out += ' ';
        first = false;
        out += it.key();
        out += ':';
        append_go(it.value(), out);
      }
      out += ']';
      break;
    }
    default:
      out += "?";
      break;
  }
}

}  // namespace

bool append_go_escape(std::string& out, char32_t c) {
  switch (c) {
    case '\a':
      out += "\\a";
      return true;
    case '\b':
      out += "\\b";
      return true;
    case '\f':
      out += "\\f";
      return true;
    case '\n':
      out += "\\n";
      return true;
    case '\r':
      out += "\\r";
      return true;
    case '\t':
      out += "\\t";
      return true;
    case '\v':
      out += "\\v";
      return true;
    case '\\':
      out += "\\\\";
      return true;
    case '"':
      out += "\\\"";
      return true;
    default:
      return false;
  }
}

// strconv.Quote (what %q prints for a string).
std::string go_quote(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    const int32_t cp = decode_utf8(s, i);
    if (cp < 0) {
      out += "\\x";
      append_hex(out, static_cast<unsigned char>(s[start]), 2);
      continue;
    }
    if (append_go_escape(out, static_cast<char32_t>(cp))) continue;
    if (cp >= 0x20 && cp < 0x7F) {
      out += static_cast<char>(cp);
    } else if (cp < 0x80) {
      out += "\\x";
      append_hex(out, static_cast<uint32_t>(cp), 2);
    } else if (go_is_print_non_ascii(cp)) {
      out.append(s.substr(start, i - start));
    } else if (cp < 0x10000) {
      out += "\\u";
      append_hex(out, static_cast<uint32_t>(cp), 4);
    } else {
      out += "\\U";
      append_hex(out, static_cast<uint32_t>(cp), 8);
    }
  }
  out += '"';
  return out;
}

// fmt's %v for a float64: strconv.FormatFloat(v, 'g', -1, 64).
std::string go_float(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  std::string sci = chars(v, std::chars_format::scientific);
  int exp = sci_exponent(sci);
  if (exp < -4 || exp >= 6) return sci;
  return chars(v, std::chars_format::fixed);
}

std::string go_json(const json& v) {
  std::string out;
  go_json(out, v);
  return out;
}

// How field.Error renders a bad value: %v for numbers and booleans, %q for strings, JSON otherwise.
std::string go_value(const json& v) {
  switch (v.type()) {
    case json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
      return std::to_string(v.get<int64_t>());
    case json::value_t::number_unsigned:
      return is_big_unsigned(v) ? go_float(v.get<double>()) : std::to_string(v.get<uint64_t>());
    case json::value_t::number_float:
      return go_float(v.get<double>());
    case json::value_t::string:
      return go_quote(v.get_ref<const std::string&>());
    default:
      return go_json(v);
  }
}


std::string go_print(const json& v) {
  std::string out;
  append_go(v, out);
  return out;
}

std::string go_type(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "<nil>";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "int64";
    case json::value_t::number_float:
      return "float64";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "[]interface {}";
    case json::value_t::object:
      return "map[string]interface {}";
    default:
      return "unknown";
  }
}

}  // namespace kubex::sim
