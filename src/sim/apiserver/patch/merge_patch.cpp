// JSON Merge Patch (RFC 7386), evanphx MergePatch flavour: nulls inside values that land where there was
// nothing (or a non-object) are pruned, also inside objects nested in arrays.
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

#include "sim/apiserver/patch/internal.h"

namespace kubex::sim::patch {

using nlohmann::json;

namespace {

void prune_nulls(json& v) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      if (it->is_null()) {
        it = v.erase(it);
      } else {
        prune_nulls(*it);
        ++it;
      }
    }
  } else if (v.is_array()) {
    for (auto& e : v) {
      if (!e.is_null()) prune_nulls(e);
    }
  }
}

void merge_docs(json& doc, json& patch);

void merge_value(json& cur, json& patch) {
  if (!cur.is_object()) {
    prune_nulls(patch);
    cur = std::move(patch);
  } else if (!patch.is_object()) {
    cur = std::move(patch);
  } else {
    merge_docs(cur, patch);
  }
}

void merge_docs(json& doc, json& patch) {
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it->is_null()) {
      doc.erase(it.key());
      continue;
    }
    auto cur = doc.find(it.key());
    if (cur == doc.end() || cur->is_null()) {
      prune_nulls(*it);
      doc[it.key()] = std::move(*it);
    } else {
      merge_value(*cur, *it);
    }
  }
}

}  // namespace

PatchResult apply_merge_patch(const json& original, std::string_view body) {
  auto patch = decode_body(body);
  if (!patch) return std::unexpected(patch.error());
  if (patch->is_null()) return bad_request("Invalid JSON Patch");
  if (!patch->is_object()) {
    return bad_request("error decoding patch: json: cannot unmarshal " + json_word(*patch) +
                       " into Go value of type map[string]interface {}");
  }
  json doc = original;
  merge_docs(doc, *patch);
  return doc;
}

}  // namespace kubex::sim::patch
