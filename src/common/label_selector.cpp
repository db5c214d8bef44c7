#include "common/label_selector.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "common/quote.h"
#include "common/wildcard.h"

namespace kubex::common {
namespace {

constexpr std::size_t kNameMaxLength = 63;
constexpr std::size_t kPrefixMaxLength = 253;

constexpr std::string_view kNameRule =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character";

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
bool is_qualified_name_part(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// RFC 1123 subdomain: dot-separated labels of [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty()) return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view label =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !is_lower_alnum(label.front()) || !is_lower_alnum(label.back())) return false;
    for (char c : label) {
      if (!is_lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::optional<std::string> join_problems(const std::vector<std::string>& problems) {
  if (problems.empty()) return std::nullopt;
  std::string out;
  for (const auto& p : problems) {
    if (!out.empty()) out += "; ";
    out += p;
  }
  return out;
}

// A wildcard value: <= 63 characters of [A-Za-z0-9._-*].
std::optional<std::string> check_wildcard_value(std::string_view v) {
  std::vector<std::string> problems;
  if (v.size() > kNameMaxLength) problems.push_back("must be no more than 63 characters");
  if (!std::all_of(v.begin(), v.end(),
                   [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.' || c == '*'; })) {
    problems.push_back("a wildcard value must consist of alphanumeric characters, '-', '_', '.' or '*'");
  }
  return join_problems(problems);
}

std::optional<std::string> check_value(std::string_view v, LabelOperator op,
                                       const LabelSelectorOptions& options) {
  if (options.wildcard_values && (op == LabelOperator::In || op == LabelOperator::NotIn) && has_wildcard(v)) {
    return check_wildcard_value(v);
  }
  return check_label_value(v);
}

// Like strconv.ParseInt(s, 10, 64).
bool parse_int64(std::string_view s, std::int64_t& out) {
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  std::uint64_t v = 0;
  const std::uint64_t limit = neg ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (limit - d) / 10) return false;
    v = v * 10 + d;
  }
  out = neg ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  return true;
}

std::string_view operator_text(LabelOperator op) {
  switch (op) {
    case LabelOperator::Equals:
      return "=";
    case LabelOperator::DoubleEquals:
      return "==";
    case LabelOperator::NotEquals:
      return "!=";
    case LabelOperator::In:
      return " in ";
    case LabelOperator::NotIn:
      return " notin ";
    case LabelOperator::GreaterThan:
      return ">";
    case LabelOperator::LessThan:
      return "<";
    case LabelOperator::Exists:
    case LabelOperator::DoesNotExist:
      break;
  }
  return "";
}

// ---- The string syntax: a lexer and a recursive-descent parser mirroring apimachinery's. ----

enum class Tok {
  End,
  Identifier,
  In,
  NotIn,
  Equals,
  DoubleEquals,
  NotEquals,
  Bang,
  Greater,
  Less,
  OpenPar,
  ClosePar,
  Comma,
};

struct Token {
  Tok tok;
  std::string_view text;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool is_special(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::vector<Token> lex(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (true) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (i >= s.size()) break;
    char c = s[i];
    if (is_special(c)) {
      if (i + 1 < s.size() && s[i + 1] == '=' && (c == '!' || c == '=')) {
        out.push_back({c == '!' ? Tok::NotEquals : Tok::DoubleEquals, s.substr(i, 2)});
        i += 2;
        continue;
      }
      Tok t = Tok::Comma;
      switch (c) {
        case '=':
          t = Tok::Equals;
          break;
        case '!':
          t = Tok::Bang;
          break;
        case '(':
          t = Tok::OpenPar;
          break;
        case ')':
          t = Tok::ClosePar;
          break;
        case '>':
          t = Tok::Greater;
          break;
        case '<':
          t = Tok::Less;
          break;
        default:
          t = Tok::Comma;
          break;
      }
      out.push_back({t, s.substr(i, 1)});
      ++i;
      continue;
    }
    std::size_t start = i;
    while (i < s.size() && !is_space(s[i]) && !is_special(s[i])) ++i;
    std::string_view word = s.substr(start, i - start);
    Tok t = word == "in" ? Tok::In : word == "notin" ? Tok::NotIn : Tok::Identifier;
    out.push_back({t, word});
  }
  out.push_back({Tok::End, {}});
  return out;
}

std::string describe(const Token& t) {
  if (t.tok == Tok::End) return "end of string";
  return "'" + std::string(t.text) + "'";
}

class Parser {
 public:
  Parser(std::string_view s, const LabelSelectorOptions& options) : tokens_(lex(s)), options_(options) {}

  Result<std::vector<LabelRequirement>> parse() {
    std::vector<LabelRequirement> out;
    while (true) {
      Tok t = peek_value();
      if (t == Tok::End) return out;
      if (t != Tok::Identifier && t != Tok::Bang) {
        return fail("found " + describe(tokens_[pos_]) + ", expected: !, identifier, or 'end of string'");
      }
      auto r = requirement();
      if (!r) return fail("unable to parse requirement: " + r.error().message);
      out.push_back(std::move(*r));
      const Token& after = tokens_[pos_++];
      if (after.tok == Tok::End) return out;
      if (after.tok != Tok::Comma)
        return fail("found " + describe(after) + ", expected: ',' or 'end of string'");
      Tok next = peek_value();
      if (next != Tok::Identifier && next != Tok::Bang) {
        return fail("found " + describe(tokens_[pos_]) + ", expected: identifier after ','");
      }
    }
  }

 private:
  // In a value position the keywords `in` and `notin` are plain identifiers.
  static Tok as_value(Tok t) { return t == Tok::In || t == Tok::NotIn ? Tok::Identifier : t; }
  Tok peek_value() const { return as_value(tokens_[pos_].tok); }

  Result<LabelRequirement> requirement() {
    LabelRequirement r;
    bool negated = false;
    const Token* key = &tokens_[pos_++];
    if (key->tok == Tok::Bang) {
      negated = true;
      key = &tokens_[pos_++];
    }
    if (as_value(key->tok) != Tok::Identifier)
      return fail("found " + describe(*key) + ", expected: identifier");
    if (auto problem = check_label_key(key->text)) {
      return fail("invalid label key " + quote(key->text) + ": " + *problem);
    }
    r.key = std::string(key->text);
    Tok next = peek_value();
    if (negated || next == Tok::End || next == Tok::Comma) {
      // "!key" takes no operator; whatever follows is the caller's business (it expects ',' or the end).
      r.op = negated ? LabelOperator::DoesNotExist : LabelOperator::Exists;
      return r;
    }
    const Token& op = tokens_[pos_++];
    switch (op.tok) {
      case Tok::In:
        r.op = LabelOperator::In;
        break;
      case Tok::NotIn:
        r.op = LabelOperator::NotIn;
        break;
      case Tok::Equals:
        r.op = LabelOperator::Equals;
        break;
      case Tok::DoubleEquals:
        r.op = LabelOperator::DoubleEquals;
        break;
      case Tok::NotEquals:
        r.op = LabelOperator::NotEquals;
        break;
      case Tok::Greater:
        r.op = LabelOperator::GreaterThan;
        break;
      case Tok::Less:
        r.op = LabelOperator::LessThan;
        break;
      default:
        return fail("found " + describe(op) + ", expected: in, notin, =, ==, !=, gt, lt");
    }
    if (r.op == LabelOperator::In || r.op == LabelOperator::NotIn) {
      auto values = set_values();
      if (!values) return std::unexpected(values.error());
      r.values = std::move(*values);
    } else {
      Tok t = peek_value();
      if (t == Tok::End || t == Tok::Comma) {
        r.values.emplace_back();
      } else if (t == Tok::Identifier) {
        r.values.emplace_back(tokens_[pos_++].text);
      } else {
        return fail("found " + describe(tokens_[pos_]) + ", expected: identifier");
      }
    }
    for (const auto& v : r.values) {
      if (r.op == LabelOperator::GreaterThan || r.op == LabelOperator::LessThan) {
        std::int64_t ignored = 0;
        if (!parse_int64(v, ignored)) {
          return fail("invalid value " + quote(v) + " for key " + quote(r.key) +
                      ": for 'Gt', 'Lt' operators, the value must be an integer");
        }
      }
      if (auto problem = check_value(v, r.op, options_)) {
        return fail("invalid label value " + quote(v) + " for key " + quote(r.key) + ": " + *problem);
      }
    }
    return r;
  }

  // "(" values ")" — a sorted set; empty entries ("(,a)", "()") stand for the empty value.
  Result<std::vector<std::string>> set_values() {
    const Token& open = tokens_[pos_++];
    if (open.tok != Tok::OpenPar) return fail("found " + describe(open) + ", expected: '('");
    std::vector<std::string> values;
    Tok t = peek_value();
    if (t == Tok::ClosePar) {
      ++pos_;
      values.emplace_back();
      return values;
    }
    if (t != Tok::Identifier && t != Tok::Comma) {
      return fail("found " + describe(tokens_[pos_]) + ", expected: ',', ')' or identifier");
    }
    // Mirrors apimachinery's parseIdentifiersList: empty entries ("(,a)", "(a,,b)", "(a,)") mean "".
    while (true) {
      const Token& tok = tokens_[pos_++];
      Tok k = as_value(tok.tok);
      if (k == Tok::Identifier) {
        values.emplace_back(tok.text);
        Tok next = peek_value();
        if (next == Tok::Comma) continue;
        if (next == Tok::ClosePar) {
          ++pos_;
          break;
        }
        return fail("found " + describe(tokens_[pos_]) + ", expected: ',' or ')'");
      }
      if (k != Tok::Comma) return fail("found " + describe(tok) + ", expected: ',', or identifier");
      if (values.empty()) values.emplace_back();  // "(,"
      Tok next = peek_value();
      if (next == Tok::ClosePar) {
        values.emplace_back();  // ",)"
        ++pos_;
        break;
      }
      if (next == Tok::Comma) values.emplace_back();  // ",,"
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    return values;
  }

  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  const LabelSelectorOptions& options_;
};

void sort_by_key(std::vector<LabelRequirement>& reqs) {
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const LabelRequirement& a, const LabelRequirement& b) { return a.key < b.key; });
}

}  // namespace

std::optional<std::string> check_label_key(std::string_view key) {
  std::vector<std::string> problems;
  std::string_view name = key;
  std::size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      return "a qualified name " + std::string(kNameRule) +
             ", with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
    }
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty()) {
      problems.emplace_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > kPrefixMaxLength)
        problems.emplace_back("prefix part must be no more than 253 characters");
      if (!is_dns1123_subdomain(prefix)) {
        problems.emplace_back(
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'example.com')");
      }
    }
  }
  if (name.empty()) {
    problems.emplace_back("name part must be non-empty");
  } else {
    if (name.size() > kNameMaxLength) problems.emplace_back("name part must be no more than 63 characters");
    if (!is_qualified_name_part(name)) problems.push_back("name part " + std::string(kNameRule));
  }
  return join_problems(problems);
}

std::optional<std::string> check_label_value(std::string_view value) {
  std::vector<std::string> problems;
  if (value.size() > kNameMaxLength) problems.emplace_back("must be no more than 63 characters");
  if (!value.empty() && !is_qualified_name_part(value)) {
    problems.emplace_back(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
        "must "
        "start and end with an alphanumeric character");
  }
  return join_problems(problems);
}

Result<LabelSelector> LabelSelector::parse(std::string_view s, Options options) {
  Parser parser(s, options);
  auto reqs = parser.parse();
  if (!reqs) return std::unexpected(reqs.error());
  LabelSelector sel;
  sel.options_ = options;
  sel.requirements_ = std::move(*reqs);
  sort_by_key(sel.requirements_);
  return sel;
}

std::expected<LabelSelector, Errors> LabelSelector::from_json(const nlohmann::json& sel,
                                                              const std::string& path, Options options) {
  LabelSelector out;
  out.options_ = options;
  Errors errors;
  if (sel.is_null()) return out;
  if (!sel.is_object()) {
    errors.add(path, "must be an object");
    return std::unexpected(errors);
  }

  const std::string labels_path = join_path(path, "matchLabels");
  if (auto it = sel.find("matchLabels"); it != sel.end() && !it->is_null()) {
    if (!it->is_object()) {
      errors.add(labels_path, "must be an object");
    } else {
      for (const auto& [key, value] : it->items()) {
        bool ok = true;
        if (auto problem = check_label_key(key)) {
          errors.add(labels_path, "invalid label key " + quote(key) + ": " + *problem);
          ok = false;
        }
        if (!value.is_string()) {
          errors.add(labels_path, "value for key " + quote(key) + " must be a string");
          continue;
        }
        const auto& v = value.get_ref<const std::string&>();
        if (auto problem = check_label_value(v)) {
          errors.add(labels_path,
                     "invalid label value " + quote(v) + " for key " + quote(key) + ": " + *problem);
          ok = false;
        }
        if (ok) out.requirements_.push_back({key, LabelOperator::Equals, {v}});
      }
    }
  }

  const std::string exprs_path = join_path(path, "matchExpressions");
  if (auto it = sel.find("matchExpressions"); it != sel.end() && !it->is_null()) {
    if (!it->is_array()) {
      errors.add(exprs_path, "must be a list");
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        const auto& expr = (*it)[i];
        const std::string expr_path = index_path(exprs_path, i);
        if (!expr.is_object()) {
          errors.add(expr_path, "must be an object");
          continue;
        }
        bool ok = true;
        LabelRequirement r;

        const std::string key_path = join_path(expr_path, "key");
        auto key = expr.find("key");
        if (key == expr.end() || key->is_null() ||
            (key->is_string() && key->get_ref<const std::string&>().empty())) {
          errors.add(key_path, "required");
          ok = false;
        } else if (!key->is_string()) {
          errors.add(key_path, "must be a string");
          ok = false;
        } else {
          r.key = key->get<std::string>();
          if (auto problem = check_label_key(r.key)) {
            errors.add(key_path, "invalid label key " + quote(r.key) + ": " + *problem);
            ok = false;
          }
        }

        const std::string op_path = join_path(expr_path, "operator");
        auto op = expr.find("operator");
        bool op_known = false;
        if (op == expr.end() || op->is_null() ||
            (op->is_string() && op->get_ref<const std::string&>().empty())) {
          errors.add(op_path, "required");
          ok = false;
        } else if (!op->is_string()) {
          errors.add(op_path, "must be a string");
          ok = false;
        } else {
          const auto& name = op->get_ref<const std::string&>();
          op_known = true;
          if (name == "In") {
            r.op = LabelOperator::In;
          } else if (name == "NotIn") {
            r.op = LabelOperator::NotIn;
          } else if (name == "Exists") {
            r.op = LabelOperator::Exists;
          } else if (name == "DoesNotExist") {
            r.op = LabelOperator::DoesNotExist;
          } else {
            errors.add(op_path, "unsupported value " + quote(name) +
                                    ": supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\"");
            op_known = false;
            ok = false;
          }
        }

        const std::string values_path = join_path(expr_path, "values");
        auto values = expr.find("values");
        bool values_ok = true;
        if (values != expr.end() && !values->is_null()) {
          if (!values->is_array()) {
            errors.add(values_path, "must be a list of strings");
            values_ok = false;
          } else {
            for (std::size_t j = 0; j < values->size(); ++j) {
              const auto& v = (*values)[j];
              if (!v.is_string()) {
                errors.add(index_path(values_path, j), "must be a string");
                values_ok = false;
                continue;
              }
              r.values.push_back(v.get<std::string>());
              if (op_known) {
                if (auto problem = check_value(r.values.back(), r.op, options)) {
                  errors.add(index_path(values_path, j),
                             "invalid label value " + quote(r.values.back()) + ": " + *problem);
                  values_ok = false;
                }
              }
            }
          }
        }
        if (!values_ok) ok = false;
        if (op_known && values_ok) {
          bool has_values = values != expr.end() && values->is_array() && !values->empty();
          if ((r.op == LabelOperator::In || r.op == LabelOperator::NotIn) && !has_values) {
            errors.add(values_path, "required for operator " + op->get<std::string>());
            ok = false;
          } else if ((r.op == LabelOperator::Exists || r.op == LabelOperator::DoesNotExist) && has_values) {
            errors.add(values_path, "must be empty for operator " + op->get<std::string>());
            ok = false;
          }
        }
        if (ok) out.requirements_.push_back(std::move(r));
      }
    }
  }

  if (!errors.empty()) return std::unexpected(errors);
  sort_by_key(out.requirements_);
  return out;
}

bool LabelSelector::requirement_matches(const LabelRequirement& r,
                                        std::optional<std::string_view> value) const {
  auto listed = [&](std::string_view v) {
    return std::any_of(r.values.begin(), r.values.end(), [&](const std::string& candidate) {
      return options_.wildcard_values ? wildcard_match(candidate, v) : candidate == v;
    });
  };
  auto listed_exactly = [&](std::string_view v) {
    return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
  };
  switch (r.op) {
    case LabelOperator::In:
      return value.has_value() && listed(*value);
    case LabelOperator::NotIn:
      return !value.has_value() || !listed(*value);
    case LabelOperator::Equals:
    case LabelOperator::DoubleEquals:
      return value.has_value() && listed_exactly(*value);
    case LabelOperator::NotEquals:
      return !value.has_value() || !listed_exactly(*value);
    case LabelOperator::Exists:
      return value.has_value();
    case LabelOperator::DoesNotExist:
      return !value.has_value();
    case LabelOperator::GreaterThan:
    case LabelOperator::LessThan: {
      std::int64_t have = 0;
      std::int64_t want = 0;
      if (!value.has_value() || r.values.size() != 1 || !parse_int64(*value, have) ||
          !parse_int64(r.values[0], want)) {
        return false;
      }
      return r.op == LabelOperator::GreaterThan ? have > want : have < want;
    }
  }
  return false;
}

bool LabelSelector::matches(const std::map<std::string, std::string>& labels) const {
  for (const auto& r : requirements_) {
    auto it = labels.find(r.key);
    std::optional<std::string_view> value;
    if (it != labels.end()) value = it->second;
    if (!requirement_matches(r, value)) return false;
  }
  return true;
}

bool LabelSelector::matches_json(const nlohmann::json& labels) const {
  const bool is_object = labels.is_object();
  for (const auto& r : requirements_) {
    std::optional<std::string_view> value;
    if (is_object) {
      auto it = labels.find(r.key);
      if (it != labels.end() && it->is_string()) value = it->get_ref<const std::string&>();
    }
    if (!requirement_matches(r, value)) return false;
  }
  return true;
}

bool LabelSelector::matches_lookup(const Lookup& lookup) const {
  for (const auto& r : requirements_) {
    if (!requirement_matches(r, lookup ? lookup(r.key) : std::nullopt)) return false;
  }
  return true;
}

std::string LabelSelector::str() const {
  std::string out;
  for (const auto& r : requirements_) {
    if (!out.empty()) out += ',';
    if (r.op == LabelOperator::DoesNotExist) out += '!';
    out += r.key;
    if (r.op == LabelOperator::Exists || r.op == LabelOperator::DoesNotExist) continue;
    out += operator_text(r.op);
    std::vector<std::string> values = r.values;
    std::sort(values.begin(), values.end());
    bool set = r.op == LabelOperator::In || r.op == LabelOperator::NotIn;
    if (set) out += '(';
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out += ',';
      out += values[i];
    }
    if (set) out += ')';
  }
  return out;
}

}  // namespace kubex::common
