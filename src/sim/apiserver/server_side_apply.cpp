#include "sim/apiserver/server_side_apply.h"

#include <algorithm>
#include <map>
#include <set>

#include "sim/apiserver/resource.h"

namespace kubex::sim::ssa {

using nlohmann::json;
using Path = std::vector<std::string>;

namespace {

bool is_map_like(const TypePos& t) { return !t.atomic && !t.scalar; }

bool empty_compound(const json* v) {
  return v == nullptr || (v->is_object() && v->empty()) || (v->is_array() && v->empty());
}

const json* member(const json* obj, const std::string& k) {
  if (!obj || !obj->is_object()) return nullptr;
  auto it = obj->find(k);
  return it == obj->end() ? nullptr : &*it;
}

// Items of a non-atomic list by path element, in order; duplicates keep the first.
struct Indexed {
  std::vector<std::string> pes;
  std::map<std::string, const json*> by_pe;
};

Indexed index_items(const json* list, const TypePos& t) {
  Indexed out;
  if (!list || !list->is_array()) return out;
  for (std::size_t i = 0; i < list->size(); ++i) {
    std::string pe = item_pe(t, (*list)[i], i);
    if (pe.empty() || out.by_pe.count(pe)) continue;
    out.pes.push_back(pe);
    out.by_pe[pe] = &(*list)[i];
  }
  return out;
}

void to_set(const json& v, const TypePos& t, Path& path, FieldSet& out) {
  if (v.is_object() && is_map_like(t)) {
    for (const auto& [k, c] : v.items()) {
      bool declared = true;
      TypePos ct = t.field(k, declared);
      path.push_back(field_pe(k));
      to_set(c, ct, path, out);
      if (c.is_null() || (c.is_object() && c.empty()) || !declared) out.insert(path);
      path.pop_back();
    }
    return;
  }
  if (v.is_array() && !t.scalar && t.list_kind() != ListKind::kAtomic) {
    TypePos it = t.item();
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::string pe = item_pe(t, v[i], i);
      if (pe.empty()) continue;
      path.push_back(pe);
      to_set(v[i], it, path, out);
      out.insert(path);
      path.pop_back();
    }
    return;
  }
  if (!path.empty()) out.insert(path);
}

void cmp(const json* l, const json* r, const TypePos& t, Path& path, Comparison& c) {
  bool both_objects = (!l || l->is_object()) && (!r || r->is_object());
  bool both_arrays = (!l || l->is_array()) && (!r || r->is_array());
  bool granular = (both_objects && is_map_like(t)) ||
                  (both_arrays && !t.scalar && t.list_kind() != ListKind::kAtomic);
  if (!granular || (empty_compound(l) && empty_compound(r))) {
    if (path.empty()) return;
    if (!l) {
      c.added.insert(path);
    } else if (!r) {
      c.removed.insert(path);
    } else if (*l != *r) {
      c.modified.insert(path);
    }
    return;
  }
  if (both_objects) {
    std::set<std::string> keys;
    if (l) {
      for (const auto& [k, v] : l->items()) keys.insert(k);
    }
    if (r) {
      for (const auto& [k, v] : r->items()) keys.insert(k);
    }
    for (const auto& k : keys) {
      bool declared = true;
      TypePos ct = t.field(k, declared);
      path.push_back(field_pe(k));
      cmp(member(l, k), member(r, k), ct, path, c);
      path.pop_back();
    }
  } else {
    Indexed li = index_items(l, t), ri = index_items(r, t);
    std::vector<std::string> all = li.pes;
    for (const auto& pe : ri.pes) {
      if (!li.by_pe.count(pe)) all.push_back(pe);
    }
    TypePos it = t.item();
    for (const auto& pe : all) {
      auto lx = li.by_pe.find(pe);
      auto rx = ri.by_pe.find(pe);
      path.push_back(pe);
      cmp(lx == li.by_pe.end() ? nullptr : lx->second, rx == ri.by_pe.end() ? nullptr : rx->second, it, path, c);
      path.pop_back();
    }
  }
  if (path.empty()) return;
  if (!l) c.added.insert(path);
  if (!r) c.removed.insert(path);
}

json merge_value(const json* l, const json* r, const TypePos& t);

// structured-merge-diff's order: the live order, with the applied items that are new placed where the applied
// list has them relative to the items both share.
json merge_list(const json& l, const json& r, const TypePos& t) {
  Indexed li = index_items(&l, t), ri = index_items(&r, t);
  std::vector<std::string> shared;
  for (const auto& pe : ri.pes) {
    if (li.by_pe.count(pe)) shared.push_back(pe);
  }
  std::size_t next_shared = 0;
  auto advance = [&](const std::string& pe) {
    if (next_shared < shared.size() && shared[next_shared] == pe) ++next_shared;
  };
  std::set<std::string> merged;
  TypePos it = t.item();
  json out = json::array();
  std::size_t a = 0, b = 0;
  while (a < li.pes.size() || b < ri.pes.size()) {
    if (a < li.pes.size() && b < ri.pes.size()) {
      const std::string& pe = li.pes[a];
      if (pe == ri.pes[b]) {
        merged.insert(pe);
        out.push_back(merge_value(li.by_pe[pe], ri.by_pe[pe], it));
        ++a;
        ++b;
        advance(pe);
        continue;
      }
      if (ri.by_pe.count(pe) && next_shared < shared.size() && shared[next_shared] != pe) {
        ++a;
        continue;
      }
    }
    if (a < li.pes.size()) {
      const std::string& pe = li.pes[a];
      if (!ri.by_pe.count(pe)) {
        out.push_back(*li.by_pe[pe]);
        ++a;
        continue;
      }
      if (merged.count(pe)) {
        ++a;
        continue;
      }
    }
    if (b < ri.pes.size()) {
      const std::string& pe = ri.pes[b];
      merged.insert(pe);
      auto lx = li.by_pe.find(pe);
      out.push_back(merge_value(lx == li.by_pe.end() ? nullptr : lx->second, ri.by_pe[pe], it));
      ++b;
      advance(pe);
    }
  }
  return out;
}

json merge_value(const json* l, const json* r, const TypePos& t) {
  if (!r) return l ? *l : json();
  if (!l) return *r;
  if (l->is_object() && r->is_object() && is_map_like(t)) {
    json out = *l;
    for (const auto& [k, v] : r->items()) {
      bool declared = true;
      out[k] = merge_value(member(l, k), &v, t.field(k, declared));
    }
    return out;
  }
  if (l->is_array() && r->is_array() && !t.scalar && t.list_kind() != ListKind::kAtomic) return merge_list(*l, *r, t);
  return *r;
}

// Paths no manager may own: the object's identity and server-set metadata (stripMeta).
const FieldSet& stripped() {
  static const FieldSet s = [] {
    FieldSet x;
    x.insert({"f:apiVersion"});
    x.insert({"f:kind"});
    x.insert({"f:metadata"});
    for (const char* k : {"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation",
                          "managedFields", "resourceVersion"}) {
      x.insert({"f:metadata", field_pe(k)});
    }
    return x;
  }();
  return s;
}

// Fields a write through this endpoint never owns: status on the main resource of kinds with a status
// subresource; everything but status on /status.
FieldSet ignored_for(const Request& req, const FieldSet& candidate) {
  FieldSet ignored;
  if (req.subresource == "status") {
    for (const auto& [k, c] : candidate.children) {
      if (k != "f:status") ignored.insert({k});
    }
  } else if (req.resource && req.resource->has_status) {
    ignored.insert({"f:status"});
  }
  return ignored;
}

FieldSet owned_set(FieldSet s, const Request& req) {
  s.subtract_recursive(ignored_for(req, s));
  s.subtract(stripped());
  s.prune_empty();
  return s;
}

json without_managed_fields(const json& obj) {
  json out = obj.is_object() ? obj : json::object();
  if (auto m = out.find("metadata"); m != out.end() && m->is_object()) m->erase("managedFields");
  return out;
}

std::vector<ManagedEntry> entries_of(const json* obj) {
  const json* meta = member(obj, "metadata");
  const json* mf = member(meta, "managedFields");
  if (!mf) return {};
  return decode_managed_fields(*mf).value_or(std::vector<ManagedEntry>{});
}

std::string api_version_of(const Request& req) {
  return req.resource ? req.resource->api_version() : std::string();
}

}  // namespace

FieldSet to_field_set(const json& obj, const TypePos& t) {
  FieldSet out;
  Path path;
  to_set(obj, t, path, out);
  return out;
}

Comparison compare(const json& lhs, const json& rhs, const TypePos& t) {
  Comparison c;
  Path path;
  cmp(&lhs, &rhs, t, path, c);
  return c;
}

json merge(const json& live, const json& config, const TypePos& t) { return merge_value(&live, &config, t); }

void remove_unowned(json& obj, const FieldSet& last, const FieldSet& owned, const TypePos& t) {
  if (obj.is_object() && is_map_like(t)) {
    for (auto it = obj.begin(); it != obj.end();) {
      std::string pe = field_pe(it.key());
      const FieldSet* l = last.find(pe);
      if (!l) {
        ++it;
        continue;
      }
      const FieldSet* o = owned.find(pe);
      if (!o || o->empty()) {
        it = obj.erase(it);
        continue;
      }
      bool declared = true;
      remove_unowned(*it, *l, *o, t.field(it.key(), declared));
      ++it;
    }
    return;
  }
  if (obj.is_array() && !t.scalar && t.list_kind() != ListKind::kAtomic) {
    TypePos item = t.item();
    json out = json::array();
    for (std::size_t i = 0; i < obj.size(); ++i) {
      std::string pe = item_pe(t, obj[i], i);
      const FieldSet* l = last.find(pe);
      const FieldSet* o = owned.find(pe);
      if (l && (!o || o->empty())) continue;
      if (l) remove_unowned(obj[i], *l, *o, item);
      out.push_back(std::move(obj[i]));
    }
    obj = std::move(out);
  }
}

json updated_managed_fields(const Request& req, const json* live, const json& next, const json* requested) {
  std::vector<ManagedEntry> entries;
  bool from_request = false;
  if (requested && requested->is_array() && !requested->empty() && req.subresource.empty()) {
    if (auto d = decode_managed_fields(*requested)) {
      entries = std::move(*d);
      from_request = true;
    } else if (requested->size() == 1 && requested->at(0).is_object() && requested->at(0).empty()) {
      from_request = true;  // [{}] clears the managed fields
    }
  }
  if (!from_request) entries = entries_of(live);
  TypePos t = root_type(*req.resource);
  json before = live ? without_managed_fields(*live) : json::object();
  Comparison c = compare(before, without_managed_fields(next), t);
  if (c.same()) return encode_managed_fields(std::move(entries));
  FieldSet changed = c.modified;
  changed.unite(c.added);
  FieldSet ignored = ignored_for(req, changed);
  changed.subtract_recursive(ignored);
  c.removed.subtract_recursive(ignored);
  for (auto& e : entries) {
    e.set.subtract(changed);
    e.set.subtract(c.removed);
  }
  FieldSet mine = owned_set(changed, req);
  if (!mine.empty()) {
    ManagedEntry self{req.manager, "Update", api_version_of(req), req.now, req.subresource, {}};
    auto it = std::find_if(entries.begin(), entries.end(), [&](const ManagedEntry& e) { return e.id() == self.id(); });
    if (it != entries.end()) {
      it->set.unite(mine);
      it->time = req.now;
    } else {
      self.set = std::move(mine);
      entries.push_back(std::move(self));
    }
  }
  return encode_managed_fields(std::move(entries));
}

std::expected<json, ApiError> apply(const Request& req, const json* live, const json& config, bool force) {
  TypePos t = root_type(*req.resource);
  std::vector<ManagedEntry> entries = entries_of(live);
  json before = live ? without_managed_fields(*live) : json::object();
  json applied = without_managed_fields(config);

  ManagedEntry self{req.manager, "Apply", api_version_of(req), req.now, req.subresource, {}};
  auto mine = std::find_if(entries.begin(), entries.end(), [&](const ManagedEntry& e) { return e.id() == self.id(); });
  FieldSet last;
  std::string last_time;
  if (mine != entries.end()) {
    last = mine->set;
    last_time = mine->time;
    entries.erase(mine);
  }
  self.set = owned_set(to_field_set(applied, t), req);

  json merged = merge(before, applied, t);
  if (!last.empty()) {
    FieldSet owned = self.set;
    for (const auto& e : entries) owned.unite(e.set);
    remove_unowned(merged, last, owned, t);
  }
  // Server-owned metadata comes from the live object, never from the configuration.
  if (live) {
    for (const char* k : {"uid", "creationTimestamp", "resourceVersion", "generation", "deletionTimestamp",
                          "deletionGracePeriodSeconds"}) {
      if (const json* v = member(member(&before, "metadata"), k)) merged["metadata"][k] = *v;
    }
  }

  Comparison c = compare(before, merged, t);
  FieldSet changed = c.modified;
  changed.unite(c.added);
  FieldSet ignored = ignored_for(req, changed);
  changed.subtract_recursive(ignored);
  c.removed.subtract_recursive(ignored);

  struct Found {
    const ManagedEntry* entry;
    Path path;
  };
  std::vector<Found> conflicts;
  for (const auto& e : entries) {
    FieldSet x = e.set.intersect(changed);
    x.for_each([&](const Path& p) { conflicts.push_back({&e, p}); });
  }
  if (!conflicts.empty() && !force) {
    std::stable_sort(conflicts.begin(), conflicts.end(),
                     [](const Found& a, const Found& b) { return a.entry->label() < b.entry->label(); });
    ApiError err{409, "Conflict", "", "", "", "", {}, 0};
    if (conflicts.size() == 1) {
      err.message = "Apply failed with 1 conflict: conflict with " + conflicts[0].entry->label() + ": " +
                    path_string(conflicts[0].path);
    } else {
      err.message = "Apply failed with " + std::to_string(conflicts.size()) + " conflicts: ";
      std::string current;
      bool first = true;
      for (const auto& f : conflicts) {
        if (f.entry->label() != current) {
          current = f.entry->label();
          err.message += std::string(first ? "" : "\n") + "conflicts with " + current + ":";
        }
        err.message += "\n- " + path_string(f.path);
        first = false;
      }
    }
    for (const auto& f : conflicts) {
      err.causes.push_back({"FieldManagerConflict", "conflict with " + f.entry->label(), path_string(f.path)});
    }
    return std::unexpected(err);
  }
  for (auto& e : entries) {
    if (force) e.set.subtract(changed);
    e.set.subtract(c.removed);
  }
  self.time = (!live || c.same()) && !last_time.empty() ? last_time : req.now;
  if (!self.set.empty()) entries.push_back(std::move(self));
  if (!merged.is_object()) merged = json::object();
  merged["metadata"]["managedFields"] = encode_managed_fields(std::move(entries));
  return merged;
}

bool same_managed_fields(const json& a, const json& b) {
  auto strip = [](const json& o) {
    const json* m = member(member(&o, "metadata"), "managedFields");
    json x = m ? *m : json::array();
    if (x.is_array()) {
      for (auto& e : x) {
        if (e.is_object()) e.erase("time");
      }
    }
    return x;
  };
  return strip(a) == strip(b);
}

}  // namespace kubex::sim::ssa
