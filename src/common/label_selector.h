// Kubernetes label selectors: the `?labelSelector=` string syntax and `metav1.LabelSelector` objects.
//
// String syntax (k8s.io/apimachinery/pkg/labels.Parse): comma-joined requirements, whitespace tolerant:
//   key=value   key==value   key!=value   key in (a,b)   key notin (a)   key   !key   key>5   key<5
// `in (...)`/`notin (...)` values form a set (duplicates dropped, an empty entry means ""). Keys and
// values follow the label syntax (see check_label_key / check_label_value). Requirements are kept sorted
// by key, so str() is the same canonical form Kubernetes prints: "a in (x,y),b!=c,!d".
//
// Object form (`{"matchLabels":{…},"matchExpressions":[{"key","operator","values"}]}`): operators In,
// NotIn, Exists, DoesNotExist. A JSON `null` selector, an empty object and a default-constructed
// LabelSelector all match everything. (Note: Kubernetes' own LabelSelectorAsSelector turns a nil
// pointer into "match nothing"; callers that need that distinction check for null themselves.)
//
// Matching: In/=/== need the key present with a listed value; NotIn/!= also match when the key is absent;
// Exists/DoesNotExist test presence; >/< compare the label value as an integer (absent or non-integer
// values never match).
//
// Wildcard option (SEL-3, CON-1): with Options{.wildcard_values = true}, In/NotIn values containing `*`
// are shell-style wildcards (`*` matches any run of characters, including none). Such values may use
// `*` where label values otherwise allow only [A-Za-z0-9._-]. Other operators stay literal.
#pragma once

#include <expected>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kubex::common {

enum class LabelOperator {
  In,
  NotIn,
  Equals,
  DoubleEquals,
  NotEquals,
  Exists,
  DoesNotExist,
  GreaterThan,
  LessThan
};

struct LabelRequirement {
  std::string key;
  LabelOperator op = LabelOperator::Exists;
  std::vector<std::string> values;  // one value for =, ==, !=, >, <; none for Exists/DoesNotExist

  friend bool operator==(const LabelRequirement&, const LabelRequirement&) = default;
};

struct LabelSelectorOptions {
  // In/NotIn values containing `*` are wildcards (SEL-3 rules).
  bool wildcard_values = false;
};

class LabelSelector {
 public:
  using Options = LabelSelectorOptions;
  // Returns the label's value, or nullopt when the object has no such label.
  using Lookup = std::function<std::optional<std::string_view>(std::string_view key)>;

  // Matches everything.
  LabelSelector() = default;

  // The `?labelSelector=` syntax. "" matches everything. Errors name the offending token, e.g.
  // `unable to parse requirement: found ')', expected: '('`.
  static Result<LabelSelector> parse(std::string_view s, Options options = {});

  // A metav1.LabelSelector at JSON path `path` (e.g. "spec.nodeSelector"). Returns every problem, with
  // field paths (VAL-4): `spec.nodeSelector.matchExpressions[0].values: required for operator In`,
  // `…values: must be empty for operator Exists`,
  // `…operator: unsupported value "Foo": supported values: "In", "NotIn", "Exists", "DoesNotExist"`,
  // `…key: required`, `…key: invalid label key "a b": …`, `…values[1]: invalid label value …`,
  // `spec.nodeSelector.matchLabels: invalid label key …`. `null` means "match everything".
  static std::expected<LabelSelector, Errors> from_json(const nlohmann::json& sel, const std::string& path,
                                                        Options options = {});

  bool matches(const std::map<std::string, std::string>& labels) const;
  // `labels` is a JSON object of string values (e.g. metadata.labels) or null/absent (no labels).
  // Non-string values count as absent labels.
  bool matches_json(const nlohmann::json& labels_object_or_null) const;
  bool matches_lookup(const Lookup& lookup) const;

  // True when the selector has no requirements (matches everything).
  bool empty() const { return requirements_.empty(); }
  // Canonical string form, parseable by parse(): requirements sorted by key, set values sorted.
  std::string str() const;

  const std::vector<LabelRequirement>& requirements() const { return requirements_; }
  const Options& options() const { return options_; }

 private:
  bool requirement_matches(const LabelRequirement& r, std::optional<std::string_view> value) const;

  std::vector<LabelRequirement> requirements_;
  Options options_;
};

// Label key syntax: an optional DNS-subdomain prefix (lowercase, <= 253 chars) and '/', then a name of
// <= 63 chars matching [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?. Returns the problem, or nullopt when valid.
std::optional<std::string> check_label_key(std::string_view key);
// Label value syntax: empty, or <= 63 chars matching [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?.
std::optional<std::string> check_label_value(std::string_view value);

}  // namespace kubex::common
