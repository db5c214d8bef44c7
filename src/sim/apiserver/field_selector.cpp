#include "sim/apiserver/field_selector.h"

#include <algorithm>

namespace kubex::sim {
namespace {

// Length of the UTF-8 sequence starting with byte `c` (1 for invalid lead bytes).
std::size_t utf8_length(unsigned char c) {
  if (c >= 0xF0 && c <= 0xF7) return 4;
  if (c >= 0xE0) return c <= 0xEF ? 3 : 1;
  if (c >= 0xC0) return 2;
  return 1;
}

// Splits at commas that are not escaped by a backslash.
std::vector<std::string_view> split_terms(std::string_view s) {
  std::vector<std::string_view> terms;
  if (s.empty()) return terms;
  std::size_t start = 0;
  bool escaped = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (escaped) {
      escaped = false;
    } else if (s[i] == '\\') {
      escaped = true;
    } else if (s[i] == ',') {
      terms.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.push_back(s.substr(start));
  return terms;
}

common::Result<std::string> unescape_value(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      if (i + 1 >= s.size()) return common::fail("invalid field selector: invalid escape sequence: \\");
      char next = s[i + 1];
      if (next != '\\' && next != ',' && next != '=') {
        std::size_t len = std::min(utf8_length(static_cast<unsigned char>(next)), s.size() - (i + 1));
        return common::fail("invalid field selector: invalid escape sequence: \\" +
                    std::string(s.substr(i + 1, len)));
      }
      out += next;
      ++i;
    } else if (c == ',' || c == '=') {
      return common::fail(std::string("invalid field selector: unescaped character in value: '") + c + "'");
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string escape_field_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == ',' || c == '=') out += '\\';
    out += c;
  }
  return out;
}

common::Result<FieldSelector> FieldSelector::parse(std::string_view s) {
  std::vector<std::string_view> terms = split_terms(s);
  std::sort(terms.begin(), terms.end());
  FieldSelector out;
  for (std::string_view term : terms) {
    if (term.empty()) continue;
    // The first position (from the left) where "!=", "==" or "=" starts.
    std::size_t at = std::string_view::npos;
    std::size_t op_len = 0;
    FieldOperator op = FieldOperator::Equals;
    for (std::size_t i = 0; i < term.size() && at == std::string_view::npos; ++i) {
      std::string_view rest = term.substr(i);
      if (rest.starts_with("!=")) {
        at = i;
        op_len = 2;
        op = FieldOperator::NotEquals;
      } else if (rest.starts_with("==")) {
        at = i;
        op_len = 2;
      } else if (rest.starts_with("=")) {
        at = i;
        op_len = 1;
      }
    }
    if (at == std::string_view::npos) {
      return common::fail("invalid selector: '" + std::string(s) + "'; can't understand '" + std::string(term) + "'");
    }
    auto value = unescape_value(term.substr(at + op_len));
    if (!value) return std::unexpected(value.error());
    out.requirements_.push_back({std::string(term.substr(0, at)), op, std::move(*value)});
  }
  return out;
}

std::vector<std::string> FieldSelector::fields() const {
  std::vector<std::string> out;
  for (const auto& r : requirements_) out.push_back(r.field);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool FieldSelector::matches(const Getter& get) const {
  for (const auto& r : requirements_) {
    std::string have = get ? get(r.field).value_or(std::string()) : std::string();
    bool equal = have == r.value;
    if (equal != (r.op == FieldOperator::Equals)) return false;
  }
  return true;
}

std::optional<std::string> FieldSelector::requires_exact_match(std::string_view field) const {
  for (const auto& r : requirements_) {
    if (r.field == field && r.op == FieldOperator::Equals) return r.value;
  }
  return std::nullopt;
}

std::string FieldSelector::str() const {
  std::string out;
  for (const auto& r : requirements_) {
    if (!out.empty()) out += ',';
    out += r.field;
    out += r.op == FieldOperator::Equals ? "=" : "!=";
    out += escape_field_value(r.value);
  }
  return out;
}

}  // namespace kubex::sim
