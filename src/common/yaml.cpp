#include "common/yaml.h"

#include "common/base64.h"
#include "common/utf8.h"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>

namespace kubex::common {
namespace {

using nlohmann::json;

constexpr std::string_view kTagPrefix = "tag:yaml.org,2002:";
constexpr int kMaxDepth = 1000;
constexpr std::size_t kBaseValueBudget = 1'000'000;

// ---- Input checks ----

std::string position(int line, int column) {
  if (line < 0) return "yaml: ";
  return "yaml: line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) + ": ";
}

std::string position(const YAML::Mark& mark) {
  return position(mark.line, mark.column);
}

// YAML's printable set, as go-yaml enforces it.
bool printable(char32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

std::optional<std::string> check_input(std::string_view text) {
  int line = 0;
  int column = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, len] = utf8_decode(text, i);
    if (len == 0) return position(line, column) + "invalid UTF-8 in input";
    if (!printable(cp)) return position(line, column) + "control characters are not allowed";
    if (cp == '\n') {
      ++line;
      column = 0;
    } else {
      ++column;
    }
    i += len;
  }
  return std::nullopt;
}

// 0-based numbers of the lines that start with a document marker ("---" or "...").
std::vector<int> document_marker_lines(std::string_view text) {
  std::vector<int> lines;
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  int line = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::string_view rest = text.substr(start);
    if ((rest.starts_with("---") || rest.starts_with("...")) &&
        (rest.size() == 3 || rest[3] == ' ' || rest[3] == '\t' || rest[3] == '\r' || rest[3] == '\n')) {
      lines.push_back(line);
    }
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
    ++line;
  }
  return lines;
}

bool has_utf16_or_32_bom(std::string_view t) {
  return t.starts_with("\xFE\xFF") || t.starts_with("\xFF\xFE") ||
         t.starts_with(std::string_view("\0\0\xFE\xFF", 4));
}

// Replaces invalid UTF-8 with U+FFFD, as Go's encoding/json does.
std::string sanitize_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_decode(s, i).len;
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

// ---- Plain scalar resolution (go-yaml v2) ----

struct Scalar {
  enum Kind { Null, Bool, Int, Uint, Float, NonFinite, Merge, String } kind = String;
  bool b = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0;
};

std::string_view kind_tag(Scalar::Kind k) {
  switch (k) {
    case Scalar::Null:
      return "!!null";
    case Scalar::Bool:
      return "!!bool";
    case Scalar::Int:
    case Scalar::Uint:
      return "!!int";
    case Scalar::Float:
    case Scalar::NonFinite:
      return "!!float";
    case Scalar::Merge:
      return "!!merge";
    case Scalar::String:
      break;
  }
  return "!!str";
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// strconv.ParseUint(s, 0, 64) on text without underscores.
bool parse_uint_base0(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  unsigned base = 10;
  if (s[0] == '0') {
    char p = s.size() >= 3 ? static_cast<char>(s[1] | 0x20) : '\0';
    if (p == 'b' || p == 'o' || p == 'x') {
      base = p == 'b' ? 2 : p == 'o' ? 8 : 16;
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  std::uint64_t v = 0;
  for (char c : s) {
    unsigned d = 0;
    if (is_digit(c)) {
      d = static_cast<unsigned>(c - '0');
    } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
      d = static_cast<unsigned>((c | 0x20) - 'a' + 10);
    } else {
      return false;
    }
    if (d >= base) return false;
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / base) return false;
    v = v * base + d;
  }
  out = v;
  return true;
}

// strconv.ParseInt(s, 0, 64).
bool parse_int_base0(std::string_view s, std::int64_t& out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  std::uint64_t u = 0;
  if (!parse_uint_base0(s, u)) return false;
  constexpr std::uint64_t kMaxPos = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (neg) {
    if (u > kMaxPos + 1) return false;
    out = static_cast<std::int64_t>(0 - u);
  } else {
    if (u > kMaxPos) return false;
    out = static_cast<std::int64_t>(u);
  }
  return true;
}

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool yaml_style_float(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    return i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// Parses a decimal float of the yaml_style_float shape like strconv.ParseFloat: nullopt on overflow
// (go-yaml then keeps the text as a string), ±0 on underflow.
std::optional<double> parse_float(std::string_view s) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (res.ec == std::errc::result_out_of_range) {
    // Decide overflow vs underflow from the decimal exponent of the first significant digit.
    std::size_t e_pos = s.find_first_of("eE");
    std::string_view mant = s.substr(0, e_pos);
    std::int64_t exp = 0;
    if (e_pos != std::string_view::npos) {
      std::string_view e = s.substr(e_pos + 1);
      bool eneg = !e.empty() && e[0] == '-';
      if (!e.empty() && (e[0] == '+' || e[0] == '-')) e.remove_prefix(1);
      for (char c : e) exp = std::min<std::int64_t>(exp * 10 + (c - '0'), 1'000'000'000);
      if (eneg) exp = -exp;
    }
    std::size_t point = mant.find('.');
    std::string_view int_part = mant.substr(0, point);
    std::size_t nz = int_part.find_first_not_of('0');
    std::int64_t magnitude = exp;
    if (nz != std::string_view::npos) {
      magnitude += static_cast<std::int64_t>(int_part.size() - nz);
    } else if (point != std::string_view::npos) {
      std::string_view frac = mant.substr(point + 1);
      std::size_t fz = frac.find_first_not_of('0');
      magnitude -= static_cast<std::int64_t>(fz == std::string_view::npos ? frac.size() : fz);
    }
    if (magnitude > 0) return std::nullopt;
    return neg ? -0.0 : 0.0;
  }
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) return std::nullopt;
  return neg ? -v : v;
}

// Removes `_` digit separators when each sits between two digits (Go's underscoreOK for base 10).
std::optional<std::string> strip_digit_underscores(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 >= s.size() || !is_digit(s[i - 1]) || !(is_digit(s[i + 1]) || s[i + 1] == '_')) {
        return std::nullopt;
      }
      continue;
    }
    out += s[i];
  }
  return out;
}

Scalar resolve_plain(std::string_view v) {
  Scalar r;
  struct Word {
    std::string_view text;
    Scalar::Kind kind;
    bool value;
  };
  static constexpr Word kWords[] = {
      {"y", Scalar::Bool, true},          {"Y", Scalar::Bool, true},
      {"yes", Scalar::Bool, true},        {"Yes", Scalar::Bool, true},
      {"YES", Scalar::Bool, true},        {"true", Scalar::Bool, true},
      {"True", Scalar::Bool, true},       {"TRUE", Scalar::Bool, true},
      {"on", Scalar::Bool, true},         {"On", Scalar::Bool, true},
      {"ON", Scalar::Bool, true},         {"n", Scalar::Bool, false},
      {"N", Scalar::Bool, false},         {"no", Scalar::Bool, false},
      {"No", Scalar::Bool, false},        {"NO", Scalar::Bool, false},
      {"false", Scalar::Bool, false},     {"False", Scalar::Bool, false},
      {"FALSE", Scalar::Bool, false},     {"off", Scalar::Bool, false},
      {"Off", Scalar::Bool, false},       {"OFF", Scalar::Bool, false},
      {"", Scalar::Null, false},          {"~", Scalar::Null, false},
      {"null", Scalar::Null, false},      {"Null", Scalar::Null, false},
      {"NULL", Scalar::Null, false},      {".nan", Scalar::NonFinite, false},
      {".NaN", Scalar::NonFinite, false}, {".NAN", Scalar::NonFinite, false},
      {".inf", Scalar::NonFinite, true},  {".Inf", Scalar::NonFinite, true},
      {".INF", Scalar::NonFinite, true},  {"+.inf", Scalar::NonFinite, true},
      {"+.Inf", Scalar::NonFinite, true}, {"+.INF", Scalar::NonFinite, true},
      {"-.inf", Scalar::NonFinite, true}, {"-.Inf", Scalar::NonFinite, true},
      {"-.INF", Scalar::NonFinite, true}, {"<<", Scalar::Merge, false},
  };
  for (const auto& w : kWords) {
    if (w.text == v) {
      r.kind = w.kind;
      r.b = w.value;
      return r;
    }
  }
  char first = v.empty() ? '\0' : v[0];
  if (first == '.') {
    auto plain = strip_digit_underscores(v);
    if (plain && yaml_style_float(*plain)) {
      if (auto f = parse_float(*plain)) {
        r.kind = Scalar::Float;
        r.f = *f;
      }
    }
    return r;
  }
  if (!(is_digit(first) || first == '+' || first == '-')) return r;  // a string
  std::string plain;
  for (char c : v) {
    if (c != '_') plain += c;
  }
  if (parse_int_base0(plain, r.i)) {
    r.kind = Scalar::Int;
    return r;
  }
  if (parse_uint_base0(plain, r.u)) {
    r.kind = Scalar::Uint;
    return r;
  }
  if (yaml_style_float(plain)) {
    if (auto f = parse_float(plain)) {
      r.kind = Scalar::Float;
      r.f = *f;
    }
  }
  return r;
}

// go-yaml's timestamp shapes all start with four digits and '-'.
bool looks_like_timestamp(std::string_view s) {
  return s.size() > 4 && is_digit(s[0]) && is_digit(s[1]) && is_digit(s[2]) && is_digit(s[3]) && s[4] == '-';
}


// strconv.FormatFloat(f, 'g', -1, 32), with go-yaml's names for the non-finite values.
std::string format_float_key(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  auto f = static_cast<float>(d);
  if (std::isinf(f)) return f > 0 ? ".inf" : "-.inf";  // too big for float32
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(res.ptr - buf));  // e.g. "-1.5e+06"
  bool neg = sci.starts_with('-');
  if (neg) sci.remove_prefix(1);
  std::size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exp = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp);
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += exp < 0 ? "e-" : "e+";
    int a = exp < 0 ? -exp : exp;
    if (a < 10) out += '0';
    out += std::to_string(a);
    return out;
  }
  int point = exp + 1;  // digits before the decimal point
  if (point <= 0) {
    out += "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
  } else if (static_cast<std::size_t>(point) >= digits.size()) {
    out += digits + std::string(static_cast<std::size_t>(point) - digits.size(), '0');
  } else {
    out += digits.substr(0, static_cast<std::size_t>(point)) + "." +
           digits.substr(static_cast<std::size_t>(point));
  }
  return out;
}

json float_to_json(double d) {
  // Integral values become integers, as they do on the wire from kubectl.
  if (d == std::trunc(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
    return json(static_cast<std::int64_t>(d));
  }
  return json(d);
}

// ---- Building a node graph from yaml-cpp's parser events ----
//
// yaml-cpp's YAML::LoadAll loops forever on some malformed input (a stray ',' at the top level, see
// jbeder/yaml-cpp#1040 and #1319), so the stream is driven document by document through YAML::Parser with
// our own event handler, which also lets us refuse an alias to an anchor that is still open (a cycle).

struct YNode {
  enum class Kind { Null, Scalar, Sequence, Map } kind = Kind::Null;
  YAML::Mark mark;
  std::string tag;
  std::string value;
  std::vector<std::shared_ptr<const YNode>> items;  // sequence items, or map keys and values interleaved
};
using YNodePtr = std::shared_ptr<YNode>;

// The 1-based lines of a document's root and, for a mapping with an `items` sequence, of its items (the last
// `items` key wins, as in the JSON value).
DocumentLines document_lines(const YNode& root) {
  DocumentLines out;
  out.line = root.mark.line + 1;
  if (root.kind != YNode::Kind::Map) return out;
  for (std::size_t i = 0; i + 1 < root.items.size(); i += 2) {
    const YNode* key = root.items[i].get();
    const YNode* value = root.items[i + 1].get();
    if (!key || !value || key->kind != YNode::Kind::Scalar || key->value != "items") continue;
    out.items.clear();
    if (value->kind != YNode::Kind::Sequence) continue;
    for (const auto& item : value->items) out.items.push_back(item ? item->mark.line + 1 : out.line);
  }
  return out;
}

class GraphBuilder : public YAML::EventHandler {
 public:
  struct Document {
    YAML::Mark start;
    std::shared_ptr<const YNode> root;
  };

  std::optional<Document> document;  // the last completed document
  std::optional<Error> error;        // first problem found by the handler itself

  void OnDocumentStart(const YAML::Mark& mark) override {
    start_ = mark;
    root_.reset();
    stack_.clear();
    anchors_.clear();
    open_.clear();
    document.reset();
  }
  void OnDocumentEnd() override { document = Document{start_, root_}; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto node = std::make_shared<YNode>();
    node->mark = mark;
    add(node, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (error) return;
    if (open_.contains(anchor)) {
      error = Error{"", position(mark) + "anchor value contains itself"};
      return;
    }
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      error = Error{"", position(mark) + "the referenced anchor is not defined"};
      return;
    }
    attach(it->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    auto node = std::make_shared<YNode>();
    node->kind = YNode::Kind::Scalar;
    node->mark = mark;
    node->tag = tag;
    node->value = value;
    add(node, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(YNode::Kind::Sequence, mark, tag, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(YNode::Kind::Map, mark, tag, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  void attach(const std::shared_ptr<const YNode>& node) {
    if (stack_.empty()) {
      root_ = node;
    } else {
      stack_.back().first->items.push_back(node);
    }
  }
  void add(const YNodePtr& node, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = node;
    attach(node);
  }
  void open(YNode::Kind kind, const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) {
    auto node = std::make_shared<YNode>();
    node->kind = kind;
    node->mark = mark;
    node->tag = tag;
    add(node, anchor);
    if (anchor != YAML::NullAnchor) open_.insert(anchor);
    stack_.emplace_back(node, anchor);
  }
  void close() {
    if (stack_.empty()) return;
    open_.erase(stack_.back().second);
    stack_.pop_back();
  }

  YAML::Mark start_;
  std::shared_ptr<const YNode> root_;
  std::vector<std::pair<YNodePtr, YAML::anchor_t>> stack_;
  std::map<YAML::anchor_t, std::shared_ptr<const YNode>> anchors_;
  std::set<YAML::anchor_t> open_;
};

// ---- The converter ----

// A scalar with its type resolved; `text` is the (UTF-8) content.
struct TypedScalar {
  Scalar value;
  std::string text;
};

class Converter {
 public:
  Converter(std::size_t budget, bool check_strings) : budget_(budget), check_strings_(check_strings) {}

  Result<json> convert(const YNode& node, int depth) {
    if (++count_ > budget_) {
      return fail(position(node.mark) + "document expands to more than " + std::to_string(budget_) +
                  " values (excessive aliasing)");
    }
    switch (node.kind) {
      case YNode::Kind::Null:
        return json(nullptr);
      case YNode::Kind::Scalar:
        return scalar(node);
      case YNode::Kind::Sequence:
      case YNode::Kind::Map:
        break;
    }
    if (depth >= kMaxDepth)
      return fail(position(node.mark) + "document is nested more than 1000 levels deep");
    return node.kind == YNode::Kind::Sequence ? sequence(node, depth) : mapping(node, depth);
  }

 private:
  Result<json> sequence(const YNode& node, int depth) {
    json out = json::array();
    for (const auto& item : node.items) {
      auto v = convert(*item, depth + 1);
      if (!v) return v;
      out.push_back(std::move(*v));
    }
    return out;
  }

  static bool is_merge_key(const YNode& key) {
    return key.kind == YNode::Kind::Scalar && key.value == "<<" &&
           (key.tag == "?" || key.tag == std::string(kTagPrefix) + "merge");
  }

  Result<json> mapping(const YNode& node, int depth) {
    json out = json::object();
    for (std::size_t i = 0; i + 1 < node.items.size(); i += 2) {
      const YNode& key = *node.items[i];
      const YNode& value = *node.items[i + 1];
      if (is_merge_key(key)) {
        if (auto merged = merge(value, depth, out); !merged) return std::unexpected(merged.error());
        continue;
      }
      auto name = key_string(key);
      if (!name) return std::unexpected(name.error());
      auto v = convert(value, depth + 1);
      if (!v) return v;
      out[*name] = std::move(*v);
    }
    return out;
  }

  // Applies `<<: value` onto `out`, in go-yaml v2 order: merged keys overwrite keys already set, and in a
  // list of maps the earlier maps take precedence.
  Result<bool> merge(const YNode& value, int depth, json& out) {
    auto want_map = [&] {
      return fail(position(value.mark) + "map merge requires map or sequence of maps as the value");
    };
    std::vector<const YNode*> sources;
    if (value.kind == YNode::Kind::Map) {
      sources.push_back(&value);
    } else if (value.kind == YNode::Kind::Sequence) {
      for (std::size_t i = value.items.size(); i-- > 0;) {
        if (value.items[i]->kind != YNode::Kind::Map) return want_map();
        sources.push_back(value.items[i].get());
      }
    } else {
      return want_map();
    }
    for (const YNode* source : sources) {
      auto m = convert(*source, depth + 1);
      if (!m) return std::unexpected(m.error());
      for (auto& [k, v] : m->items()) out[k] = std::move(v);
    }
    return true;
  }

  Result<std::string> key_string(const YNode& key) {
    auto unsupported = [&](const std::string& what) {
      return fail(position(key.mark) + "unsupported map key: " + what);
    };
    if (key.kind == YNode::Kind::Map) return unsupported("a mapping");
    if (key.kind == YNode::Kind::Sequence) return unsupported("a sequence");
    if (key.kind == YNode::Kind::Null) return unsupported("null");
    auto typed = typed_scalar(key);
    if (!typed) return std::unexpected(typed.error());
    const Scalar& v = typed->value;
    switch (v.kind) {
      case Scalar::Null:
        return unsupported("null");
      case Scalar::Bool:
        return std::string(v.b ? "true" : "false");
      case Scalar::Int:
        return std::to_string(v.i);
      case Scalar::Uint:
        return unsupported("integer " + typed->text + " (beyond int64)");
      case Scalar::Float:
        return format_float_key(v.f);
      case Scalar::NonFinite: {
        const std::string& t = typed->text;
        if (t.find("nan") != std::string::npos || t.find("NaN") != std::string::npos ||
            t.find("NAN") != std::string::npos) {
          return std::string(".nan");
        }
        return std::string(t.starts_with('-') ? "-.inf" : ".inf");
      }
      case Scalar::Merge:
      case Scalar::String:
        break;
    }
    return std::move(typed->text);
  }

  Result<json> scalar(const YNode& node) {
    auto typed = typed_scalar(node);
    if (!typed) return std::unexpected(typed.error());
    const Scalar& v = typed->value;
    switch (v.kind) {
      case Scalar::Null:
        return json(nullptr);
      case Scalar::Bool:
        return json(v.b);
      case Scalar::Int:
        return json(v.i);
      case Scalar::Uint:
        return json(v.u);
      case Scalar::Float:
        return float_to_json(v.f);
      case Scalar::NonFinite:
        return fail(position(node.mark) + "`" + typed->text +
                    "` (infinity or NaN) cannot be represented in JSON");
      case Scalar::Merge:
      case Scalar::String:
        break;
    }
    return json(std::move(typed->text));
  }

  // Types a scalar node by its tag and text (see yaml.h).
  Result<TypedScalar> typed_scalar(const YNode& node) {
    TypedScalar out;
    out.text = check_strings_ && !utf8_valid(node.value) ? sanitize_utf8(node.value) : node.value;
    const std::string& tag = node.tag;
    if (tag == "!") return out;  // quoted or block scalar: a string
    std::string_view short_tag;
    if (tag == "?" || tag.empty()) {
      short_tag = "";
    } else if (std::string_view(tag).starts_with(kTagPrefix)) {
      short_tag = std::string_view(tag).substr(kTagPrefix.size());
    } else {
      return out;  // a local or unknown tag: the text, as go-yaml gives it
    }
    if (short_tag == "str") return out;
    if (short_tag == "binary") {
      // !!binary may wrap lines; the base64 itself is the standard alphabet with padding.
      std::string joined;
      for (char c : out.text) {
        if (c != '\n' && c != '\r') joined += c;
      }
      auto decoded = base64_decode(joined);
      if (!decoded) return fail(position(node.mark) + "!!binary value contains invalid base64 data");
      out.text = sanitize_utf8(*decoded);
      return out;
    }
    if (short_tag == "timestamp") {
      if (!looks_like_timestamp(out.text)) return mismatch(node, out.text, Scalar::String, short_tag);
      return out;
    }
    if (!short_tag.empty() && short_tag != "int" && short_tag != "float" && short_tag != "bool" &&
        short_tag != "null") {
      return out;  // !!map, !!seq, !!merge, … on a scalar: the text
    }
    Scalar r = resolve_plain(out.text);
    if (!short_tag.empty()) {
      bool ok = (short_tag == "int" && (r.kind == Scalar::Int || r.kind == Scalar::Uint)) ||
                (short_tag == "float" && (r.kind == Scalar::Float || r.kind == Scalar::Int ||
                                          r.kind == Scalar::Uint || r.kind == Scalar::NonFinite)) ||
                (short_tag == "bool" && r.kind == Scalar::Bool) ||
                (short_tag == "null" && r.kind == Scalar::Null);
      if (!ok) return mismatch(node, out.text, r.kind, short_tag);
      if (short_tag == "float" && r.kind == Scalar::Int) {
        r.kind = Scalar::Float;
        r.f = static_cast<double>(r.i);
      } else if (short_tag == "float" && r.kind == Scalar::Uint) {
        r.kind = Scalar::Float;
        r.f = static_cast<double>(r.u);
      }
    }
    out.value = r;
    return out;
  }

  static std::unexpected<Error> mismatch(const YNode& node, const std::string& text, Scalar::Kind kind,
                                         std::string_view tag) {
    return fail(position(node.mark) + "cannot decode " + std::string(kind_tag(kind)) + " `" + text +
                "` as a !!" + std::string(tag));
  }

  std::size_t budget_;
  std::size_t count_ = 0;
  bool check_strings_;
};

}  // namespace

Result<std::vector<json>> yaml_to_json_documents(std::string_view text, std::vector<DocumentLines>* lines) {
  try {
    const bool wide = has_utf16_or_32_bom(text);
    if (!wide) {
      if (auto problem = check_input(text)) return fail(*problem);
    }
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    GraphBuilder builder;
    Converter converter(kBaseValueBudget + text.size(), wide);
    // yaml-cpp starts a new document when a second top-level value follows the first ("- a\nb: c");
    // YAML (and kubectl) require a "---" between them.
    const std::vector<int> markers = wide ? std::vector<int>() : document_marker_lines(text);
    int previous_line = -1;
    bool have_previous = false;
    std::optional<YAML::Mark> previous_start;
    std::size_t documents = 0;
    std::vector<json> out;
    while (parser.HandleNextDocument(builder)) {
      if (builder.error) return std::unexpected(*builder.error);
      if (!builder.document) return fail("yaml: incomplete document");
      const YAML::Mark start = builder.document->start;
      // A document that starts where the previous one started means the parser did not move: a token it
      // cannot place (a stray ',' for instance). Report it instead of looping.
      if ((previous_start && previous_start->pos == start.pos) || ++documents > text.size() + 2) {
        std::string what = "unexpected content";
        if (!wide && start.pos >= 0 && static_cast<std::size_t>(start.pos) < text.size()) {
          what = "unexpected character '" + std::string(1, text[static_cast<std::size_t>(start.pos)]) + "'";
        }
        return fail(position(start) + what);
      }
      previous_start = start;
      const auto root = builder.document->root;
      if (!root) continue;
      auto v = converter.convert(*root, 0);
      if (!v) return std::unexpected(v.error());
      if (v->is_null()) continue;
      const int line = root->mark.line;
      if (have_previous && !wide && line >= 0) {
        bool separated = std::any_of(markers.begin(), markers.end(),
                                     [&](int m) { return m > previous_line && m <= line; });
        if (!separated) {
          return fail(
              position(root->mark) +
              "unexpected content after the end of the document (use '---' to start another document)");
        }
      }
      have_previous = true;
      previous_line = line;
      out.push_back(std::move(*v));
      if (lines) lines->push_back(document_lines(*root));
    }
    return out;
  } catch (const YAML::DeepRecursion& e) {
    return fail(position(e.mark) + "document is nested too deeply");
  } catch (const YAML::Exception& e) {
    return fail(position(e.mark) + e.msg);
  } catch (const std::exception& e) {
    return fail(std::string("yaml: ") + e.what());
  } catch (...) {
    return fail("yaml: unexpected error");
  }
}

Result<json> yaml_to_json(std::string_view text) {
  auto docs = yaml_to_json_documents(text);
  if (!docs) return std::unexpected(docs.error());
  if (docs->empty()) return json(nullptr);
  if (docs->size() > 1) {
    return fail("yaml: expected a single document, found " + std::to_string(docs->size()));
  }
  return std::move(docs->front());
}

}  // namespace kubex::common
