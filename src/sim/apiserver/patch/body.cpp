// What the three patch types share: decoding the body and the error values.
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/apiserver/patch/internal.h"

namespace kubex::sim::patch {

using nlohmann::json;

std::unexpected<PatchError> bad_request(std::string message) {
  PatchError e;
  e.message = std::move(message);
  e.kind = PatchErrorKind::kBadRequest;
  return std::unexpected<PatchError>(std::move(e));
}

std::unexpected<PatchError> invalid(std::string message) {
  PatchError e;
  e.message = std::move(message);
  e.kind = PatchErrorKind::kInvalid;
  return std::unexpected<PatchError>(std::move(e));
}

// How encoding/json names a JSON value in "cannot unmarshal X into ..." errors.
std::string json_word(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::null:
      return "null";
    default:
      return "number";
  }
}

namespace {

bool deeper_than(const json& root, std::size_t limit) {
  std::vector<std::pair<const json*, std::size_t>> stack{{&root, 1}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth > limit) return true;
    if (node->is_structured()) {
      for (const auto& child : *node) stack.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

}  // namespace

std::expected<json, PatchError> decode_body(std::string_view body) {
  json parsed;
  try {
    parsed = json::parse(body);
  } catch (const json::exception& e) {
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
    if (!what.empty() && what.front() == '[') {
      auto close = what.find("] ");
      if (close != std::string::npos) what.erase(0, close + 2);
    }
    return bad_request("error decoding patch: " + what);
  }
  if (deeper_than(parsed, kMaxDepth)) {
    return bad_request("error decoding patch: exceeded max depth of " + std::to_string(kMaxDepth));
  }
  return parsed;
}

std::string not_an_object_result(const json& doc) {
  return "the patched object is not a JSON object: json: cannot unmarshal " + json_word(doc) +
         " into Go value of type map[string]interface {}";
}

}  // namespace kubex::sim::patch
