// CEL lexer (cel-spec doc/langdef.md lexis: numbers, strings with escapes/raw/triple quotes, bytes,
// identifiers, keywords, operators, comments) and cel-go style issue formatting with line, column and caret.
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel::internal {

namespace {

bool is_ident_start(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  // Tokenizes the whole source; on failure, `issue` describes the first problem.
  bool run(std::vector<Token>& out, Issue& issue) {
    while (true) {
      skip_space();
      Token t;
      t.pos = static_cast<int32_t>(i_);
      if (i_ >= src_.size()) {
        out.push_back(std::move(t));
        return true;
      }
      if (!next(t, issue)) return false;
      out.push_back(std::move(t));
    }
  }

 private:
  void skip_space() {
    while (i_ < src_.size()) {
      char c = src_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++i_;
      } else if (c == '/' && i_ + 1 < src_.size() && src_[i_ + 1] == '/') {
        while (i_ < src_.size() && src_[i_] != '\n') ++i_;
      } else {
        return;
      }
    }
  }

  bool fail(Issue& issue, std::size_t pos, std::string msg) {
    issue = Issue{static_cast<int32_t>(pos), "Syntax error: " + std::move(msg)};
    return false;
  }

  bool next(Token& t, Issue& issue) {
    char c = src_[i_];
    if (is_ident_start(c)) {
      std::size_t start = i_;
      while (i_ < src_.size() && is_ident_char(src_[i_])) ++i_;
      std::string_view word = src_.substr(start, i_ - start);
      // String prefixes: r, b, rb, br in any case, directly followed by a quote.
      if (i_ < src_.size() && (src_[i_] == '"' || src_[i_] == '\'') && word.size() <= 2) {
        bool raw = false, bytes = false, ok = true;
        for (char p : word) {
          if ((p == 'r' || p == 'R') && !raw) {
            raw = true;
          } else if ((p == 'b' || p == 'B') && !bytes) {
            bytes = true;
          } else {
            ok = false;
          }
        }
        if (ok) return string_literal(t, issue, raw, bytes);
      }
      t.text = std::string(word);
      if (word == "true") {
        t.tok = Tok::kTrue;
      } else if (word == "false") {
        t.tok = Tok::kFalse;
      } else if (word == "null") {
        t.tok = Tok::kNull;
      } else if (word == "in") {
        t.tok = Tok::kIn;
      } else {
        t.tok = Tok::kIdent;
      }
      return true;
    }
    if (is_digit(c) || (c == '.' && i_ + 1 < src_.size() && is_digit(src_[i_ + 1]))) return number(t, issue);
    if (c == '"' || c == '\'') return string_literal(t, issue, false, false);
    auto two = [&](char a, char b) { return c == a && i_ + 1 < src_.size() && src_[i_ + 1] == b; };
    struct Op {
      char a, b;
      Tok tok;
    };
    static constexpr Op kTwo[] = {{'=', '=', Tok::kEqEq}, {'!', '=', Tok::kNe},  {'<', '=', Tok::kLe},
                                  {'>', '=', Tok::kGe},   {'&', '&', Tok::kAnd}, {'|', '|', Tok::kOr}};
    for (const auto& op : kTwo) {
      if (two(op.a, op.b)) {
        t.tok = op.tok;
        t.text = std::string{op.a, op.b};
        i_ += 2;
        return true;
      }
    }
    static constexpr std::pair<char, Tok> kOne[] = {
        {'(', Tok::kLParen}, {')', Tok::kRParen},   {'[', Tok::kLBracket}, {']', Tok::kRBracket},
        {'{', Tok::kLBrace}, {'}', Tok::kRBrace},   {'.', Tok::kDot},      {',', Tok::kComma},
        {':', Tok::kColon},  {'?', Tok::kQuestion}, {'+', Tok::kPlus},     {'-', Tok::kMinus},
        {'*', Tok::kStar},   {'/', Tok::kSlash},    {'%', Tok::kPercent},  {'!', Tok::kBang},
        {'<', Tok::kLt},     {'>', Tok::kGt}};
    for (const auto& [ch, tok] : kOne) {
      if (c == ch) {
        t.tok = tok;
        t.text = std::string(1, c);
        ++i_;
        return true;
      }
    }
    std::size_t at = i_;
    char32_t cp = utf8_next(src_, i_);
    std::string shown;
    utf8_append(shown, cp);
    return fail(issue, at, "token recognition error at: '" + shown + "'");
  }

  bool number(Token& t, Issue& issue) {
    std::size_t start = i_;
    if (src_[i_] == '0' && i_ + 1 < src_.size() && (src_[i_ + 1] == 'x' || src_[i_ + 1] == 'X')) {
      i_ += 2;
      std::size_t digits = i_;
      uint64_t v = 0;
      bool overflow = false;
      while (i_ < src_.size() && hex_value(src_[i_]) >= 0) {
        if (v > (std::numeric_limits<uint64_t>::max() >> 4)) overflow = true;
        v = (v << 4) | static_cast<uint64_t>(hex_value(src_[i_]));
        ++i_;
      }
      if (i_ == digits) return fail(issue, start, "invalid hex literal");
      t.tok = Tok::kInt;
      if (i_ < src_.size() && (src_[i_] == 'u' || src_[i_] == 'U')) {
        ++i_;
        t.tok = Tok::kUint;
      }
      t.text = std::string(src_.substr(start, i_ - start));
      if (overflow) return fail(issue, start, "invalid int literal");
      t.u = v;
      return true;
    }
    bool is_double = false;
    while (i_ < src_.size() && is_digit(src_[i_])) ++i_;
    if (i_ + 1 < src_.size() && src_[i_] == '.' && is_digit(src_[i_ + 1])) {
      is_double = true;
      ++i_;
      while (i_ < src_.size() && is_digit(src_[i_])) ++i_;
    }
    if (i_ < src_.size() && (src_[i_] == 'e' || src_[i_] == 'E')) {
      std::size_t j = i_ + 1;
      if (j < src_.size() && (src_[j] == '+' || src_[j] == '-')) ++j;
      if (j < src_.size() && is_digit(src_[j])) {
        is_double = true;
        i_ = j;
        while (i_ < src_.size() && is_digit(src_[i_])) ++i_;
      }
    }
    std::string_view text = src_.substr(start, i_ - start);
    t.text = std::string(text);
    if (is_double) {
      double d = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ec == std::errc::result_out_of_range) {
        d = text.find_first_of("eE") != std::string_view::npos && text.find("e-") == std::string_view::npos &&
                    text.find("E-") == std::string_view::npos
                ? std::numeric_limits<double>::infinity()
                : 0.0;
      } else if (ec != std::errc() || p != text.data() + text.size()) {
        return fail(issue, start, "invalid double literal");
      }
      t.tok = Tok::kDouble;
      t.d = d;
      return true;
    }
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size()) return fail(issue, start, "invalid int literal");
    t.tok = Tok::kInt;
    t.u = v;
    if (i_ < src_.size() && (src_[i_] == 'u' || src_[i_] == 'U')) {
      ++i_;
      t.tok = Tok::kUint;
      t.text += 'u';
    }
    return true;
  }

  bool string_literal(Token& t, Issue& issue, bool raw, bool bytes) {
    std::size_t start = i_;
    char q = src_[i_];
    bool triple = i_ + 2 < src_.size() && src_[i_ + 1] == q && src_[i_ + 2] == q;
    i_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (i_ >= src_.size()) return fail(issue, start, "unterminated string literal");
      char c = src_[i_];
      if (triple) {
        if (c == q && i_ + 2 < src_.size() && src_[i_ + 1] == q && src_[i_ + 2] == q) {
          i_ += 3;
          break;
        }
      } else {
        if (c == q) {
          ++i_;
          break;
        }
        if (c == '\n' || c == '\r') return fail(issue, start, "unterminated string literal");
      }
      if (c != '\\' || raw) {
        out += c;
        ++i_;
        continue;
      }
      std::size_t esc = i_;
      ++i_;
      if (i_ >= src_.size()) return fail(issue, start, "unterminated string literal");
      char e = src_[i_++];
      switch (e) {
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'v':
          out += '\v';
          break;
        case '\\':
        case '?':
        case '"':
        case '\'':
        case '`':
          out += e;
          break;
        case 'x':
        case 'X':
        case 'u':
        case 'U': {
          int n = (e == 'x' || e == 'X') ? 2 : (e == 'u' ? 4 : 8);
          if (e == 'U' && bytes) return fail(issue, esc, "invalid escape sequence in bytes literal");
          uint32_t v = 0;
          for (int k = 0; k < n; ++k) {
            if (i_ >= src_.size() || hex_value(src_[i_]) < 0)
              return fail(issue, esc, "invalid escape sequence");
            v = v * 16 + static_cast<uint32_t>(hex_value(src_[i_++]));
          }
          if (n == 2 && bytes) {
            out += static_cast<char>(v);
          } else {
            if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
              return fail(issue, esc, "invalid unicode code point");
            utf8_append(out, v);
          }
          break;
        }
        case '0':
        case '1':
        case '2':
        case '3': {
          uint32_t v = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2; ++k) {
            if (i_ >= src_.size() || src_[i_] < '0' || src_[i_] > '7') {
              return fail(issue, esc, "invalid escape sequence");
            }
            v = v * 8 + static_cast<uint32_t>(src_[i_++] - '0');
          }
          if (bytes) {
            out += static_cast<char>(v);
          } else {
            utf8_append(out, v);
          }
          break;
        }
        default:
          return fail(issue, esc, "invalid escape sequence");
      }
    }
    t.tok = bytes ? Tok::kBytes : Tok::kString;
    t.text = std::move(out);
    return true;
  }

  std::string_view src_;
  std::size_t i_ = 0;
};

}  // namespace

std::string describe(const Token& t) {
  switch (t.tok) {
    case Tok::kEof:
      return "end of input";
    case Tok::kInt:
    case Tok::kUint:
    case Tok::kDouble:
      return "number '" + t.text + "'";
    case Tok::kString:
      return "string literal";
    case Tok::kBytes:
      return "bytes literal";
    case Tok::kIdent:
      return "identifier '" + t.text + "'";
    default:
      return "'" + t.text + "'";
  }
}

bool tokenize(std::string_view source, std::vector<Token>& out, Issue& issue) {
  return Lexer(source).run(out, issue);
}

std::string format_issues(std::string_view source, const std::vector<Issue>& issues) {
  std::string out;
  for (const auto& is : issues) {
    std::size_t pos = std::min<std::size_t>(static_cast<std::size_t>(std::max(is.pos, 0)), source.size());
    std::size_t line_start = 0;
    int line = 1;
    for (std::size_t k = 0; k < pos; ++k) {
      if (source[k] == '\n') {
        ++line;
        line_start = k + 1;
      }
    }
    std::size_t line_end = source.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = source.size();
    std::string_view snippet = source.substr(line_start, line_end - line_start);
    std::string_view before = source.substr(line_start, pos - line_start);
    int64_t column = utf8_length(before) + 1;
    if (!out.empty()) out += '\n';
    out += "ERROR: <input>:" + std::to_string(line) + ":" + std::to_string(column) + ": " + is.message;
    std::string shown;
    for (char c : snippet) shown += c == '\t' ? ' ' : c;
    out += "\n | " + shown + "\n | ";
    std::size_t k = 0;
    while (k < before.size()) {
      std::size_t prev = k;
      utf8_next(before, k);
      out += (k - prev > 1) ? "\xEF\xBC\x8E" : ".";  // U+FF0E for wide characters, as cel-go does
    }
    std::size_t at = 0;
    std::string_view rest = snippet.substr(before.size());
    if (!rest.empty()) utf8_next(rest, at);
    out += at > 1 ? "\xEF\xBC\xBE" : "^";
  }
  return out;
}

}  // namespace kubex::sim::cel::internal
