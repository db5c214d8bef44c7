#include "sim/apiserver/managed_fields.h"

#include <algorithm>
#include <tuple>

namespace kubex::sim::ssa {

using nlohmann::json;

const FieldSet* FieldSet::find(const std::string& pe) const {
  auto it = children.find(pe);
  return it == children.end() ? nullptr : &it->second;
}

void FieldSet::insert(const std::vector<std::string>& path) {
  FieldSet* n = this;
  for (const auto& pe : path) n = &n->children[pe];
  n->member = true;
}

bool FieldSet::contains(const std::vector<std::string>& path) const {
  const FieldSet* n = this;
  for (const auto& pe : path) {
    n = n->find(pe);
    if (!n) return false;
  }
  return n->member;
}

FieldSet& FieldSet::unite(const FieldSet& o) {
  member = member || o.member;
  for (const auto& [k, c] : o.children) children[k].unite(c);
  return *this;
}

FieldSet& FieldSet::subtract(const FieldSet& o) {
  if (o.member) member = false;
  for (auto it = children.begin(); it != children.end();) {
    if (const FieldSet* oc = o.find(it->first)) it->second.subtract(*oc);
    it = it->second.empty() ? children.erase(it) : std::next(it);
  }
  return *this;
}

FieldSet& FieldSet::subtract_recursive(const FieldSet& o) {
  for (auto it = children.begin(); it != children.end();) {
    const FieldSet* oc = o.find(it->first);
    if (oc && oc->member) {
      it = children.erase(it);
      continue;
    }
    if (oc) it->second.subtract_recursive(*oc);
    it = it->second.empty() ? children.erase(it) : std::next(it);
  }
  return *this;
}

FieldSet FieldSet::intersect(const FieldSet& o) const {
  FieldSet out;
  out.member = member && o.member;
  for (const auto& [k, c] : children) {
    if (const FieldSet* oc = o.find(k)) {
      FieldSet x = c.intersect(*oc);
      if (!x.empty()) out.children.emplace(k, std::move(x));
    }
  }
  return out;
}

void FieldSet::prune_empty() {
  for (auto it = children.begin(); it != children.end();) {
    it->second.prune_empty();
    it = it->second.empty() ? children.erase(it) : std::next(it);
  }
}

namespace {

void walk(const FieldSet& s, std::vector<std::string>& path,
          const std::function<void(const std::vector<std::string>&)>& fn) {
  if (s.member && !path.empty()) fn(path);
  for (const auto& [k, c] : s.children) {
    path.push_back(k);
    walk(c, path, fn);
    path.pop_back();
  }
}

bool valid_pe(const std::string& k) {
  if (k.size() < 2 || k[1] != ':') return false;
  char t = k[0];
  if (t == 'f') return true;
  if (t == 'i') return k.size() > 2 && std::all_of(k.begin() + 2, k.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (t == 'k' || t == 'v') return !json::parse(k.substr(2), nullptr, false).is_discarded();
  return false;
}

std::string value_string(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::string:
      return v.dump();  // Go's %q and JSON agree for the strings keys hold
    case json::value_t::array: {
      std::string s = "[";
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + value_string(v[i]);
      return s + "]";
    }
    case json::value_t::object: {
      std::string s;
      for (const auto& [k, x] : v.items()) s += k + "=" + value_string(x);
      return s;
    }
    default:
      return v.dump();
  }
}

}  // namespace

void FieldSet::for_each(const std::function<void(const std::vector<std::string>&)>& fn) const {
  std::vector<std::string> path;
  walk(*this, path, fn);
}

std::size_t FieldSet::size() const {
  std::size_t n = 0;
  for_each([&](const auto&) { ++n; });
  return n;
}

json FieldSet::to_fields_v1() const {
  json out = json::object();
  for (const auto& [k, c] : children) {
    if (c.empty()) continue;
    json v = c.to_fields_v1();
    if (c.member && !v.empty()) v["."] = json::object();
    out[k] = std::move(v);
  }
  return out;
}

std::optional<FieldSet> FieldSet::from_fields_v1(const json& v) {
  if (!v.is_object()) return std::nullopt;
  FieldSet s;
  for (const auto& [k, c] : v.items()) {
    if (k == ".") {
      s.member = true;
      continue;
    }
    if (!valid_pe(k) || !c.is_object()) return std::nullopt;
    auto child = from_fields_v1(c);
    if (!child) return std::nullopt;
    if (c.empty()) child->member = true;
    s.children[k] = std::move(*child);
  }
  return s;
}

std::string field_pe(std::string_view name) { return "f:" + std::string(name); }
std::string key_pe(const json& key_fields) { return "k:" + key_fields.dump(); }  // nlohmann sorts object keys
std::string value_pe(const json& v) { return "v:" + v.dump(); }
std::string index_pe(std::size_t i) { return "i:" + std::to_string(i); }

std::string path_string(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& pe : path) {
    std::string rest = pe.substr(2);
    switch (pe[0]) {
      case 'f':
        out += "." + rest;
        break;
      case 'i':
        out += "[" + rest + "]";
        break;
      case 'v':
        out += "[=" + value_string(json::parse(rest, nullptr, false)) + "]";
        break;
      case 'k': {
        json k = json::parse(rest, nullptr, false);
        std::string s;
        if (k.is_object()) {
          for (const auto& [name, x] : k.items()) s += (s.empty() ? "" : ",") + name + "=" + value_string(x);
        }
        out += "[" + s + "]";
        break;
      }
      default:
        out += "{{invalid path element}}";
    }
  }
  return out;
}

std::string ManagedEntry::id() const {
  std::string id = manager + "\x1f" + operation + "\x1f" + subresource;
  if (operation != "Apply") id += "\x1f" + api_version;
  return id;
}

std::string ManagedEntry::label() const {
  std::string s = json(manager).dump();
  if (!subresource.empty()) s += " with subresource " + json(subresource).dump();
  if (operation == "Update") s += " using " + api_version;
  return s;
}

std::optional<std::vector<ManagedEntry>> decode_managed_fields(const json& arr) {
  if (!arr.is_array()) return std::nullopt;
  std::vector<ManagedEntry> out;
  for (const auto& e : arr) {
    if (!e.is_object()) return std::nullopt;
    ManagedEntry m;
    m.manager = e.value("manager", "");
    m.operation = e.value("operation", "");
    m.api_version = e.value("apiVersion", "");
    m.time = e.contains("time") && e["time"].is_string() ? e["time"].get<std::string>() : "";
    m.subresource = e.value("subresource", "");
    if (m.operation != "Apply" && m.operation != "Update") return std::nullopt;
    if (e.value("fieldsType", "") != "FieldsV1") return std::nullopt;
    auto set = FieldSet::from_fields_v1(e.contains("fieldsV1") ? e["fieldsV1"] : json::object());
    if (!set) return std::nullopt;
    m.set = std::move(*set);
    out.push_back(std::move(m));
  }
  return out;
}

json encode_managed_fields(std::vector<ManagedEntry> entries) {
  std::erase_if(entries, [](const ManagedEntry& e) { return e.set.empty(); });
  std::stable_sort(entries.begin(), entries.end(), [](const ManagedEntry& p, const ManagedEntry& q) {
    // RFC 3339 seconds in UTC compare as strings.
    return std::tie(p.operation, p.time, p.manager, p.api_version, p.subresource) <
           std::tie(q.operation, q.time, q.manager, q.api_version, q.subresource);
  });
  json out = json::array();
  for (const auto& e : entries) {
    json j = {{"manager", e.manager}, {"operation", e.operation}, {"apiVersion", e.api_version}};
    if (!e.time.empty()) j["time"] = e.time;
    j["fieldsType"] = "FieldsV1";
    j["fieldsV1"] = e.set.to_fields_v1();
    if (!e.subresource.empty()) j["subresource"] = e.subresource;
    out.push_back(std::move(j));
  }
  return out;
}

std::string manager_from_user_agent(std::string_view ua) {
  auto slash = ua.find('/');
  std::string m(ua.substr(0, slash));
  if (m.size() > 128) m.resize(128);
  return m;
}

}  // namespace kubex::sim::ssa
