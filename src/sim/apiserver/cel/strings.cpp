// String functions (CEL standard and cel-go ext strings v2, indices in code points), regex functions
// (matches, and the Kubernetes find/findAll with Go's FindAllString semantics), the Kubernetes lists
// library and cel-go ext sets.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/apiserver/cel/internal.h"
#include "sim/apiserver/go_format.h"

namespace kubex::sim::cel::internal {

namespace {

std::unexpected<Err> cost_exceeded() {
  return std::unexpected(Err{std::string(kCostExceededMessage), ErrKind::kCostExceeded});
}

std::u32string to_runes(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) out.push_back(utf8_next(s, i));
  return out;
}

std::string from_runes(std::u32string_view r) {
  std::string out;
  out.reserve(r.size());
  for (char32_t c : r) utf8_append(out, c);
  return out;
}

std::unexpected<Err> out_of_range(int64_t i) {
  return error("index out of range: " + std::to_string(i));
}

Val index_of(const std::string& str, const std::string& sub, std::optional<int64_t> offset, bool last) {
  std::u32string runes = to_runes(str);
  std::u32string subr = to_runes(sub);
  auto len = static_cast<int64_t>(runes.size());
  auto slen = static_cast<int64_t>(subr.size());
  int64_t off = offset.value_or(last ? len - 1 : 0);
  if (last && !offset) {
    if (sub.empty()) return make_int(len);
    if (str.size() < sub.size()) return make_int(-1);
  }
  if (off < 0) return out_of_range(off);
  if (sub.empty()) return make_int(off > len ? len : off);
  if (off >= len) return make_int(-1);
  auto matches_at = [&](int64_t i) {
    for (int64_t j = 0; j < slen; ++j) {
      if (runes[static_cast<std::size_t>(i + j)] != subr[static_cast<std::size_t>(j)]) return false;
    }
    return true;
  };
  if (!last) {
    for (int64_t i = off; i < len - (slen - 1); ++i) {
      if (matches_at(i)) return make_int(i);
    }
    return make_int(-1);
  }
  if (off > len - slen) off = len - slen;
  for (int64_t i = off; i >= 0; --i) {
    if (matches_at(i)) return make_int(i);
  }
  return make_int(-1);
}

// Go strings.SplitN (n < 0: all; n == 0: none; empty separator: one piece per code point).
std::vector<Value> go_split(const std::string& s, const std::string& sep, int64_t n) {
  std::vector<Value> out;
  if (n == 0) return out;
  if (sep.empty()) {
    int64_t runes = utf8_length(s);
    if (n < 0 || n > runes) n = runes;
    std::size_t i = 0;
    for (int64_t k = 0; k + 1 < n; ++k) {
      std::size_t start = i;
      utf8_next(s, i);
      out.push_back(make_string(s.substr(start, i - start)));
    }
    if (n > 0) out.push_back(make_string(s.substr(i)));
    return out;
  }
  std::size_t start = 0;
  while (n < 0 || static_cast<int64_t>(out.size()) < n - 1) {
    std::size_t m = s.find(sep, start);
    if (m == std::string::npos) break;
    out.push_back(make_string(s.substr(start, m - start)));
    start = m + sep.size();
  }
  out.push_back(make_string(s.substr(start)));
  return out;
}

// Go strings.Replace.
std::string go_replace(const std::string& s, const std::string& old_s, const std::string& new_s, int64_t n) {
  if (old_s == new_s || n == 0) return s;
  int64_t m = 0;
  if (old_s.empty()) {
    m = utf8_length(s) + 1;
  } else {
    for (std::size_t p = s.find(old_s); p != std::string::npos; p = s.find(old_s, p + old_s.size())) ++m;
  }
  if (m == 0) return s;
  if (n < 0 || m < n) n = m;
  std::string out;
  std::size_t start = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::size_t j = start;
    if (old_s.empty()) {
      if (i > 0 && j < s.size()) utf8_next(s, j);
    } else {
      j = s.find(old_s, start);
    }
    out += s.substr(start, j - start);
    out += new_s;
    start = j + old_s.size();
  }
  out += s.substr(std::min(start, s.size()));
  return out;
}

bool is_go_space(char32_t c) {
  switch (c) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

std::string go_trim_space(const std::string& s) {
  std::u32string r = to_runes(s);
  std::size_t b = 0, e = r.size();
  while (b < e && is_go_space(r[b])) ++b;
  while (e > b && is_go_space(r[e - 1])) --e;
  return from_runes(std::u32string_view(r).substr(b, e - b));
}

// cel-go ext strings.quote: Go's one-letter escapes, every other code point (U+FFFD for invalid bytes) as is.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    char32_t c = utf8_next(s, i);
    if (!append_go_escape(out, c)) utf8_append(out, c);
  }
  return out + "\"";
}

std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return s;
}

// The compiled pattern for a matches/find/findAll call: precompiled when it was a literal.
std::expected<std::shared_ptr<const Regex>, Err> regex_for(const Node& n, const Value& pattern) {
  if (n.regex) return n.regex;
  if (pattern.kind() != Kind::kString)
    return std::unexpected(Err{"no such overload", ErrKind::kNoSuchOverload});
  auto re = compile_regex(pattern.as_string());
  if (!re) return std::unexpected(Err{re.error()});
  return *re;
}

Val regex_function(const Node& n, std::vector<Value>& args, EvalContext& ctx) {
  if (args[0].kind() != Kind::kString) return no_overload();
  auto re = regex_for(n, args[1]);
  if (!re) return std::unexpected(re.error());
  const std::string& text = args[0].as_string();
  const int64_t limit = (ctx.cost_limit - ctx.cost) * 8;
  int64_t steps = 0;
  auto search =
      [&](std::size_t from) -> std::expected<std::optional<std::pair<std::size_t, std::size_t>>, Err> {
    auto m = regex_search(**re, text, from, steps, limit);
    if (steps > limit) {
      ctx.charge(steps / 8);
      return std::unexpected(cost_exceeded().error());
    }
    return m;
  };
  auto finish = [&](Val v) -> Val {
    if (!ctx.charge(steps / 8)) return cost_exceeded();
    return v;
  };
  if (n.fn == Fn::kMatches) {
    auto m = search(0);
    if (!m) return std::unexpected(m.error());
    return finish(make_bool(m->has_value()));
  }
  if (n.fn == Fn::kFind) {
    auto m = search(0);
    if (!m) return std::unexpected(m.error());
    if (!*m) return finish(make_string(""));
    return finish(make_string(text.substr((*m)->first, (*m)->second - (*m)->first)));
  }
  // findAll: Go's Regexp.FindAllString; an empty match right after the previous match is skipped.
  int64_t limit_n = -1;
  if (args.size() == 3) {
    if (args[2].kind() != Kind::kInt) return no_overload();
    limit_n = args[2].as_int();
  }
  std::vector<Value> out;
  if (limit_n < 0) limit_n = static_cast<int64_t>(text.size()) + 1;
  std::size_t pos = 0;
  std::optional<std::size_t> prev_end;
  while (static_cast<int64_t>(out.size()) < limit_n && pos <= text.size()) {
    auto m = search(pos);
    if (!m) return std::unexpected(m.error());
    if (!*m) break;
    auto [b, e] = **m;
    bool accept = true;
    if (e == pos) {
      if (prev_end && b == *prev_end) accept = false;
      if (pos < text.size()) {
        utf8_next(text, pos);
      } else {
        pos = text.size() + 1;
      }
    } else {
      pos = e;
    }
    prev_end = e;
    if (accept) out.push_back(make_string(text.substr(b, e - b)));
  }
  return finish(make_list(std::move(out)));
}

Val string_function(const Node& n, std::vector<Value>& args) {
  if (args[0].kind() != Kind::kString) return no_overload();
  const std::string& s = args[0].as_string();
  auto str_arg = [&](std::size_t i) -> const std::string* {
    return i < args.size() && args[i].kind() == Kind::kString ? &args[i].as_string() : nullptr;
  };
  auto int_arg = [&](std::size_t i) -> std::optional<int64_t> {
    if (i < args.size() && args[i].kind() == Kind::kInt) return args[i].as_int();
    return std::nullopt;
  };
  switch (n.fn) {
    case Fn::kContains:
    case Fn::kStartsWith:
    case Fn::kEndsWith: {
      const std::string* x = str_arg(1);
      if (!x) return no_overload();
      if (n.fn == Fn::kContains) return make_bool(s.find(*x) != std::string::npos);
      if (n.fn == Fn::kStartsWith)
        return make_bool(s.compare(0, x->size(), *x) == 0 && s.size() >= x->size());
      return make_bool(s.size() >= x->size() && s.compare(s.size() - x->size(), x->size(), *x) == 0);
    }
    case Fn::kLowerAscii:
      return make_string(ascii_case(s, false));
    case Fn::kUpperAscii:
      return make_string(ascii_case(s, true));
    case Fn::kTrim:
      return make_string(go_trim_space(s));
    case Fn::kCharAt: {
      auto i = int_arg(1);
      if (!i) return no_overload();
      std::u32string r = to_runes(s);
      if (*i < 0 || *i > static_cast<int64_t>(r.size())) return out_of_range(*i);
      if (*i == static_cast<int64_t>(r.size())) return make_string("");
      return make_string(from_runes(std::u32string_view(r).substr(static_cast<std::size_t>(*i), 1)));
    }
    case Fn::kIndexOf:
    case Fn::kLastIndexOf: {
      const std::string* sub = str_arg(1);
      if (!sub) return no_overload();
      std::optional<int64_t> off;
      if (args.size() == 3) {
        off = int_arg(2);
        if (!off) return no_overload();
      }
      return index_of(s, *sub, off, n.fn == Fn::kLastIndexOf);
    }
    case Fn::kReplace: {
      const std::string* from = str_arg(1);
      const std::string* to = str_arg(2);
      if (!from || !to) return no_overload();
      int64_t count = -1;
      if (args.size() == 4) {
        auto c = int_arg(3);
        if (!c) return no_overload();
        count = *c;
      }
      return make_string(go_replace(s, *from, *to, count));
    }
    case Fn::kSplit: {
      const std::string* sep = str_arg(1);
      if (!sep) return no_overload();
      int64_t count = -1;
      if (args.size() == 3) {
        auto c = int_arg(2);
        if (!c) return no_overload();
        count = *c;
      }
      return make_list(go_split(s, *sep, count));
    }
    case Fn::kSubstring: {
      auto start = int_arg(1);
      if (!start) return no_overload();
      std::u32string r = to_runes(s);
      auto len = static_cast<int64_t>(r.size());
      int64_t end = len;
      if (args.size() == 3) {
        auto e = int_arg(2);
        if (!e) return no_overload();
        end = *e;
        if (*start > end) {
          return error("invalid substring range. start: " + std::to_string(*start) +
                       ", end: " + std::to_string(end));
        }
      }
      if (*start < 0 || *start > len) return out_of_range(*start);
      if (end < 0 || end > len) return out_of_range(end);
      return make_string(from_runes(std::u32string_view(r).substr(static_cast<std::size_t>(*start),
                                                                  static_cast<std::size_t>(end - *start))));
    }
    default:
      return no_overload();
  }
}

Val list_function(const Node& n, std::vector<Value>& args, EvalContext& ctx) {
  if (args[0].kind() != Kind::kList) return no_overload();
  const auto& l = args[0].as_list();
  switch (n.fn) {
    case Fn::kJoin: {
      std::string sep;
      if (args.size() == 2) {
        if (args[1].kind() != Kind::kString) return no_overload();
        sep = args[1].as_string();
      }
      std::string out;
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (l[i].kind() != Kind::kString) {
          return error("join: invalid input: " + display(l[i]));
        }
        if (i > 0) out += sep;
        out += l[i].as_string();
      }
      return make_string(std::move(out));
    }
    case Fn::kIndexOf:
    case Fn::kLastIndexOf: {
      if (args.size() != 2) return no_overload();
      auto hit = [&](std::size_t i) {
        auto e = equals(l[i], args[1]);
        return e.has_value() && *e;
      };
      if (n.fn == Fn::kIndexOf) {
        for (std::size_t i = 0; i < l.size(); ++i) {
          if (hit(i)) return make_int(static_cast<int64_t>(i));
        }
      } else {
        for (std::size_t i = l.size(); i-- > 0;) {
          if (hit(i)) return make_int(static_cast<int64_t>(i));
        }
      }
      return make_int(-1);
    }
    case Fn::kIsSorted:
      for (std::size_t i = 1; i < l.size(); ++i) {
        auto c = compare(l[i - 1], l[i]);
        if (!c) return std::unexpected(c.error());
        if (*c > 0) return make_bool(false);
      }
      return make_bool(true);
    case Fn::kSum: {
      if (l.empty()) return make_int(0);
      Kind k = l[0].kind();
      if (k != Kind::kInt && k != Kind::kUint && k != Kind::kDouble && k != Kind::kDuration)
        return no_overload();
      Value acc = l[0];
      for (std::size_t i = 1; i < l.size(); ++i) {
        std::vector<Value> pair{acc, l[i]};
        Node add_node;
        add_node.fn = Fn::kAdd;
        Val r = call_function(add_node, pair, ctx);
        if (!r) return r;
        acc = std::move(*r);
      }
      return acc;
    }
    case Fn::kMin:
    case Fn::kMax: {
      if (l.empty()) return error(std::string(n.fn == Fn::kMin ? "min" : "max") + " called on empty list");
      std::size_t best = 0;
      for (std::size_t i = 1; i < l.size(); ++i) {
        auto c = compare(l[best], l[i]);
        if (!c) return std::unexpected(c.error());
        if ((n.fn == Fn::kMin && *c > 0) || (n.fn == Fn::kMax && *c < 0)) best = i;
      }
      return l[best];
    }
    default:
      return no_overload();
  }
}

Val set_function(const Node& n, std::vector<Value>& args, EvalContext& ctx) {
  if (args[0].kind() != Kind::kList || args[1].kind() != Kind::kList) return no_overload();
  const auto& a = args[0].as_list();
  const auto& b = args[1].as_list();
  if (!ctx.charge(static_cast<int64_t>(a.size() * b.size() / 4))) return cost_exceeded();
  auto in = [](const std::vector<Value>& hay, const Value& needle) {
    for (const Value& v : hay) {
      auto e = equals(v, needle);
      if (e.has_value() && *e) return true;
    }
    return false;
  };
  auto contains_all = [&](const std::vector<Value>& x, const std::vector<Value>& y) {
    for (const Value& v : y) {
      if (!in(x, v)) return false;
    }
    return true;
  };
  switch (n.fn) {
    case Fn::kSetsContains:
      return make_bool(contains_all(a, b));
    case Fn::kSetsEquivalent:
      return make_bool(contains_all(a, b) && contains_all(b, a));
    default:
      for (const Value& v : b) {
        if (in(a, v)) return make_bool(true);
      }
      return make_bool(false);
  }
}

}  // namespace

Val call_collection_function(const Node& n, std::vector<Value>& args, EvalContext& ctx) {
  switch (n.fn) {
    case Fn::kMatches:
    case Fn::kFind:
    case Fn::kFindAll:
      return regex_function(n, args, ctx);
    case Fn::kQuote:
      if (args[0].kind() != Kind::kString) return no_overload();
      return make_string(quote(args[0].as_string()));
    case Fn::kJoin:
    case Fn::kIsSorted:
    case Fn::kSum:
    case Fn::kMin:
    case Fn::kMax:
      return list_function(n, args, ctx);
    case Fn::kIndexOf:
    case Fn::kLastIndexOf:
      if (args[0].kind() == Kind::kList) return list_function(n, args, ctx);
      return string_function(n, args);
    case Fn::kSetsContains:
    case Fn::kSetsEquivalent:
    case Fn::kSetsIntersects:
      return set_function(n, args, ctx);
    default:
      return string_function(n, args);
  }
}

}  // namespace kubex::sim::cel::internal
