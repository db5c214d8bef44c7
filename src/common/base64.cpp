#include "common/base64.h"

#include <array>
#include <cstdint>

namespace kubex::common {
namespace {

constexpr std::string_view kStd = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

using DecodeTable = std::array<std::int8_t, 256>;

constexpr DecodeTable make_table(std::string_view alphabet) {
  DecodeTable t{};
  for (auto& v : t) v = -1;
  for (std::size_t i = 0; i < alphabet.size(); ++i)
    t[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  return t;
}

constexpr DecodeTable kStdTable = make_table(kStd);
constexpr DecodeTable kUrlTable = make_table(kUrl);

std::string encode(std::string_view data, std::string_view alphabet, bool pad) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto byte = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(data[k])); };
  for (; i + 3 <= data.size(); i += 3) {
    std::uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    out += alphabet[v >> 6 & 63];
    out += alphabet[v & 63];
  }
  std::size_t rest = data.size() - i;
  if (rest == 1) {
    std::uint32_t v = byte(i) << 16;
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    if (pad) out += "==";
  } else if (rest == 2) {
    std::uint32_t v = byte(i) << 16 | byte(i + 1) << 8;
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    out += alphabet[v >> 6 & 63];
    if (pad) out += '=';
  }
  return out;
}

std::unexpected<Error> illegal_at(std::size_t pos) {
  return fail("illegal base64 data at input byte " + std::to_string(pos));
}

Result<std::string> decode(std::string_view text, const DecodeTable& table, bool padded) {
  // `data_len` characters carry data; the rest must be exactly the padding.
  std::size_t data_len = text.size();
  if (padded) {
    if (text.size() % 4 != 0) {
      // Report the first bad character if there is one, else the truncation.
      for (std::size_t i = 0; i < text.size(); ++i) {
        if (table[static_cast<unsigned char>(text[i])] < 0) return illegal_at(i);
      }
      // One character left over cannot make a byte; otherwise the padding is missing at the end.
      return illegal_at(text.size() % 4 == 1 ? text.size() - 1 : text.size());
    }
    while (data_len > 0 && text.size() - data_len < 2 && text[data_len - 1] == '=') --data_len;
  }
  for (std::size_t i = 0; i < data_len; ++i) {
    if (table[static_cast<unsigned char>(text[i])] < 0) return illegal_at(i);
  }
  // A single character in the last quantum carries only 6 bits: not a byte.
  if (data_len % 4 == 1) return illegal_at(data_len - 1);
  if (padded && text.size() - data_len != (4 - data_len % 4) % 4) return illegal_at(data_len);

  std::string out;
  out.reserve(data_len * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < data_len; ++i) {
    acc = (acc << 6) | static_cast<std::uint32_t>(table[static_cast<unsigned char>(text[i])]);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

}  // namespace

std::string base64_encode(std::string_view data) {
  return encode(data, kStd, true);
}
Result<std::string> base64_decode(std::string_view text) {
  return decode(text, kStdTable, true);
}
std::string base64url_encode(std::string_view data) {
  return encode(data, kUrl, false);
}
Result<std::string> base64url_decode(std::string_view text) {
  return decode(text, kUrlTable, false);
}

}  // namespace kubex::common
