// Kubernetes field selectors (`?fieldSelector=`, k8s.io/apimachinery/pkg/fields.ParseSelector).
//
//   metadata.name=x,metadata.namespace==y,spec.nodeName!=,status.phase=Running
//
// Terms are comma-joined; empty terms are skipped and "" selects everything. Each term is
// <field><op><value> with op `=`, `==` or `!=` (the first operator found from the left wins). The field
// name is taken verbatim (no trimming), so callers can reject unknown names with
// `field label not supported: <name>`. In values, `\,`, `\=` and `\\` stand for `,`, `=` and `\`; any other
// backslash sequence, or an unescaped `,`/`=` inside a value, is an error. Terms are kept sorted, so str()
// gives the canonical form Kubernetes prints (values re-escaped).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kubex::sim {

enum class FieldOperator { Equals, NotEquals };  // `==` parses as Equals

struct FieldRequirement {
  std::string field;
  FieldOperator op = FieldOperator::Equals;
  std::string value;  // unescaped

  friend bool operator==(const FieldRequirement&, const FieldRequirement&) = default;
};

class FieldSelector {
 public:
  // Returns the field's value, or nullopt when the object has no such field (compared as "").
  using Getter = std::function<std::optional<std::string>(std::string_view field)>;

  // Matches everything.
  FieldSelector() = default;

  // Never throws; errors quote the offending term or escape sequence.
  static common::Result<FieldSelector> parse(std::string_view s);

  // The distinct field names used, sorted, e.g. {"metadata.name", "spec.nodeName"}.
  std::vector<std::string> fields() const;
  // All terms hold. A field the getter returns nullopt for compares as the empty string.
  bool matches(const Getter& get) const;
  // The value an `=`/`==` term demands for `field` (useful for index lookups), if any.
  std::optional<std::string> requires_exact_match(std::string_view field) const;

  bool empty() const { return requirements_.empty(); }
  std::string str() const;
  const std::vector<FieldRequirement>& requirements() const { return requirements_; }

 private:
  std::vector<FieldRequirement> requirements_;
};

// Escapes `\`, `,` and `=` in a field selector value.
std::string escape_field_value(std::string_view value);

}  // namespace kubex::sim
