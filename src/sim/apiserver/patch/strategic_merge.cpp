// Strategic merge patch (k8s.io/apimachinery/pkg/util/strategicpatch, apply side): directives, merged
// lists and their order, with strategicpatch's messages.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/apiserver/go_format.h"
#include "sim/apiserver/patch/strategic_rules.h"
#include "sim/apiserver/patch/internal.h"

namespace kubex::sim::patch {

using nlohmann::json;

namespace {

constexpr std::string_view kDirectiveMarker = "$patch";
constexpr std::string_view kRetainKeys = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveList = "$deleteFromPrimitiveList";
constexpr std::string_view kSetElementOrder = "$setElementOrder";

bool is_directive_key(std::string_view key) {
  return key == kDirectiveMarker || key == kRetainKeys || key.starts_with("$setElementOrder/") ||
         key.starts_with("$deleteFromPrimitiveList/");
}

// Cleans a value taken from the patch as is: drops objects carrying `$patch`, other directive keys
// and null members. Returns false when `v` itself must be dropped.
bool sanitize(json& v) {
  if (v.is_object()) {
    if (v.contains(kDirectiveMarker)) return false;
    for (auto it = v.begin(); it != v.end();) {
      if (it->is_null() || is_directive_key(it.key()) || !sanitize(*it)) {
        it = v.erase(it);
      } else {
        ++it;
      }
    }
  } else if (v.is_array()) {
    json kept = json::array();
    for (auto& e : v) {
      if (sanitize(e)) kept.push_back(std::move(e));
    }
    v = std::move(kept);
  }
  return true;
}

std::unexpected<PatchError> no_merge_key(const json& item, std::string_view merge_key) {
  return invalid("map: " + go_print(item) +
                 " does not contain declared merge key: " + std::string(merge_key));
}

std::unexpected<PatchError> bad_arg_type(std::string_view expected, const json& actual) {
  return invalid("expected a " + std::string(expected) + ", but received a " + go_type(actual));
}

std::unexpected<PatchError> unknown_patch_type(const json& directive, const json& in_map) {
  return invalid("unknown patch type: " + go_print(directive) + " in map: " + go_print(in_map));
}

// "$prefix/field" -> "field".
std::optional<std::string> extract_key(std::string_view key, std::string_view prefix) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos || key.substr(0, slash) != prefix) return std::nullopt;
  return std::string(key.substr(slash + 1));
}

enum class ElemKind { kNone, kNull, kBool, kInt, kFloat, kString, kArray, kObject };

ElemKind elem_kind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return ElemKind::kNull;
    case json::value_t::boolean:
      return ElemKind::kBool;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return ElemKind::kInt;
    case json::value_t::number_float:
      return ElemKind::kFloat;
    case json::value_t::string:
      return ElemKind::kString;
    case json::value_t::array:
      return ElemKind::kArray;
    default:
      return ElemKind::kObject;
  }
}

// The common element type of two lists (kNone when both are empty).
std::expected<ElemKind, PatchError> slice_element_kind(const json& a, const json& b) {
  ElemKind kind = ElemKind::kNone;
  for (const json* list : {&a, &b}) {
    for (const auto& e : *list) {
      const ElemKind k = elem_kind(e);
      if (kind == ElemKind::kNone) {
        kind = k;
        if (kind == ElemKind::kArray) return invalid("lists of lists are not supported");
      } else if (k != kind) {
        return invalid("list element types are not identical: " + go_print(json::array({a, b})));
      }
    }
  }
  return kind;
}

// The value an item is identified by: its merge key for lists of objects, itself otherwise.
const json& identity(const json& item, std::string_view merge_key, bool is_map) {
  static const json kNull;
  if (!is_map || merge_key.empty()) return item;
  if (!item.is_object()) return kNull;
  auto it = item.find(merge_key);
  return it == item.end() ? kNull : *it;
}

long index_of(const json& list, const json& item, std::string_view merge_key, bool is_map) {
  const json& id = identity(item, merge_key, is_map);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (identity(list[i], merge_key, is_map) == id) return static_cast<long>(i);
  }
  return -1;
}

Status validate_merge_key(const json& list, std::string_view merge_key) {
  for (const auto& item : list) {
    if (!item.is_object()) return bad_arg_type("map[string]interface {}", item);
    if (!item.contains(merge_key)) return no_merge_key(item, merge_key);
  }
  return {};
}

bool is_delete_item(const json& item) {
  if (!item.is_object()) return false;
  auto it = item.find(kDirectiveMarker);
  return it != item.end() && *it == "delete";
}

// Stable-sorts `to_sort` by position in `order` (items missing from `order` go last); objects
// carrying `$patch: delete` are moved to the end.
std::expected<json, PatchError> normalize_slice_order(json to_sort, const json& order,
                                                      std::string_view merge_key, bool is_map) {
  json deletions = json::array();
  if (is_map && !merge_key.empty()) {
    if (auto s = validate_merge_key(to_sort, merge_key); !s) return std::unexpected(s.error());
    if (auto s = validate_merge_key(order, merge_key); !s) return std::unexpected(s.error());
    json kept = json::array();
    for (auto& item : to_sort) {
      (is_delete_item(item) ? deletions : kept).push_back(std::move(item));
    }
    to_sort = std::move(kept);
  }
  std::vector<std::pair<long, std::size_t>> keys;
  keys.reserve(to_sort.size());
  for (std::size_t i = 0; i < to_sort.size(); ++i) {
    const long idx = index_of(order, to_sort[i], merge_key, is_map);
    keys.emplace_back(idx < 0 ? static_cast<long>(order.size()) : idx, i);
  }
  std::stable_sort(keys.begin(), keys.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  json sorted = json::array();
  for (const auto& [key, i] : keys) sorted.push_back(std::move(to_sort[i]));
  for (auto& item : deletions) sorted.push_back(std::move(item));
  return sorted;
}

// Interleaves server-only items (`left`) into patch items (`right`), keeping both relative orders:
// a server-only item goes first only when both are in the live list and it came first there.
json merge_sorted_slice(json& left, json& right, const json& server_order, std::string_view merge_key,
                        bool is_map) {
  json out = json::array();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < left.size() || j < right.size()) {
    if (i >= left.size()) {
      out.push_back(std::move(right[j++]));
    } else if (j >= right.size()) {
      out.push_back(std::move(left[i++]));
    } else {
      const long li = index_of(server_order, left[i], merge_key, is_map);
      const long ri = index_of(server_order, right[j], merge_key, is_map);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push_back(std::move(left[i++]));
      } else {
        out.push_back(std::move(right[j++]));
      }
    }
  }
  return out;
}

std::expected<json, PatchError> normalize_element_order(json patch_items, json server_only,
                                                        const json& patch_order, const json& server_order,
                                                        std::string_view merge_key, bool is_map) {
  auto patch_sorted = normalize_slice_order(std::move(patch_items), patch_order, merge_key, is_map);
  if (!patch_sorted) return patch_sorted;
  auto server_sorted = normalize_slice_order(std::move(server_only), server_order, merge_key, is_map);
  if (!server_sorted) return server_sorted;
  return merge_sorted_slice(*server_sorted, *patch_sorted, server_order, merge_key, is_map);
}

// Splits `merged` into the items that `by` mentions and the others, both in their order in `merged`.
std::expected<std::pair<json, json>, PatchError> partition(json merged, const json& by,
                                                           std::string_view merge_key, bool is_map) {
  json present = json::array();
  json others = json::array();
  const bool by_key = is_map && !merge_key.empty();
  for (auto& item : merged) {
    bool found = false;
    if (by_key) {
      if (!item.is_object()) return bad_arg_type("map[string]interface {}", item);
      auto key = item.find(merge_key);
      if (key == item.end()) return no_merge_key(item, merge_key);
      for (std::size_t i = 0; i < by.size() && !found; ++i) {
        if (!by[i].is_object()) return invalid("value for key " + std::to_string(i) + " is not a map");
        auto other = by[i].find(merge_key);
        found = other != by[i].end() && *other == *key;
      }
    } else {
      found = std::find(by.begin(), by.end(), item) != by.end();
    }
    (found ? present : others).push_back(std::move(item));
  }
  return std::make_pair(std::move(present), std::move(others));
}

Status merge_map(json& original, json& patch, std::string_view type);

// Merges two lists of a field with merge strategy (or a `$deleteFromPrimitiveList` list).
Status merge_slice(json& original, json& patch, std::string_view field, std::string_view child,
                   std::string_view merge_key, bool is_delete_list) {
  if (original.empty() && patch.empty()) return {};
  auto kind = slice_element_kind(original, patch);
  if (!kind) return std::unexpected(kind.error());
  const bool is_map = *kind == ElemKind::kObject;

  json merged;
  json patch_list;
  if (!is_map) {
    if (is_delete_list) {
      json kept = json::array();
      for (auto& v : original) {
        if (std::find(patch.begin(), patch.end(), v) == patch.end()) kept.push_back(std::move(v));
      }
      original = std::move(kept);
      return {};
    }
    merged = json::array();
    for (const json* list : {&original, &patch}) {
      for (const auto& v : *list) {
        if (std::find(merged.begin(), merged.end(), v) == merged.end()) merged.push_back(v);
      }
    }
    patch_list = std::move(patch);
  } else {
    if (merge_key.empty()) return invalid("cannot merge lists without merge key for " + std::string(field));
    patch_list = json::array();
    bool replace = false;
    for (auto& item : patch) {
      auto directive = item.find(kDirectiveMarker);
      if (directive == item.end()) {
        patch_list.push_back(std::move(item));
      } else if (*directive == "delete") {
        auto key = item.find(merge_key);
        if (key == item.end()) return no_merge_key(item, merge_key);
        json kept = json::array();
        for (auto& existing : original) {
          auto existing_key = existing.find(merge_key);
          if (existing_key == existing.end() || *existing_key != *key) kept.push_back(std::move(existing));
        }
        original = std::move(kept);
      } else if (*directive == "replace") {
        replace = true;
      } else if (*directive == "merge") {
        return invalid("merging lists cannot yet be specified in the patch");
      } else {
        return unknown_patch_type(*directive, item);
      }
    }
    if (replace) {
      original = std::move(patch_list);
      sanitize(original);
      patch_list = json::array();
    }
    merged = original;
    for (const auto& item : patch_list) {
      auto key = item.find(merge_key);
      if (key == item.end()) return no_merge_key(item, merge_key);
      auto existing = std::find_if(merged.begin(), merged.end(), [&](const json& e) {
        auto k = e.find(merge_key);
        return k != e.end() && *k == *key;
      });
      json patch_item = item;
      if (existing != merged.end()) {
        if (auto s = merge_map(*existing, patch_item, child); !s) return s;
      } else if (sanitize(patch_item)) {
        merged.push_back(std::move(patch_item));
      }
    }
  }

  auto parts = partition(std::move(merged), patch_list, merge_key, is_map);
  if (!parts) return std::unexpected(parts.error());
  auto ordered = normalize_element_order(std::move(parts->first), std::move(parts->second), patch_list,
                                         original, merge_key, is_map);
  if (!ordered) return std::unexpected(ordered.error());
  original = std::move(*ordered);
  return {};
}

// Merges a list field according to its strategy: merge lists merge, other lists are replaced.
Status merge_list_field(json& original, json& patch, std::string_view field, const FieldRule* rule,
                        bool is_delete_list) {
  if ((rule != nullptr && rule->strategy == Strategy::kMerge) || is_delete_list) {
    return merge_slice(original, patch, field, rule != nullptr ? rule->child : "",
                       rule != nullptr ? rule->merge_key : "", is_delete_list);
  }
  sanitize(patch);
  original = std::move(patch);
  return {};
}

Status apply_retain_keys(json& original, json& patch) {
  auto it = patch.find(kRetainKeys);
  if (it == patch.end()) return {};
  json retain = std::move(*it);
  patch.erase(it);
  if (!retain.is_array()) return bad_request("invalid patch format of retainKeys");
  auto retained = [&](const std::string& key) {
    return std::find(retain.begin(), retain.end(), key) != retain.end();
  };
  for (auto p = patch.begin(); p != patch.end(); ++p) {
    if (p->is_null() || p.key().starts_with(kDeleteFromPrimitiveList) ||
        p.key().starts_with(kSetElementOrder)) {
      continue;
    }
    if (!retained(p.key())) return bad_request("invalid patch format of retainKeys");
  }
  for (auto o = original.begin(); o != original.end();) {
    if (retained(o.key())) {
      ++o;
    } else {
      o = original.erase(o);
    }
  }
  return {};
}

// The relative order of the patch list's items must agree with the `$setElementOrder` list.
Status validate_patch_with_set_order(const json& patch_list, const json& set_order,
                                     std::string_view merge_key) {
  if (patch_list.empty() || set_order.empty()) return {};
  json non_delete = json::array();
  for (const auto& item : patch_list) {
    if (!merge_key.empty()) {
      if (!item.is_object()) return bad_arg_type("map[string]interface {}", item);
      if (is_delete_item(item)) continue;
    }
    non_delete.push_back(item);
  }
  std::size_t p = 0;
  std::size_t s = 0;
  while (p < non_delete.size() && s < set_order.size()) {
    const json& item = non_delete[p];
    if (item.is_object() && item.contains(kDirectiveMarker)) {
      ++p;
      continue;
    }
    bool equal = false;
    if (merge_key.empty()) {
      equal = item == set_order[s];
    } else {
      const json& order_item = set_order[s];
      if (!order_item.is_object()) return bad_arg_type("map[string]interface {}", order_item);
      auto l = item.find(merge_key);
      if (l == item.end()) return no_merge_key(item, merge_key);
      auto r = order_item.find(merge_key);
      if (r == order_item.end()) return no_merge_key(order_item, merge_key);
      equal = *l == *r;
    }
    if (equal) ++p;
    ++s;
  }
  if (p < non_delete.size() && s >= set_order.size()) {
    return invalid("The order in patch list:\n" + go_print(patch_list) +
                   "\n doesn't match $setElementOrder list:\n" + go_print(set_order) + "\n");
  }
  return {};
}

// Handles every `$setElementOrder/<field>` of `patch`, together with the patch list for <field>; both
// are removed from `patch`. Order precedence: `$setElementOrder`, then the patch list, then the live list.
Status merge_set_element_order(json& original, json& patch, std::string_view type) {
  std::vector<std::string> directives;
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it.key().starts_with(kSetElementOrder)) directives.push_back(it.key());
  }
  for (const auto& directive : directives) {
    json set_order = std::move(patch[directive]);
    patch.erase(directive);
    if (!set_order.is_array()) return bad_arg_type("[]interface {}", set_order);
    auto field = extract_key(directive, kSetElementOrder);
    if (!field) return bad_request("invalid patch format of setElementOrder list");

    auto original_it = original.find(*field);
    auto patch_it = patch.find(*field);
    const bool found_original = original_it != original.end();
    const bool found_patch = patch_it != patch.end();
    if (found_original && !original_it->is_array()) return bad_arg_type("[]interface {}", *original_it);
    if (found_patch && !patch_it->is_array()) return bad_arg_type("[]interface {}", *patch_it);
    if (!found_original && !found_patch) continue;
    const json original_list = found_original ? *original_it : json::array();
    const json patch_list = found_patch ? *patch_it : json::array();

    const FieldRule* rule = find_rule(type, *field);
    const std::string_view merge_key = rule != nullptr ? rule->merge_key : "";
    if (auto s = validate_patch_with_set_order(patch_list, set_order, merge_key); !s) return s;

    json merged = original_list;
    if (!found_original) {
      merged = patch_list;
      sanitize(merged);
    } else if (found_patch) {
      json p = patch_list;
      if (auto s = merge_list_field(merged, p, *field, rule, false); !s) return s;
    }

    auto kind = slice_element_kind(original_list, patch_list);
    if (!kind) return std::unexpected(kind.error());
    const bool is_map = *kind == ElemKind::kObject;
    auto parts = partition(std::move(merged), set_order, merge_key, is_map);
    if (!parts) return std::unexpected(parts.error());
    auto ordered = normalize_element_order(std::move(parts->first), std::move(parts->second), set_order,
                                           original_list, merge_key, is_map);
    if (!ordered) return std::unexpected(ordered.error());
    original[*field] = std::move(*ordered);
    patch.erase(*field);
  }
  return {};
}

Status merge_field(json& original, const std::string& patch_key, json& value, std::string_view type) {
  std::string key = patch_key;
  const bool is_delete_list = patch_key.starts_with(kDeleteFromPrimitiveList);
  if (is_delete_list) {
    auto field = extract_key(patch_key, kDeleteFromPrimitiveList);
    if (!field) return bad_request("invalid patch format of primitive list");
    key = *field;
  }
  if (value.is_null()) {
    original.erase(key);
    return {};
  }
  auto existing = original.find(key);
  if (existing == original.end()) {
    if (!is_delete_list && sanitize(value)) original[key] = std::move(value);
    return {};
  }
  const FieldRule* rule = find_rule(type, key);
  if (existing->is_object() && value.is_object()) {
    if (rule != nullptr && rule->strategy == Strategy::kReplace) {
      if (!sanitize(value)) value = json::object();
      *existing = std::move(value);
      return {};
    }
    return merge_map(*existing, value, rule != nullptr ? rule->child : "");
  }
  if (existing->is_array() && value.is_array())
    return merge_list_field(*existing, value, key, rule, is_delete_list);
  if (is_delete_list) return {};
  if (sanitize(value)) {
    *existing = std::move(value);
  } else {
    original.erase(existing);
  }
  return {};
}

// Merges `patch` into `original` (both objects; a null original counts as empty). `patch` is consumed.
Status merge_map(json& original, json& patch, std::string_view type) {
  if (auto directive = patch.find(kDirectiveMarker); directive != patch.end()) {
    if (*directive == "replace") {
      patch.erase(directive);
      sanitize(patch);
      original = std::move(patch);
      return {};
    }
    if (*directive == "delete") {
      original = json::object();
      return {};
    }
    return unknown_patch_type(*directive, patch);
  }
  if (!original.is_object()) original = json::object();
  if (auto s = apply_retain_keys(original, patch); !s) return s;
  if (auto s = merge_set_element_order(original, patch, type); !s) return s;

  // Deletions from primitive lists run after the additions to the same list.
  std::vector<std::string> keys;
  std::vector<std::string> delete_lists;
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    (it.key().starts_with(kDeleteFromPrimitiveList) ? delete_lists : keys).push_back(it.key());
  }
  keys.insert(keys.end(), delete_lists.begin(), delete_lists.end());
  for (const auto& key : keys) {
    if (auto s = merge_field(original, key, patch[key], type); !s) return s;
  }
  return {};
}

}  // namespace

PatchResult apply_strategic_merge_patch(const json& original, std::string_view body,
                                        const std::string& kind) {
  auto patch = decode_body(body);
  if (!patch) return std::unexpected(patch.error());
  if (patch->is_null()) *patch = json::object();
  if (!patch->is_object()) {
    return bad_request("error decoding patch: json: cannot unmarshal " + json_word(*patch) +
                       " into Go value of type map[string]interface {}");
  }
  json doc = original;
  if (auto s = merge_map(doc, *patch, root_type(kind)); !s) return std::unexpected(s.error());
  return doc;
}

}  // namespace kubex::sim::patch
