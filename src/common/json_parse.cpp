#include "common/json_parse.h"

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/json_projection.h"

namespace kubex::common {

namespace {

using nlohmann::json;
using Kind = JsonProjection::Kind;

// Where a skipped string goes: checked, not kept.
struct Discard {
  void append(const char*, const char*) {}
  Discard& operator+=(char) { return *this; }
};

class FastParser {
 public:
  FastParser(const char* begin, const char* end, int max_depth)
      : p_(begin), end_(end), max_depth_(max_depth) {}

  bool document(json& out, const JsonProjection* projection) {
    if (end_ - p_ >= 3 && static_cast<unsigned char>(p_[0]) == 0xEF &&
        static_cast<unsigned char>(p_[1]) == 0xBB && static_cast<unsigned char>(p_[2]) == 0xBF) {
      p_ += 3;  // nlohmann skips a UTF-8 byte order mark
    }
    skip_ws();
    if (!value(out, 0, projection)) return false;
    skip_ws();
    return p_ == end_;
  }

 private:
  void skip_ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      return false;
    p_ += word.size();
    return true;
  }

  // `projection` nullptr: the whole value.
  bool value(json& out, int depth, const JsonProjection* projection = nullptr) {
    if (p_ == end_) return false;
    if (projection && projection->kind() == Kind::kWhole) projection = nullptr;
    switch (*p_) {
      case '{':
        return object(out, depth + 1,
                      projection && projection->kind() == Kind::kMembers ? projection : nullptr);
      case '[':
        return array(out, depth + 1,
                     projection && projection->kind() == Kind::kElements ? &projection->element() : nullptr);
      case '"': {
        std::string s;
        if (!string(s)) return false;
        out = std::move(s);
        return true;
      }
      case 't':
        if (!literal("true")) return false;
        out = true;
        return true;
      case 'f':
        if (!literal("false")) return false;
        out = false;
        return true;
      case 'n':
        if (!literal("null")) return false;
        out = nullptr;
        return true;
      default:
        return number(out);
    }
  }

  // Checks one value as JSON (exactly what value() accepts) without building it.
  bool skip(int depth) {
    if (p_ == end_) return false;
    switch (*p_) {
      case '{':
      case '[': {
        const char close = *p_ == '{' ? '}' : ']';
        if (++depth > max_depth_) return false;
        ++p_;
        skip_ws();
        if (p_ < end_ && *p_ == close) {
          ++p_;
          return true;
        }
        while (true) {
          if (close == '}') {
            Discard key;
            if (p_ == end_ || *p_ != '"' || !string(key)) return false;
            skip_ws();
            if (p_ == end_ || *p_ != ':') return false;
            ++p_;
            skip_ws();
          }
          if (!skip(depth)) return false;
          if (Next n = next(close); n != Next::kMore) return n == Next::kClosed;
        }
      }
      case '"': {
        Discard s;
        return string(s);
      }
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default: {
        json number_value;  // a number allocates nothing
        return number(number_value);
      }
    }
  }

  // `members`: the kMembers projection of this object (nullptr: every member, whole).
  bool object(json& out, int depth, const JsonProjection* members) {
    if (depth > max_depth_) return false;
    ++p_;  // '{'
    out = json::object();
    auto& obj = out.get_ref<json::object_t&>();
    skip_ws();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    while (true) {
      if (p_ == end_ || *p_ != '"') return false;
      std::string key;
      if (!string(key)) return false;
      skip_ws();
      if (p_ == end_ || *p_ != ':') return false;
      ++p_;
      skip_ws();
      const JsonProjection* member = nullptr;
      if (members) {
        member = members->member(key);
        if (!member) {
          if (!skip(depth)) return false;
          if (Next n = next('}'); n != Next::kMore) return n == Next::kClosed;
          continue;
        }
      }
      json v;
      if (!value(v, depth, member)) return false;
      obj.insert_or_assign(obj.end(), std::move(key),
                           std::move(v));  // the last duplicate wins, as in nlohmann
      if (Next n = next('}'); n != Next::kMore) return n == Next::kClosed;
    }
  }

  // `each`: the projection of every element (nullptr: whole).
  bool array(json& out, int depth, const JsonProjection* each) {
    if (depth > max_depth_) return false;
    ++p_;  // '['
    out = json::array();
    auto& arr = out.get_ref<json::array_t&>();
    skip_ws();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    while (true) {
      arr.emplace_back();
      if (!value(arr.back(), depth, each)) return false;
      if (Next n = next(']'); n != Next::kMore) return n == Next::kClosed;
    }
  }

  enum class Next { kMore, kClosed, kBad };
  // After a member or element: a comma (another follows) or the closing bracket.
  Next next(char close) {
    skip_ws();
    if (p_ == end_) return Next::kBad;
    if (*p_ == ',') {
      ++p_;
      skip_ws();
      return Next::kMore;
    }
    if (*p_ != close) return Next::kBad;
    ++p_;
    return Next::kClosed;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  bool u4(unsigned& cp) {
    if (end_ - p_ < 4) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hex(p_[i]);
      if (h < 0) return false;
      cp = cp * 16 + static_cast<unsigned>(h);
    }
    p_ += 4;
    return true;
  }

  template <class Sink>
  static void append_utf8(Sink& s, unsigned cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // One UTF-8 sequence starting at p_ (its first byte >= 0x80), checked as RFC 3629 (and nlohmann) do.
  bool utf8_sequence() {
    auto at = [&](std::ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
    auto cont = [&](std::ptrdiff_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
      return p_ + i < end_ && at(i) >= lo && at(i) <= hi;
    };
    unsigned c = at(0);
    int n;
    if (c >= 0xC2 && c <= 0xDF) {
      n = cont(1) ? 2 : 0;
    } else if (c == 0xE0) {
      n = cont(1, 0xA0) && cont(2) ? 3 : 0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      n = cont(1) && cont(2) ? 3 : 0;
    } else if (c == 0xED) {
      n = cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    } else if (c == 0xF0) {
      n = cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    } else if (c >= 0xF1 && c <= 0xF3) {
      n = cont(1) && cont(2) && cont(3) ? 4 : 0;
    } else if (c == 0xF4) {
      n = cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    } else {
      n = 0;
    }
    if (n == 0) return false;
    p_ += n;
    return true;
  }

  template <class Sink>  // std::string, or Discard to check a string without keeping it
  bool string(Sink& s) {
    ++p_;  // '"'
    while (true) {
      const char* run = p_;
      while (p_ < end_) {
        auto c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20) break;
        if (c < 0x80) {
          ++p_;
        } else if (!utf8_sequence()) {
          return false;
        }
      }
      s.append(run, p_);
      if (p_ == end_) return false;
      char c = *p_++;
      if (c == '"') return true;
      if (c != '\\') return false;  // a control character
      if (p_ == end_) return false;
      switch (*p_++) {
        case '"':
          s += '"';
          break;
        case '\\':
          s += '\\';
          break;
        case '/':
          s += '/';
          break;
        case 'b':
          s += '\b';
          break;
        case 'f':
          s += '\f';
          break;
        case 'n':
          s += '\n';
          break;
        case 'r':
          s += '\r';
          break;
        case 't':
          s += '\t';
          break;
        case 'u': {
          unsigned cp;
          if (!u4(cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            unsigned lo;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!u4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          append_utf8(s, cp);
          break;
        }
        default:
          return false;
      }
    }
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number(json& out) {
    const char* start = p_;
    bool negative = false, is_float = false;
    if (*p_ == '-') {
      negative = true;
      ++p_;
    }
    auto digits = [&] {
      const char* d = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ > d;
    };
    if (p_ == end_) return false;
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      digits();
    } else {
      return false;
    }
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return false;
      is_float = true;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
      is_float = true;
    }
    // Out of range (a 64-bit overflow nlohmann turns into a double, an infinite or denormal double): false,
    // so the caller's nlohmann parse decides.
    if (is_float) {
      double d;
      auto [q, ec] = std::from_chars(start, p_, d);
      if (ec != std::errc() || q != p_) return false;
      out = d;
    } else if (negative) {
      std::int64_t i;
      auto [q, ec] = std::from_chars(start, p_, i);
      if (ec != std::errc() || q != p_) return false;
      out = i;
    } else {
      std::uint64_t u;
      auto [q, ec] = std::from_chars(start, p_, u);
      if (ec != std::errc() || q != p_) return false;
      out = u;
    }
    return true;
  }

  const char* p_;
  const char* end_;
  int max_depth_;
};

}  // namespace

bool parse_json_fast(std::string_view text, nlohmann::json& out, int max_depth,
                     const JsonProjection* projection) {
  FastParser parser(text.data(), text.data() + text.size(), max_depth);
  return parser.document(out, projection);
}

}  // namespace kubex::common
