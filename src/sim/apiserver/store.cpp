#include "sim/apiserver/store.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace kubex::sim {
namespace {

std::string field_value(const nlohmann::json& obj, const std::string& path) {
  // Special case: events' "source" selects source.component.
  const nlohmann::json* cur = &obj;
  std::string p = path == "source" ? "source.component" : path;
  std::size_t start = 0;
  while (start <= p.size()) {
    auto dot = p.find('.', start);
    std::string part = p.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!cur->is_object()) return "";
    auto it = cur->find(part);
    if (it == cur->end()) return "";
    cur = &*it;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  return "";
}

}  // namespace

const std::string* ObjectIndex::label(const std::string& key) const {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& p, const std::string& k) { return p.first < k; });
  if (it != labels.end() && it->first == key) return &it->second;
  return nullptr;
}

const std::string* ObjectIndex::field(const std::string& key) const {
  if (key == "metadata.name") return &name;
  if (key == "metadata.namespace") return &ns;
  for (const auto& f : fields) {
    if (f.first == key) return &f.second;
  }
  return nullptr;
}

const char* event_type_name(EventType t) {
  switch (t) {
    case EventType::kAdded: return "ADDED";
    case EventType::kModified: return "MODIFIED";
    case EventType::kDeleted: return "DELETED";
    case EventType::kBookmark: return "BOOKMARK";
  }
  return "ERROR";
}

std::string object_key(const std::string& ns, const std::string& name) { return ns.empty() ? name : ns + "/" + name; }

IndexPtr build_index(const nlohmann::json& obj, const std::vector<std::string>& fields) {
  auto idx = std::make_shared<ObjectIndex>();
  if (auto m = obj.find("metadata"); m != obj.end() && m->is_object()) {
    idx->ns = m->value("namespace", "");
    idx->name = m->value("name", "");
    idx->uid = m->value("uid", "");
    if (auto l = m->find("labels"); l != m->end() && l->is_object()) {
      for (auto it = l->begin(); it != l->end(); ++it) {
        idx->labels.emplace_back(it.key(), it.value().is_string() ? it.value().get<std::string>() : "");
      }
      std::sort(idx->labels.begin(), idx->labels.end());
    }
    if (auto o = m->find("ownerReferences"); o != m->end() && o->is_array()) {
      for (const auto& ref : *o) {
        if (ref.is_object()) idx->owner_uids.push_back(ref.value("uid", ""));
      }
    }
    idx->deleting = m->contains("deletionTimestamp") && !(*m)["deletionTimestamp"].is_null();
  }
  for (const auto& f : fields) idx->fields.emplace_back(f, field_value(obj, f));
  return idx;
}

Store::Store(std::size_t watch_window) : window_(std::max<std::size_t>(watch_window, 1)) {}

std::uint64_t Store::current_rv() const {
  std::lock_guard lk(mu_);
  return rv_;
}

Store::Bucket& Store::bucket(const std::string& storage) { return buckets_[storage]; }

const Store::Bucket* Store::find_bucket(const std::string& storage) const {
  auto it = buckets_.find(storage);
  return it == buckets_.end() ? nullptr : &it->second;
}

std::optional<StoredObject> Store::get(const std::string& storage, const std::string& key) const {
  std::lock_guard lk(mu_);
  const Bucket* b = find_bucket(storage);
  if (!b) return std::nullopt;
  auto it = b->objects.find(key);
  if (it == b->objects.end()) return std::nullopt;
  return it->second;
}

Store::ListResult Store::list(const std::string& storage, const std::string& ns, const std::string& after_key,
                              std::size_t limit, const std::function<bool(const ObjectIndex&)>& filter) const {
  ListResult out;
  std::lock_guard lk(mu_);
  out.rv = rv_;
  const Bucket* b = find_bucket(storage);
  if (!b) return out;
  auto it = after_key.empty() ? b->objects.begin() : b->objects.upper_bound(after_key);
  // A namespace's objects are the keys "<ns>/...".
  const std::string prefix = ns.empty() ? std::string() : ns + "/";
  if (!prefix.empty() && (after_key.empty() || after_key < prefix)) it = b->objects.lower_bound(prefix);
  auto in_range = [&](auto i) {
    return i != b->objects.end() && i->first.compare(0, prefix.size(), prefix) == 0;
  };
  for (; in_range(it); ++it) {
    if (filter && !filter(*it->second.index)) continue;
    if (limit && out.items.size() >= limit) {
      out.more = true;
      break;
    }
    out.items.push_back(it->second);
    out.last_key = it->first;
  }
  // Like kube-apiserver, remainingItemCount is only known for unfiltered lists.
  if (out.more && !filter) {
    out.remaining = 0;
    for (; in_range(it); ++it) ++out.remaining;
  }
  return out;
}

void Store::append_event(const std::string& storage, const std::string& key, Bucket& b, StoreEvent ev) {
  if (hook_) hook_(storage, key, ev);
  b.history.push_back(std::move(ev));
  while (b.history.size() > window_) {
    b.compacted = b.history.front().rv;
    b.history.pop_front();
  }
  cv_.notify_all();
}

namespace {
void stamp_rv(nlohmann::json& obj, std::uint64_t rv) { obj["metadata"]["resourceVersion"] = std::to_string(rv); }

// The object an update or delete of `key` applies to. On NotFound, or Conflict when `expected_rv` (0 = any)
// is not the stored version, fills in `res` and returns end().
std::map<std::string, StoredObject>::iterator find_for_write(std::map<std::string, StoredObject>& objects,
                                                             const std::string& key, std::uint64_t expected_rv,
                                                             Store::WriteResult& res) {
  auto it = objects.find(key);
  if (it == objects.end()) {
    res.status = Store::WriteStatus::kNotFound;
    return it;
  }
  if (expected_rv != 0 && it->second.rv != expected_rv) {
    res.status = Store::WriteStatus::kConflict;
    res.current = it->second;
    return objects.end();
  }
  return it;
}
}  // namespace

Store::WriteResult Store::create(const std::string& storage, const std::string& key, nlohmann::json& obj,
                                 const std::vector<std::string>& fields) {
  WriteResult res;
  std::lock_guard lk(mu_);
  Bucket& b = bucket(storage);
  auto it = b.objects.find(key);
  if (it != b.objects.end()) {
    res.status = WriteStatus::kExists;
    res.current = it->second;
    return res;
  }
  std::uint64_t rv = ++rv_;
  stamp_rv(obj, rv);
  auto text = std::make_shared<const std::string>(obj.dump());
  auto idx = build_index(obj, fields);
  b.objects.emplace(key, StoredObject{text, idx, rv});
  append_event(storage, key, b, StoreEvent{rv, EventType::kAdded, text, idx, nullptr});
  res.rv = rv;
  res.text = text;
  return res;
}

Store::WriteResult Store::update(const std::string& storage, const std::string& key, nlohmann::json& obj,
                                 std::uint64_t expected_rv, const std::vector<std::string>& fields) {
  WriteResult res;
  std::lock_guard lk(mu_);
  Bucket& b = bucket(storage);
  auto it = find_for_write(b.objects, key, expected_rv, res);
  if (it == b.objects.end()) return res;
  std::uint64_t rv = ++rv_;
  stamp_rv(obj, rv);
  auto text = std::make_shared<const std::string>(obj.dump());
  auto idx = build_index(obj, fields);
  IndexPtr prev = it->second.index;
  it->second = StoredObject{text, idx, rv};
  append_event(storage, key, b, StoreEvent{rv, EventType::kModified, text, idx, prev});
  res.rv = rv;
  res.text = text;
  return res;
}

Store::WriteResult Store::remove(const std::string& storage, const std::string& key, std::uint64_t expected_rv,
                                 nlohmann::json* final_state) {
  WriteResult res;
  std::lock_guard lk(mu_);
  Bucket& b = bucket(storage);
  auto it = find_for_write(b.objects, key, expected_rv, res);
  if (it == b.objects.end()) return res;
  std::uint64_t rv = ++rv_;
  // The DELETED event carries the last state stamped with the deletion's resourceVersion.
  nlohmann::json last = final_state ? *final_state : nlohmann::json::parse(*it->second.text, nullptr, false);
  if (last.is_discarded()) last = nlohmann::json::object();
  stamp_rv(last, rv);
  auto text = std::make_shared<const std::string>(last.dump());
  IndexPtr idx = it->second.index;
  b.objects.erase(it);
  append_event(storage, key, b, StoreEvent{rv, EventType::kDeleted, text, idx, nullptr});
  if (final_state) *final_state = std::move(last);
  res.rv = rv;
  res.text = text;
  return res;
}

std::uint64_t Store::compacted_rv(const std::string& storage) const {
  std::lock_guard lk(mu_);
  const Bucket* b = find_bucket(storage);
  return std::max(floor_rv_, b ? b->compacted : 0);
}

std::uint64_t Store::last_event_rv(const std::string& storage) const {
  std::lock_guard lk(mu_);
  const Bucket* b = find_bucket(storage);
  return b == nullptr || b->history.empty() ? 0 : b->history.back().rv;
}

void Store::compact_all() {
  std::lock_guard lk(mu_);
  floor_rv_ = rv_;
  for (auto& [name, b] : buckets_) {
    b.history.clear();
    b.compacted = rv_;
  }
  cv_.notify_all();
}

void Store::begin_watch_window() {
  std::lock_guard lk(mu_);
  floor_rv_ = std::max(floor_rv_, rv_);
}

std::optional<Store::Cursor> Store::watch(const std::string& storage, std::uint64_t from_rv) const {
  std::lock_guard lk(mu_);
  const Bucket* b = find_bucket(storage);
  std::uint64_t compacted = std::max(floor_rv_, b ? b->compacted : 0);
  if (from_rv < compacted) return std::nullopt;
  return Cursor(this, storage, from_rv);
}

std::vector<StoreEvent> Store::Cursor::next(std::chrono::milliseconds timeout, bool& gone) {
  std::vector<StoreEvent> out;
  gone = false;
  std::unique_lock lk(store_->mu_);
  auto ready = [&] {
    const Bucket* b = store_->find_bucket(storage_);
    if (!b) return false;
    if (position_ < b->compacted) return true;
    return !b->history.empty() && b->history.back().rv > position_;
  };
  if (!ready()) store_->cv_.wait_for(lk, timeout, ready);
  const Bucket* b = store_->find_bucket(storage_);
  if (!b) return out;
  if (position_ < b->compacted) {
    gone = true;
    return out;
  }
  auto it = std::upper_bound(b->history.begin(), b->history.end(), position_,
                             [](std::uint64_t rv, const StoreEvent& e) { return rv < e.rv; });
  for (; it != b->history.end(); ++it) out.push_back(*it);
  if (!out.empty()) position_ = out.back().rv;
  return out;
}

void Store::wake_all() const { cv_.notify_all(); }

std::size_t Store::count(const std::string& storage) const {
  std::lock_guard lk(mu_);
  const Bucket* b = find_bucket(storage);
  return b ? b->objects.size() : 0;
}

std::vector<std::string> Store::storages() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (const auto& [k, v] : buckets_) out.push_back(k);
  return out;
}

void Store::set_commit_hook(CommitHook hook) {
  std::lock_guard lk(mu_);
  hook_ = std::move(hook);
}

void Store::restore(const std::string& storage, const std::string& key, const std::string& text, std::uint64_t rv,
                    const std::vector<std::string>& fields) {
  auto obj = nlohmann::json::parse(text, nullptr, false);
  if (obj.is_discarded()) return;
  std::lock_guard lk(mu_);
  Bucket& b = bucket(storage);
  b.objects[key] = StoredObject{std::make_shared<const std::string>(text), build_index(obj, fields), rv};
  rv_ = std::max(rv_, rv);
}

void Store::finish_restore(std::uint64_t rv) {
  std::lock_guard lk(mu_);
  rv_ = std::max(rv_, rv);
  floor_rv_ = rv_;
}

}  // namespace kubex::sim
