// RE2 syntax parser for cel/regex.cpp: patterns to a RegexNode tree, with Go regexp's error messages
// ("error parsing regexp: missing closing ): `(a`"). Group nesting and repeat counts are capped.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel::internal {

namespace {

constexpr int kMaxRepeat = 1000;
constexpr int kMaxNesting = 64;

void add_perl_class(char k, CharRanges& r, bool& negate) {
  char lower = static_cast<char>(ascii_lower(static_cast<char32_t>(k)));
  negate = k != lower;
  if (lower == 'd') {
    r.push_back({'0', '9'});
  } else if (lower == 's') {
    r.insert(r.end(), {{'\t', '\n'}, {'\f', '\r'}, {' ', ' '}});
  } else {
    r.insert(r.end(), {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}});
  }
}

CharRanges negate_ranges(CharRanges r) {
  std::sort(r.begin(), r.end());
  CharRanges out;
  char32_t next = 0;
  for (auto [lo, hi] : r) {
    if (hi < next) continue;
    if (lo > next) out.push_back({next, lo - 1});
    next = std::max<char32_t>(next, hi + 1);
  }
  if (next <= 0x10FFFF) out.push_back({next, 0x10FFFF});
  return out;
}

bool posix_class(std::string_view name, CharRanges& r) {
  struct P {
    std::string_view name;
    CharRanges ranges;
  };
  static const P kClasses[] = {
      {"alnum", {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}},
      {"alpha", {{'A', 'Z'}, {'a', 'z'}}},
      {"ascii", {{0, 0x7F}}},
      {"blank", {{'\t', '\t'}, {' ', ' '}}},
      {"cntrl", {{0, 0x1F}, {0x7F, 0x7F}}},
      {"digit", {{'0', '9'}}},
      {"graph", {{'!', '~'}}},
      {"lower", {{'a', 'z'}}},
      {"print", {{' ', '~'}}},
      {"punct", {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}}},
      {"space", {{'\t', '\r'}, {' ', ' '}}},
      {"upper", {{'A', 'Z'}}},
      {"word", {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}, {'_', '_'}}},
      {"xdigit", {{'0', '9'}, {'A', 'F'}, {'a', 'f'}}},
  };
  for (const auto& p : kClasses) {
    if (p.name == name) {
      r.insert(r.end(), p.ranges.begin(), p.ranges.end());
      return true;
    }
  }
  return false;
}

struct Flags {
  bool fold = false, multiline = false, dotnl = false, ungreedy = false;
};

class RegexParser {
 public:
  explicit RegexParser(std::string_view p) : p_(p) {}

  std::optional<RegexNode> run() {
    Flags f;
    auto n = parse_alt(f, 0);
    if (!n) return std::nullopt;
    if (i_ < p_.size()) return fail("unexpected )", p_);
    return n;
  }
  const std::string& error() const { return error_; }

 private:
  std::nullopt_t fail(std::string_view code, std::string_view what) {
    if (error_.empty())
      error_ = "error parsing regexp: " + std::string(code) + ": `" + std::string(what) + "`";
    return std::nullopt;
  }
  bool at(char c) const { return i_ < p_.size() && p_[i_] == c; }

  std::optional<RegexNode> parse_alt(Flags& f, int depth) {
    if (depth > kMaxNesting) return fail("expression nests too deeply", p_);
    RegexNode alt;
    alt.t = RegexNode::T::kAlt;
    while (true) {
      auto c = parse_concat(f, depth);
      if (!c) return std::nullopt;
      alt.kids.push_back(std::move(*c));
      if (!at('|')) break;
      ++i_;
    }
    if (alt.kids.size() == 1) return std::move(alt.kids[0]);
    return alt;
  }

  std::optional<RegexNode> parse_concat(Flags& f, int depth) {
    RegexNode cat;
    cat.t = RegexNode::T::kConcat;
    while (i_ < p_.size() && p_[i_] != '|' && p_[i_] != ')') {
      char ch = p_[i_];
      if (ch == '*' || ch == '+' || ch == '?')
        return fail("missing argument to repetition operator", p_.substr(i_, 1));
      if (ch == '{' && repeat_spec(i_).has_value()) {
        return fail("missing argument to repetition operator", p_.substr(i_, repeat_spec(i_)->len));
      }
      flags_only_ = false;
      auto atom = parse_atom(f, depth);
      if (!atom) return std::nullopt;
      if (flags_only_) continue;  // (?i) and friends match nothing; they change the flags
      bool repeated = false;
      while (i_ < p_.size()) {
        std::size_t op_start = i_;
        int min = 0, max = 0;
        char op = p_[i_];
        if (op == '*') {
          min = 0, max = -1, ++i_;
        } else if (op == '+') {
          min = 1, max = -1, ++i_;
        } else if (op == '?') {
          min = 0, max = 1, ++i_;
        } else if (op == '{') {
          auto spec = repeat_spec(i_);
          if (!spec) break;
          if (spec->min > kMaxRepeat || spec->max > kMaxRepeat || (spec->max >= 0 && spec->max < spec->min)) {
            return fail("invalid repeat count", p_.substr(i_, spec->len));
          }
          min = spec->min, max = spec->max;
          i_ += spec->len;
        } else {
          break;
        }
        bool lazy = false;
        if (at('?')) {
          lazy = true;
          ++i_;
        }
        if (repeated)
          return fail("invalid nested repetition operator", p_.substr(op_start - 1, i_ - op_start + 1));
        repeated = true;
        RegexNode rep;
        rep.t = RegexNode::T::kRepeat;
        rep.min = min;
        rep.max = max;
        rep.greedy = lazy == f.ungreedy;
        rep.kids.push_back(std::move(*atom));
        atom = std::move(rep);
      }
      cat.kids.push_back(std::move(*atom));
    }
    if (cat.kids.size() == 1) return std::move(cat.kids[0]);
    if (cat.kids.empty()) return RegexNode{};
    return cat;
  }

  struct Spec {
    int min, max;
    std::size_t len;
  };
  std::optional<Spec> repeat_spec(std::size_t k) const {
    std::size_t j = k + 1;
    auto number = [&](int& out) {
      std::size_t s = j;
      long v = 0;
      while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') {
        v = std::min<long>(v * 10 + (p_[j] - '0'), 100000);
        ++j;
      }
      out = static_cast<int>(v);
      return j > s;
    };
    int min = 0, max = 0;
    if (!number(min)) return std::nullopt;
    max = min;
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      if (!number(max)) max = -1;
    }
    if (j >= p_.size() || p_[j] != '}') return std::nullopt;
    return Spec{min, max, j + 1 - k};
  }

  RegexNode literal(char32_t c, const Flags& f) {
    RegexNode n;
    n.t = RegexNode::T::kLiteral;
    n.c = c;
    n.fold = f.fold && ascii_lower(c) != ascii_upper(c);
    return n;
  }
  RegexNode assertion(RegexAssert k) {
    RegexNode n;
    n.t = RegexNode::T::kAssert;
    n.assert_kind = k;
    return n;
  }
  RegexNode klass(CharRanges r, bool negated, const Flags& f) {
    RegexNode n;
    n.t = RegexNode::T::kClass;
    n.ranges = std::move(r);
    n.negated = negated;
    n.fold = f.fold;
    return n;
  }

  std::optional<RegexNode> parse_atom(Flags& f, int depth) {
    char ch = p_[i_];
    switch (ch) {
      case '(':
        return parse_group(f, depth);
      case '[':
        return parse_class(f);
      case '.': {
        ++i_;
        RegexNode n;
        n.t = f.dotnl ? RegexNode::T::kAny : RegexNode::T::kAnyNotNL;
        return n;
      }
      case '^':
        ++i_;
        return assertion(f.multiline ? RegexAssert::kBeginLine : RegexAssert::kBeginText);
      case '$':
        ++i_;
        return assertion(f.multiline ? RegexAssert::kEndLine : RegexAssert::kEndText);
      case '\\':
        return parse_escape(f);
      default: {
        char32_t c = utf8_next(p_, i_);
        return literal(c, f);
      }
    }
  }

  std::optional<RegexNode> parse_group(Flags& f, int depth) {
    std::size_t start = i_;
    ++i_;
    Flags inner = f;
    if (at('?')) {
      ++i_;
      if (at('P') || at('<')) {
        if (at('P')) ++i_;
        if (!at('<')) return fail("invalid or unsupported Perl syntax", p_.substr(start, i_ - start + 1));
        std::size_t close = p_.find('>', i_);
        if (close == std::string_view::npos) return fail("invalid named capture", p_.substr(start));
        std::string_view name = p_.substr(i_ + 1, close - i_ - 1);
        bool ok = !name.empty();
        for (char c : name) ok = ok && (is_word_byte(static_cast<unsigned char>(c)));
        if (!ok) return fail("invalid named capture", p_.substr(start, close - start + 1));
        i_ = close + 1;
      } else {
        // Flags: (?flags) or (?flags:re)
        bool neg = false, any = false;
        while (i_ < p_.size() && p_[i_] != ')' && p_[i_] != ':') {
          char c = p_[i_++];
          if (c == '-') {
            if (neg) return fail("invalid or unsupported Perl syntax", p_.substr(start, i_ - start));
            neg = true;
            continue;
          }
          bool* flag = c == 'i'   ? &inner.fold
                       : c == 'm' ? &inner.multiline
                       : c == 's' ? &inner.dotnl
                       : c == 'U' ? &inner.ungreedy
                                  : nullptr;
          if (flag == nullptr)
            return fail("invalid or unsupported Perl syntax", p_.substr(start, i_ - start));
          *flag = !neg;
          any = true;
        }
        if (i_ >= p_.size() || !any) return fail("invalid or unsupported Perl syntax", p_.substr(start));
        if (p_[i_] == ')') {
          ++i_;
          f = inner;  // applies to the rest of the enclosing group
          flags_only_ = true;
          return RegexNode{};
        }
        ++i_;  // ':'
      }
    }
    auto body = parse_alt(inner, depth + 1);
    if (!body) return std::nullopt;
    if (!at(')')) return fail("missing closing )", p_);
    ++i_;
    return body;
  }

  // Parses an escape at i_ ('\\'); class escapes return a class node.
  std::optional<RegexNode> parse_escape(const Flags& f) {
    std::size_t start = i_;
    ++i_;
    if (i_ >= p_.size()) return fail("trailing backslash at end of expression", "");
    char e = p_[i_];
    switch (e) {
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W': {
        ++i_;
        CharRanges r;
        bool neg = false;
        add_perl_class(e, r, neg);
        return klass(std::move(r), neg, f);
      }
      case 'b':
        ++i_;
        return assertion(RegexAssert::kWordBoundary);
      case 'B':
        ++i_;
        return assertion(RegexAssert::kNotWordBoundary);
      case 'A':
        ++i_;
        return assertion(RegexAssert::kBeginText);
      case 'z':
        ++i_;
        return assertion(RegexAssert::kEndText);
      case 'Q': {
        ++i_;
        std::size_t end = p_.find("\\E", i_);
        std::string_view lit =
            p_.substr(i_, end == std::string_view::npos ? std::string_view::npos : end - i_);
        i_ = end == std::string_view::npos ? p_.size() : end + 2;
        RegexNode cat;
        cat.t = RegexNode::T::kConcat;
        for (std::size_t k = 0; k < lit.size();) cat.kids.push_back(literal(utf8_next(lit, k), f));
        return cat;
      }
      default: {
        auto c = escape_char(start);
        if (!c) return std::nullopt;
        return literal(*c, f);
      }
    }
  }

  // A single-character escape (also used inside classes); i_ is at the character after '\\'.
  std::optional<char32_t> escape_char(std::size_t start) {
    char e = p_[i_++];
    switch (e) {
      case 'a':
        return U'\a';
      case 'f':
        return U'\f';
      case 't':
        return U'\t';
      case 'n':
        return U'\n';
      case 'r':
        return U'\r';
      case 'v':
        return U'\v';
      case 'x': {
        uint32_t v = 0;
        if (at('{')) {
          std::size_t close = p_.find('}', i_);
          if (close == std::string_view::npos || close == i_ + 1) {
            return fail("invalid escape sequence", p_.substr(start, i_ - start));
          }
          for (std::size_t k = i_ + 1; k < close; ++k) {
            int h = hex(p_[k]);
            if (h < 0 || v > 0x10FFFF)
              return fail("invalid escape sequence", p_.substr(start, close + 1 - start));
            v = v * 16 + static_cast<uint32_t>(h);
          }
          i_ = close + 1;
          if (v > 0x10FFFF) return fail("invalid escape sequence", p_.substr(start, i_ - start));
          return static_cast<char32_t>(v);
        }
        for (int k = 0; k < 2; ++k) {
          if (i_ >= p_.size() || hex(p_[i_]) < 0)
            return fail("invalid escape sequence", p_.substr(start, i_ - start));
          v = v * 16 + static_cast<uint32_t>(hex(p_[i_++]));
        }
        return static_cast<char32_t>(v);
      }
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        // Go: a single non-zero digit would be a backreference (unsupported); otherwise up to 3 octal digits.
        if (e != '0' && !(i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '7')) {
          return fail("invalid escape sequence", p_.substr(start, i_ - start));
        }
        uint32_t v = static_cast<uint32_t>(e - '0');
        for (int k = 0; k < 2 && i_ < p_.size() && p_[i_] >= '0' && p_[i_] <= '7'; ++k) {
          v = v * 8 + static_cast<uint32_t>(p_[i_++] - '0');
        }
        return static_cast<char32_t>(v);
      }
      default:
        if (static_cast<unsigned char>(e) < 0x80 && !is_word_byte(static_cast<unsigned char>(e))) {
          return static_cast<char32_t>(e);  // escaped punctuation
        }
        return fail("invalid escape sequence", p_.substr(start, i_ - start));
    }
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  std::optional<RegexNode> parse_class(const Flags& f) {
    std::size_t start = i_;
    ++i_;
    bool negated = false;
    if (at('^')) {
      negated = true;
      ++i_;
    }
    CharRanges r;
    bool first = true;
    while (true) {
      if (i_ >= p_.size()) return fail("missing closing ]", p_.substr(start));
      if (p_[i_] == ']' && !first) {
        ++i_;
        break;
      }
      first = false;
      if (p_.compare(i_, 2, "[:") == 0) {
        std::size_t close = p_.find(":]", i_ + 2);
        if (close != std::string_view::npos) {
          std::string_view name = p_.substr(i_ + 2, close - i_ - 2);
          bool neg = !name.empty() && name[0] == '^';
          if (neg) name.remove_prefix(1);
          CharRanges pr;
          if (!posix_class(name, pr))
            return fail("invalid character class range", p_.substr(i_, close + 2 - i_));
          if (neg) pr = negate_ranges(pr);
          r.insert(r.end(), pr.begin(), pr.end());
          i_ = close + 2;
          continue;
        }
      }
      std::size_t item = i_;
      char32_t lo = 0;
      if (p_[i_] == '\\') {
        ++i_;
        if (i_ >= p_.size()) return fail("trailing backslash at end of expression", "");
        char e = p_[i_];
        if (e == 'd' || e == 'D' || e == 's' || e == 'S' || e == 'w' || e == 'W') {
          ++i_;
          CharRanges pr;
          bool neg = false;
          add_perl_class(e, pr, neg);
          if (neg) pr = negate_ranges(pr);
          r.insert(r.end(), pr.begin(), pr.end());
          continue;
        }
        auto c = escape_char(item);
        if (!c) return std::nullopt;
        lo = *c;
      } else {
        lo = utf8_next(p_, i_);
      }
      char32_t hi = lo;
      if (at('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
        ++i_;
        if (p_[i_] == '\\') {
          ++i_;
          if (i_ >= p_.size()) return fail("trailing backslash at end of expression", "");
          auto c = escape_char(i_ - 1);
          if (!c) return std::nullopt;
          hi = *c;
        } else {
          hi = utf8_next(p_, i_);
        }
        if (hi < lo) return fail("invalid character class range", p_.substr(item, i_ - item));
      }
      r.push_back({lo, hi});
    }
    return klass(std::move(r), negated, f);
  }

  std::string_view p_;
  std::size_t i_ = 0;
  std::string error_;
  bool flags_only_ = false;
};

}  // namespace

std::expected<RegexNode, std::string> parse_regex(std::string_view pattern) {
  std::size_t probe = 0;
  while (probe < pattern.size()) {
    std::size_t before = probe;
    if (utf8_next(pattern, probe) == 0xFFFD && probe - before == 1 &&
        static_cast<unsigned char>(pattern[before]) >= 0x80) {
      return std::unexpected("error parsing regexp: invalid UTF-8: `" + std::string(pattern) + "`");
    }
  }
  RegexParser parser(pattern);
  auto tree = parser.run();
  if (!tree) return std::unexpected(parser.error());
  return std::move(*tree);
}

}  // namespace kubex::sim::cel::internal
