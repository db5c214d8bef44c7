// The x-kubernetes-validations hook: where the CEL rules run, and which old value each one sees.
#include "sim/apiserver/schema/passes.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/apiserver/schema/path.h"

namespace kubex::sim::schema {
namespace {

const json* correlated_item(const Node& s, const json* old, const json& item) {
  if (s.list_type != ListType::kMap || old == nullptr || !old->is_array() || !item.is_object())
    return nullptr;
  for (const auto& candidate : *old) {
    if (!candidate.is_object()) continue;
    bool same = true;
    for (const auto& k : s.list_map_keys) {
      const json* a = find_member(item, k);
      const json* b = find_member(candidate, k);
      same = same && ((a == nullptr && b == nullptr) || (a != nullptr && b != nullptr && *a == *b));
    }
    if (same) return &candidate;
  }
  return nullptr;
}

void walk_rules(const Node* s, const json& x, const json* old, const PathRef& p,
                const ValidationRulesHook& hook, std::vector<Cause>& out) {
  if (s == nullptr || !s->subtree_rules || x.is_null()) return;
  if (s->rules != nullptr) hook(*s->rules, x, old, field_path(p), out);
  if (x.is_object()) {
    const json* old_obj = old != nullptr && old->is_object() && !s->map_atomic ? old : nullptr;
    for (const auto& [k, v] : x.items()) {
      const json* old_child = old_obj != nullptr ? find_member(*old_obj, k) : nullptr;
      if (const Node* prop = s->property(k)) {
        walk_rules(prop, v, old_child, p.field(k), hook, out);
      } else if (s->additional == Additional::kSchema) {
        walk_rules(s->additional_schema.get(), v, old_child, p.key(k), hook, out);
      }
    }
  } else if (x.is_array() && s->items) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      walk_rules(s->items.get(), x[i], correlated_item(*s, old, x[i]), p.at(i), hook, out);
    }
  }
}

}  // namespace

void run_validation_rules(const Node* root, const json& x, const json* old, const ValidationRulesHook& hook,
                          std::vector<Cause>& out) {
  walk_rules(root, x, old, PathRef{}, hook, out);
}

}  // namespace kubex::sim::schema
