// Internal to src/api: the building blocks of the validator (validate*.cpp). Each helper reads one field of a
// JSON object, reports a type or value problem at its exact field path (SPEC §14 wording) and returns the
// typed value when it is usable. Absent and null fields are the same (the API server drops non-nullable
// nulls).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/validate.h"
#include "common/clock.h"
#include "common/quantity.h"

namespace kubex::api::detail {

// How a duration field is bounded (SPEC §1 tables, VAL-4 "durations").
enum class DurationRule {
  kAny,            // only the syntax
  kNonNegative,    // >= 0            "must be at least 0s"
  kAtLeast1s,      // >= 1s           "must be at least 1s"
  kAtLeast1m,      // >= 1m           "must be at least 1m"
  kZeroOr1m,       // 0s or >= 1m     "must be zero or at least 1m"
  kPositive,       // > 0             "must be > 0"
  kPositiveMax5s,  // > 0, <= 5s    "must be > 0" / "must be at most 5s"
};

class Checker {
 public:
  explicit Checker(ValidationReport& report) : report_(report) {}

  void error(const std::string& path, std::string message) { report_.errors.add(path, std::move(message)); }
  // A VAL-3 error: also marks the report (reason InvalidContract).
  void contract_error(const std::string& path, std::string message) {
    report_.contract = true;
    error(path, std::move(message));
  }
  void warn(std::string text) { report_.warnings.push_back(std::move(text)); }
  bool has_error_at(const std::string& path) const;
  std::size_t error_count() const { return report_.errors.size(); }

  // The child `key` of `parent` (an object), or nullptr when absent or null.
  static const nlohmann::json* find(const nlohmann::json& parent, std::string_view key);

  // Typed reads of parent[key] at `path`. A present value of the wrong type is an error and reads as absent.
  const nlohmann::json* object(const nlohmann::json& parent, std::string_view key, const std::string& path);
  const nlohmann::json* list(const nlohmann::json& parent, std::string_view key, const std::string& path);
  std::optional<bool> boolean(const nlohmann::json& parent, std::string_view key, const std::string& path);
  std::optional<std::string> string(const nlohmann::json& parent, std::string_view key,
                                    const std::string& path);
  // Integers: JSON integers only (never floats), within [min, max] and the int32 range when `int32`.
  // Messages: "must be >= 1", "must be between 1 and 100", "must be an integer".
  std::optional<std::int64_t> integer(const nlohmann::json& parent, std::string_view key,
                                      const std::string& path, std::optional<std::int64_t> min = std::nullopt,
                                      std::optional<std::int64_t> max = std::nullopt, bool int32 = true);
  std::optional<common::Duration> duration(const nlohmann::json& parent, std::string_view key,
                                           const std::string& path, DurationRule rule);
  // int-or-string quantity (GPU-3): a JSON integer or a quantity string; floats are refused like the CRD
  // schema refuses them, with a hint to quote them: `must be a quantity string, e.g. "0.5" (quote the number)`.
  // Anything else: "must be a valid quantity".
  std::optional<common::Quantity> quantity(const nlohmann::json& parent, std::string_view key,
                                           const std::string& path);
  // A string from a fixed set: `unsupported value "x": supported values: "none", "kai"`.
  std::optional<std::string> enumeration(const nlohmann::json& parent, std::string_view key,
                                         const std::string& path, std::initializer_list<const char*> values);
  // A required non-empty string: "required" when absent or empty.
  std::optional<std::string> required_string(const nlohmann::json& parent, std::string_view key,
                                             const std::string& path);

 private:
  ValidationReport& report_;
};

// `unsupported value "x": supported values: "a", "b"`
std::string unsupported(std::string_view value, const std::vector<std::string>& supported);
// JSON-style quoting of a user string for messages.
std::string quote(std::string_view s);

// Pattern checks without std::regex (linear time, no recursion: safe on hostile input).
bool is_rfc1123_label(std::string_view s);            // ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$, <= 63
bool is_prometheus_metric_name(std::string_view s);   // ^[A-Za-z_:][A-Za-z0-9_:]*$
bool is_prometheus_label_name(std::string_view s);    // ^[A-Za-z_][A-Za-z0-9_]*$
bool is_hh_mm(std::string_view s, bool allow_24_00);  // 00:00..23:59 (and 24:00)
bool is_http_url(std::string_view s);                 // ^https?://[^\s/?#]+([/?#]\S*)?$
bool is_percent(std::string_view s);                  // ^[0-9]+%$

// Objects nested deeper than this are refused before anything copies or walks them recursively (the deepest
// schema path is about 10 levels; free-form probe pod fields add a few more).
inline constexpr std::size_t kMaxObjectDepth = 100;
// True when `j` nests objects/arrays more than `max_depth` levels deep. Iterative: safe on any input.
bool exceeds_depth(const nlohmann::json& j, std::size_t max_depth = kMaxObjectDepth);

// Field checks shared by several kinds.
// spec.experimental for the kinds that always need the contract (GPU reactive, consolidation; VAL-3).
void check_required_contract(Checker& c, const nlohmann::json& spec);
// A metav1.LabelSelector (absent is fine); `wildcards` allows `*` in In/NotIn values (CON-1).
void check_label_selector(Checker& c, const nlohmann::json& parent, std::string_view key,
                          const std::string& path, bool wildcards);
// metadata.name (required; must equal `singleton` when given).
void check_metadata(Checker& c, const nlohmann::json& object, const char* singleton);

// Per-kind spec validators (validate_strategy.cpp, validate_policy.cpp, validate_cluster.cpp). `spec` is the
// defaulted spec object.
void validate_strategy_spec(Checker& c, const nlohmann::json& spec, const ValidationContext& ctx);
void validate_policy_spec(Checker& c, Kind kind, const nlohmann::json& spec, const ValidationContext& ctx);
// VAL-2: the warning for a KAI-2 field while the cluster's mode is known and not NvFractions.
void warn_unless_nv_fractions(Checker& c, const ValidationContext& ctx, const std::string& path);
void validate_consolidation_spec(Checker& c, const nlohmann::json& spec);
void validate_global_config_spec(Checker& c, const nlohmann::json& spec);
void validate_policy_evaluation_spec(Checker& c, const nlohmann::json& spec);

}  // namespace kubex::api::detail
