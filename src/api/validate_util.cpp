#include "api/validate_util.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "common/duration.h"
#include "common/label_selector.h"

namespace kubex::api::detail {

using nlohmann::json;

namespace {

constexpr std::int64_t kInt32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

bool is_lower_alnum(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}
bool is_alpha(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}
bool is_digit(char ch) {
  return ch >= '0' && ch <= '9';
}
bool is_space(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

}  // namespace

std::string quote(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string unsupported(std::string_view value, const std::vector<std::string>& supported) {
  std::string out = "unsupported value " + quote(value) + ": supported values: ";
  for (std::size_t i = 0; i < supported.size(); ++i) {
    if (i) out += ", ";
    out += quote(supported[i]);
  }
  return out;
}

bool Checker::has_error_at(const std::string& path) const {
  for (const auto& e : report_.errors.items()) {
    if (e.path == path) return true;
  }
  return false;
}

const json* Checker::find(const json& parent, std::string_view key) {
  if (!parent.is_object()) return nullptr;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return nullptr;
  return &*it;
}

const json* Checker::object(const json& parent, std::string_view key, const std::string& path) {
  const json* v = find(parent, key);
  if (v && !v->is_object()) {
    error(path, "must be an object");
    return nullptr;
  }
  return v;
}

const json* Checker::list(const json& parent, std::string_view key, const std::string& path) {
  const json* v = find(parent, key);
  if (v && !v->is_array()) {
    error(path, "must be a list");
    return nullptr;
  }
  return v;
}

std::optional<bool> Checker::boolean(const json& parent, std::string_view key, const std::string& path) {
  const json* v = find(parent, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    error(path, "must be a boolean");
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<std::string> Checker::string(const json& parent, std::string_view key,
                                           const std::string& path) {
  const json* v = find(parent, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    error(path, "must be a string");
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::int64_t> Checker::integer(const json& parent, std::string_view key,
                                             const std::string& path, std::optional<std::int64_t> min,
                                             std::optional<std::int64_t> max, bool int32) {
  const json* v = find(parent, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    error(path, "must be an integer");
    return std::nullopt;
  }
  std::int64_t n = 0;
  bool overflow = false;
  if (v->is_number_unsigned()) {
    auto u = v->get<std::uint64_t>();
    overflow = u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    n = overflow ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(u);
  } else {
    n = v->get<std::int64_t>();
  }
  std::optional<std::int64_t> lo = min, hi = max;
  if (int32) {
    if (!lo) lo = kInt32Min;
    if (!hi) hi = kInt32Max;
  }
  const bool below = lo && n < *lo;
  const bool above = overflow || (hi && n > *hi);
  if (!below && !above) return n;
  if (min && max) {
    error(path, "must be between " + std::to_string(*min) + " and " + std::to_string(*max));
  } else if (below && min) {
    error(path, "must be >= " + std::to_string(*min));
  } else if (below) {
    error(path, "must be >= " + std::to_string(*lo));
  } else {
    error(path, "must be <= " + std::to_string(hi ? *hi : std::numeric_limits<std::int64_t>::max()));
  }
  return std::nullopt;
}

std::optional<common::Duration> Checker::duration(const json& parent, std::string_view key,
                                                  const std::string& path, DurationRule rule) {
  const json* v = find(parent, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    error(path, "must be a valid duration");
    return std::nullopt;
  }
  auto d = common::parse_go_duration(v->get_ref<const std::string&>());
  if (!d) {
    error(path, "must be a valid duration");
    return std::nullopt;
  }
  using std::chrono::minutes;
  using std::chrono::seconds;
  const common::Duration value = *d;
  const char* problem = nullptr;
  switch (rule) {
    case DurationRule::kAny:
      break;
    case DurationRule::kNonNegative:
      if (value < common::Duration::zero()) problem = "must be at least 0s";
      break;
    case DurationRule::kAtLeast1s:
      if (value < seconds(1)) problem = "must be at least 1s";
      break;
    case DurationRule::kAtLeast1m:
      if (value < minutes(1)) problem = "must be at least 1m";
      break;
    case DurationRule::kZeroOr1m:
      if (value != common::Duration::zero() && value < minutes(1)) problem = "must be zero or at least 1m";
      break;
    case DurationRule::kPositive:
      if (value <= common::Duration::zero()) problem = "must be > 0";
      break;
    case DurationRule::kPositiveMax5s:
      if (value <= common::Duration::zero()) {
        problem = "must be > 0";
      } else if (value > seconds(5)) {
        problem = "must be at most 5s";
      }
      break;
  }
  if (problem) {
    error(path, problem);
    return std::nullopt;
  }
  return value;
}

std::optional<common::Quantity> Checker::quantity(const json& parent, std::string_view key,
                                                  const std::string& path) {
  const json* v = find(parent, key);
  if (!v) return std::nullopt;
  if (v->is_number_float()) {
    // x-kubernetes-int-or-string refuses an unquoted decimal (GPU-3: decimals must be quoted in YAML); say how
    // to write it, with the user's own number when that reads as a quantity once quoted.
    std::string quoted = v->dump();
    if (!common::Quantity::parse(quoted)) quoted = "0.5";
    error(path, "must be a quantity string, e.g. \"" + quoted + "\" (quote the number)");
    return std::nullopt;
  }
  if (!v->is_string() && !v->is_number_integer()) {  // x-kubernetes-int-or-string: no other types
    error(path, "must be a valid quantity");
    return std::nullopt;
  }
  // Strings are parsed as written: the CRD's isQuantity() rule does not trim whitespace either.
  auto q = v->is_string() ? common::Quantity::parse(v->get_ref<const std::string&>())
                          : common::Quantity::from_json(*v);
  if (!q) {
    error(path, "must be a valid quantity");
    return std::nullopt;
  }
  return *q;
}

std::optional<std::string> Checker::enumeration(const json& parent, std::string_view key,
                                                const std::string& path,
                                                std::initializer_list<const char*> values) {
  auto s = string(parent, key, path);
  if (!s) return std::nullopt;
  std::vector<std::string> supported;
  for (const char* v : values) {
    if (*s == v) return s;
    supported.emplace_back(v);
  }
  error(path, unsupported(*s, supported));
  return std::nullopt;
}

std::optional<std::string> Checker::required_string(const json& parent, std::string_view key,
                                                    const std::string& path) {
  const json* v = find(parent, key);
  if (!v || (v->is_string() && v->get_ref<const std::string&>().empty())) {
    error(path, "required");
    return std::nullopt;
  }
  return string(parent, key, path);
}

bool is_rfc1123_label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!is_lower_alnum(s.front()) || !is_lower_alnum(s.back())) return false;
  for (char ch : s) {
    if (!is_lower_alnum(ch) && ch != '-') return false;
  }
  return true;
}

bool is_prometheus_metric_name(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const bool ok = is_alpha(ch) || ch == '_' || ch == ':' || (i > 0 && is_digit(ch));
    if (!ok) return false;
  }
  return true;
}

bool is_prometheus_label_name(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const bool ok = is_alpha(ch) || ch == '_' || (i > 0 && is_digit(ch));
    if (!ok) return false;
  }
  return true;
}

bool is_hh_mm(std::string_view s, bool allow_24_00) {
  if (allow_24_00 && s == "24:00") return true;
  if (s.size() != 5 || s[2] != ':') return false;
  for (std::size_t i : {0, 1, 3, 4}) {
    if (!is_digit(s[i])) return false;
  }
  const int hh = (s[0] - '0') * 10 + (s[1] - '0');
  const int mm = (s[3] - '0') * 10 + (s[4] - '0');
  return hh <= 23 && mm <= 59;
}

bool is_http_url(std::string_view s) {
  std::size_t rest = 0;
  if (s.starts_with("http://")) {
    rest = 7;
  } else if (s.starts_with("https://")) {
    rest = 8;
  } else {
    return false;
  }
  std::size_t host_end = rest;
  while (host_end < s.size() && !is_space(s[host_end]) && s[host_end] != '/' && s[host_end] != '?' &&
         s[host_end] != '#') {
    ++host_end;
  }
  if (host_end == rest) return false;
  for (std::size_t i = host_end; i < s.size(); ++i) {
    if (is_space(s[i])) return false;
  }
  return true;
}

bool is_percent(std::string_view s) {
  if (s.size() < 2 || s.back() != '%') return false;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (!is_digit(s[i])) return false;
  }
  return true;
}

bool exceeds_depth(const json& j, std::size_t max_depth) {
  std::vector<std::pair<const json*, std::size_t>> stack = {{&j, 1}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    if (depth > max_depth) return true;
    for (const auto& child : *node) {
      if (child.is_structured()) stack.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

void check_required_contract(Checker& c, const json& spec) {
  const json* exp = c.object(spec, "experimental", "spec.experimental");
  if (!exp) {
    if (!c.has_error_at("spec.experimental")) c.contract_error("spec.experimental", "required");
    return;
  }
  const std::string path = "spec.experimental.gpuKaiContract";
  const json* v = Checker::find(*exp, "gpuKaiContract");
  if (v && !v->is_string()) {
    c.contract_error(path, "must be a string");
    return;
  }
  const std::string value = v ? v->get<std::string>() : "";
  if (!v || value == "none") {
    c.contract_error(path, std::string("must be \"") + kGpuKaiContract + "\"");
  } else if (value != kGpuKaiContract) {
    c.contract_error(path, "unsupported value " + quote(value) +
                               ": the only accepted GPU/KAI contract is \"" + kGpuKaiContract + "\"");
  }
}

void check_label_selector(Checker& c, const json& parent, std::string_view key, const std::string& path,
                          bool wildcards) {
  const json* sel = Checker::find(parent, key);
  if (!sel) return;
  common::LabelSelector::Options options;
  options.wildcard_values = wildcards;
  auto parsed = common::LabelSelector::from_json(*sel, path, options);
  if (!parsed) {
    for (const auto& e : parsed.error().items()) c.error(e.path, e.message);
  }
}

void check_metadata(Checker& c, const json& object, const char* singleton) {
  const json* meta = c.object(object, "metadata", "metadata");
  if (!meta && Checker::find(object, "metadata")) return;  // not an object: already reported
  const json empty = json::object();
  auto name = c.required_string(meta ? *meta : empty, "name", "metadata.name");
  if (singleton && name && *name != singleton)
    c.error("metadata.name", std::string("must be \"") + singleton + "\"");
}

}  // namespace kubex::api::detail
