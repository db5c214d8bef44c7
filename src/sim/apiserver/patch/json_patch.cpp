// JSON Patch (RFC 6902) with evanphx/json-patch v4 semantics and messages (see patch.h).
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
#include "sim/apiserver/patch/internal.h"

namespace kubex::sim::patch {

using nlohmann::json;

namespace {

constexpr std::string_view kMissingValue = ": missing value";

// strconv.Atoi, including its error texts.
std::expected<long long, std::string> go_atoi(std::string_view s) {
  std::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) {
    negative = digits.front() == '-';
    digits.remove_prefix(1);
  }
  const bool all_digits = !digits.empty() && std::all_of(digits.begin(), digits.end(),
                                                         [](char c) { return c >= '0' && c <= '9'; });
  if (!all_digits) return std::unexpected("strconv.Atoi: parsing " + go_quote(s) + ": invalid syntax");
  unsigned long long magnitude = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude);
  const unsigned long long limit = negative ? 9223372036854775808ULL : 9223372036854775807ULL;
  if (ec != std::errc() || ptr != digits.data() + digits.size() || magnitude > limit) {
    return std::unexpected("strconv.Atoi: parsing " + go_quote(s) + ": value out of range");
  }
  if (negative) return magnitude == limit ? INT64_MIN : -static_cast<long long>(magnitude);
  return static_cast<long long>(magnitude);
}

std::string invalid_index(long long idx) {
  return "Unable to access invalid index: " + std::to_string(idx) + ": invalid index referenced";
}

// RFC 6901 token unescaping: "~1" -> "/", then "~0" -> "~" (single left-to-right pass).
std::string decode_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '1' || token[i + 1] == '0')) {
      out += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      out += token[i];
    }
  }
  return out;
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(path.substr(start));
      return parts;
    }
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

// Index of an existing array element (negative counts from the end).
std::expected<std::size_t, std::string> existing_index(const json& array, const std::string& key) {
  auto idx = go_atoi(key);
  if (!idx) return std::unexpected(idx.error());
  long long i = *idx;
  const auto n = static_cast<long long>(array.size());
  if (i < 0) {
    if (i < -n) return std::unexpected(invalid_index(i));
    i += n;
  }
  if (i >= n) return std::unexpected(invalid_index(i));
  return static_cast<std::size_t>(i);
}

struct Location {
  json* container;  // an object or an array
  std::string key;  // decoded last token
};

// evanphx findObject: walks every token but the last; fails on anything missing, null or scalar.
std::optional<Location> find_object(json& doc, std::string_view path) {
  auto parts = split_path(path);
  if (parts.size() < 2) return std::nullopt;
  json* cur = &doc;
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    const std::string token = decode_token(parts[i]);
    json* next = nullptr;
    if (cur->is_object()) {
      auto it = cur->find(token);
      if (it != cur->end()) next = &*it;
    } else if (cur->is_array()) {
      auto idx = existing_index(*cur, token);
      if (idx) next = &(*cur)[*idx];
    }
    if (next == nullptr || !next->is_structured()) return std::nullopt;
    cur = next;
  }
  if (!cur->is_structured()) return std::nullopt;
  return Location{cur, decode_token(parts.back())};
}

// Returns the member/element, nullptr for a missing object member.
std::expected<json*, std::string> container_get(json& c, const std::string& key) {
  if (c.is_object()) {
    auto it = c.find(key);
    return it == c.end() ? nullptr : &*it;
  }
  auto idx = existing_index(c, key);
  if (!idx) return std::unexpected(idx.error());
  return &c[*idx];
}

std::expected<void, std::string> container_add(json& c, const std::string& key, json value) {
  if (c.is_object()) {
    c[key] = std::move(value);
    return {};
  }
  if (key == "-") {
    c.push_back(std::move(value));
    return {};
  }
  auto idx = go_atoi(key);
  if (!idx) return std::unexpected("value was not a proper array index: '" + key + "': " + idx.error());
  long long i = *idx;
  const auto size = static_cast<long long>(c.size()) + 1;
  if (i >= size) return std::unexpected(invalid_index(i));
  if (i < 0) {
    if (i < -size) return std::unexpected(invalid_index(i));
    i += size;
  }
  c.insert(c.begin() + static_cast<std::ptrdiff_t>(i), std::move(value));
  return {};
}

std::expected<void, std::string> container_set(json& c, const std::string& key, json value) {
  if (c.is_object()) {
    c[key] = std::move(value);
    return {};
  }
  auto idx = existing_index(c, key);
  if (!idx) return std::unexpected(idx.error());
  c[*idx] = std::move(value);
  return {};
}

std::expected<void, std::string> container_remove(json& c, const std::string& key) {
  if (c.is_object()) {
    if (!c.contains(key))
      return std::unexpected("Unable to remove nonexistent key: " + key + ": missing value");
    c.erase(key);
    return {};
  }
  auto idx = go_atoi(key);
  if (!idx) return std::unexpected(idx.error());
  long long i = *idx;
  const auto n = static_cast<long long>(c.size());
  if (i >= n) return std::unexpected(invalid_index(i));
  if (i < 0) {
    if (i < -n) return std::unexpected(invalid_index(i));
    i += n;
  }
  c.erase(static_cast<std::size_t>(i));
  return {};
}

// "path"/"from" of an operation; absent or null is an error with the given text.
std::expected<std::string, std::string> op_field(const json& op, const char* name, const char* missing) {
  auto it = op.find(name);
  if (it == op.end() || it->is_null()) return std::unexpected(std::string(missing));
  return it->get<std::string>();  // type-checked by validate_json_patch
}

json op_value(const json& op) {
  auto it = op.find("value");
  return it == op.end() ? json(nullptr) : *it;
}

constexpr const char* kMissingPath = "operation missing path field: missing value";
constexpr const char* kMissingFrom = "operation, missing from field: missing value";

Status op_add(json& doc, const json& op) {
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("add operation failed to decode path: missing value");
  auto loc = find_object(doc, *path);
  if (!loc)
    return invalid("add operation does not apply: doc is missing path: \"" + *path + "\"" +
                   std::string(kMissingValue));
  if (auto r = container_add(*loc->container, loc->key, op_value(op)); !r) {
    return invalid("error in add for path: '" + *path + "': " + r.error());
  }
  return {};
}

Status op_remove(json& doc, const json& op) {
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("remove operation failed to decode path: missing value");
  auto loc = find_object(doc, *path);
  if (!loc)
    return invalid("remove operation does not apply: doc is missing path: \"" + *path + "\"" +
                   std::string(kMissingValue));
  if (auto r = container_remove(*loc->container, loc->key); !r) {
    return invalid("error in remove for path: '" + *path + "': " + r.error());
  }
  return {};
}

Status op_replace(json& doc, const json& op) {
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("replace operation failed to decode path: " + path.error());
  if (path->empty()) {
    json value = op_value(op);
    if (!value.is_structured()) return invalid("replace operation value must be object or array");
    doc = std::move(value);
    return {};
  }
  auto loc = find_object(doc, *path);
  if (!loc)
    return invalid("replace operation does not apply: doc is missing path: " + *path +
                   std::string(kMissingValue));
  if (auto got = container_get(*loc->container, loc->key); !got) {
    return invalid("replace operation does not apply: doc is missing key: " + *path +
                   std::string(kMissingValue));
  }
  if (auto r = container_set(*loc->container, loc->key, op_value(op)); !r) {
    return invalid("error in remove for path: '" + *path + "': " + r.error());
  }
  return {};
}

Status op_move(json& doc, const json& op) {
  auto from = op_field(op, "from", kMissingFrom);
  if (!from) return invalid("move operation failed to decode from: " + from.error());
  auto src = find_object(doc, *from);
  if (!src)
    return invalid("move operation does not apply: doc is missing from path: " + *from +
                   std::string(kMissingValue));
  auto got = container_get(*src->container, src->key);
  if (!got) return invalid("error in move for path: '" + src->key + "': " + got.error());
  json value = *got == nullptr ? json(nullptr) : **got;
  if (auto r = container_remove(*src->container, src->key); !r) {
    return invalid("error in move for path: '" + src->key + "': " + r.error());
  }
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("move operation failed to decode path: " + path.error());
  auto dst = find_object(doc, *path);
  if (!dst) {
    return invalid("move operation does not apply: doc is missing destination path: " + *path +
                   std::string(kMissingValue));
  }
  if (auto r = container_add(*dst->container, dst->key, std::move(value)); !r) {
    return invalid("error in move for path: '" + *path + "': " + r.error());
  }
  return {};
}

Status op_test(json& doc, const json& op) {
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("test operation failed to decode path: " + path.error());
  const json expected = op_value(op);
  if (path->empty()) {
    if (doc == expected) return {};
    return invalid("testing value  failed: test failed");
  }
  auto loc = find_object(doc, *path);
  if (!loc)
    return invalid("test operation does not apply: is missing path: " + *path + std::string(kMissingValue));
  auto got = container_get(*loc->container, loc->key);
  if (!got) return invalid("error in test for path: '" + *path + "': " + got.error());
  const json actual = *got == nullptr ? json(nullptr) : **got;
  if (actual == expected) return {};
  return invalid("testing value " + *path + " failed: test failed");
}

Status op_copy(json& doc, const json& op) {
  auto from = op_field(op, "from", kMissingFrom);
  if (!from) return invalid("copy operation failed to decode from: " + from.error());
  auto src = find_object(doc, *from);
  if (!src)
    return invalid("copy operation does not apply: doc is missing from path: " + *from +
                   std::string(kMissingValue));
  auto got = container_get(*src->container, src->key);
  if (!got) return invalid("error in copy for from: '" + *from + "': " + got.error());
  json value = *got == nullptr ? json(nullptr) : **got;
  auto path = op_field(op, "path", kMissingPath);
  if (!path) return invalid("copy operation failed to decode path: missing value");
  auto dst = find_object(doc, *path);
  if (!dst) {
    return invalid("copy operation does not apply: doc is missing destination path: " + *path +
                   std::string(kMissingValue));
  }
  if (auto r = container_add(*dst->container, dst->key, std::move(value)); !r) {
    return invalid("error while adding value during copy: " + r.error());
  }
  return {};
}

// What kube-apiserver's strict decoding into []jsonPatchOp rejects with 400.
Status validate_json_patch(const json& patch) {
  if (!patch.is_array()) {
    return bad_request("error decoding patch: json: cannot unmarshal " + json_word(patch) +
                       " into Go value of type []handlers.jsonPatchOp");
  }
  for (const auto& op : patch) {
    if (op.is_null()) continue;
    if (!op.is_object()) {
      return bad_request("error decoding patch: json: cannot unmarshal " + json_word(op) +
                         " into Go value of type handlers.jsonPatchOp");
    }
    for (const char* field : {"op", "path", "from"}) {
      auto it = op.find(field);
      if (it != op.end() && !it->is_null() && !it->is_string()) {
        return bad_request("error decoding patch: json: cannot unmarshal " + json_word(*it) +
                           " into Go struct field jsonPatchOp." + field + " of type string");
      }
    }
  }
  return {};
}

}  // namespace

PatchResult apply_json_patch(const json& original, std::string_view body) {
  auto patch = decode_body(body);
  if (!patch) return std::unexpected(patch.error());
  if (auto v = validate_json_patch(*patch); !v) return std::unexpected(v.error());
  json doc = original;
  for (const auto& raw_op : *patch) {
    const json op = raw_op.is_null() ? json::object() : raw_op;
    auto kind_it = op.find("op");
    const std::string kind =
        kind_it != op.end() && kind_it->is_string() ? kind_it->get<std::string>() : "unknown";
    Status s;
    if (kind == "add") {
      s = op_add(doc, op);
    } else if (kind == "remove") {
      s = op_remove(doc, op);
    } else if (kind == "replace") {
      s = op_replace(doc, op);
    } else if (kind == "move") {
      s = op_move(doc, op);
    } else if (kind == "test") {
      s = op_test(doc, op);
    } else if (kind == "copy") {
      s = op_copy(doc, op);
    } else {
      s = invalid("Unexpected kind: " + kind);
    }
    if (!s) return std::unexpected(s.error());
  }
  if (!doc.is_object()) return invalid(not_an_object_result(doc));
  return doc;
}

}  // namespace kubex::sim::patch
