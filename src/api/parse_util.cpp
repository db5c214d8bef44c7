#include "api/parse_util.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "api/parse.h"
#include "common/duration.h"
#include "common/time_format.h"

namespace kubex::api {

namespace detail {

using nlohmann::json;

const json* child(const json& parent, std::string_view key) {
  if (!parent.is_object()) return nullptr;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return nullptr;
  return &*it;
}

const json& child_object(const json& parent, std::string_view key) {
  static const json kEmpty = json::object();
  const json* v = child(parent, key);
  return v && v->is_object() ? *v : kEmpty;
}

bool read_bool(const json& parent, std::string_view key, bool fallback) {
  const json* v = child(parent, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

std::int64_t read_int64(const json& parent, std::string_view key, std::int64_t fallback) {
  const json* v = child(parent, key);
  if (!v || !v->is_number_integer()) return fallback;
  if (v->is_number_unsigned()) {
    auto u = v->get<std::uint64_t>();
    return u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? fallback
               : static_cast<std::int64_t>(u);
  }
  return v->get<std::int64_t>();
}

std::int32_t read_int32(const json& parent, std::string_view key, std::int32_t fallback) {
  std::int64_t n = read_int64(parent, key, fallback);
  if (n < std::numeric_limits<std::int32_t>::min() || n > std::numeric_limits<std::int32_t>::max())
    return fallback;
  return static_cast<std::int32_t>(n);
}

std::string read_string(const json& parent, std::string_view key, const std::string& fallback) {
  const json* v = child(parent, key);
  return v && v->is_string() ? v->get<std::string>() : fallback;
}

Duration read_duration(const json& parent, std::string_view key, Duration fallback) {
  const json* v = child(parent, key);
  if (!v || !v->is_string()) return fallback;
  auto d = common::parse_go_duration(v->get_ref<const std::string&>());
  return d ? *d : fallback;
}

std::optional<Quantity> read_quantity(const json& parent, std::string_view key) {
  const json* v = child(parent, key);
  if (!v || (!v->is_string() && !v->is_number_integer())) return std::nullopt;
  auto q = v->is_string() ? Quantity::parse(v->get_ref<const std::string&>()) : Quantity::from_json(*v);
  if (!q) return std::nullopt;
  return *q;
}

std::vector<std::string> read_strings(const json& parent, std::string_view key) {
  std::vector<std::string> out;
  const json* v = child(parent, key);
  if (!v || !v->is_array()) return out;
  for (const auto& e : *v) {
    if (e.is_string()) out.push_back(e.get<std::string>());
  }
  return out;
}

std::map<std::string, std::string> read_string_map(const json& parent, std::string_view key) {
  std::map<std::string, std::string> out;
  const json* v = child(parent, key);
  if (!v || !v->is_object()) return out;
  for (const auto& [k, e] : v->items()) {
    if (e.is_string()) out[k] = e.get<std::string>();
  }
  return out;
}

LabelSelector read_selector(const json& parent, std::string_view key) {
  LabelSelector sel;
  const json* v = child(parent, key);
  if (!v || !v->is_object()) return sel;
  sel.present = true;
  sel.match_labels = read_string_map(*v, "matchLabels");
  if (const json* exprs = child(*v, "matchExpressions"); exprs && exprs->is_array()) {
    for (const auto& e : *exprs) {
      if (!e.is_object()) continue;
      SelectorRequirement r;
      r.key = read_string(e, "key");
      r.op = read_string(e, "operator");
      r.values = read_strings(e, "values");
      sel.match_expressions.push_back(std::move(r));
    }
  }
  return sel;
}

std::optional<Kind> kind_of(const json& obj) {
  const json* k = child(obj, "kind");
  if (!k || !k->is_string()) return std::nullopt;
  return kind_from_name(k->get_ref<const std::string&>());
}

}  // namespace detail

ObjectMeta parse_meta(const nlohmann::json& obj) {
  using detail::read_string;
  ObjectMeta m;
  const auto& meta = detail::child_object(obj, "metadata");
  m.name = read_string(meta, "name");
  m.ns = read_string(meta, "namespace");
  m.uid = read_string(meta, "uid");
  m.resource_version = read_string(meta, "resourceVersion");
  m.generation = detail::read_int64(meta, "generation", 0);
  if (auto t = common::parse_rfc3339(read_string(meta, "creationTimestamp")); t) m.created = *t;
  m.deleting = detail::child(meta, "deletionTimestamp") != nullptr;
  m.finalizers = detail::read_strings(meta, "finalizers");
  m.labels = detail::read_string_map(meta, "labels");
  return m;
}

std::vector<Condition> parse_conditions(const nlohmann::json& obj) {
  std::vector<Condition> out;
  const auto* list = detail::child(detail::child_object(obj, "status"), "conditions");
  if (!list || !list->is_array()) return out;
  for (const auto& e : *list) {
    if (!e.is_object()) continue;
    Condition c;
    c.type = detail::read_string(e, "type");
    if (c.type.empty()) continue;
    c.status = detail::read_string(e, "status");
    c.reason = detail::read_string(e, "reason");
    c.message = detail::read_string(e, "message");
    c.observed_generation = detail::read_int64(e, "observedGeneration", 0);
    c.last_transition_time = detail::read_string(e, "lastTransitionTime");
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace kubex::api
