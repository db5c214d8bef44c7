// Public face of the CEL interpreter: compile/evaluate, JSON conversion and the compile cache. The
// x-kubernetes-validations runner and CRD-time checks are in cel/rules.cpp.
//
// Files: cel_lexer/cel_parser (syntax, macros), cel_checker (names, literal checks), cel_value (values,
// equality, ordering), cel_eval (evaluation, comprehensions), cel_functions/cel_convert/cel_strings (the
// function library), cel_time (Go duration/time/number formats), cel_quantity (resource.Quantity),
// cel_regex_parse/cel_regex (RE2 syntax on a Pike VM), cel_rules (validation rules).
//
// Limits: expressions up to 100,000 bytes, 50 levels of parenthesis/argument/literal nesting and a syntax
// tree at most 100 deep (&& and || chains are balanced, so long condition lists are fine); values nested
// at most 256 deep; regular expressions at most 64 groups deep and 50,000 instructions.
//
// Known deviations from cel-go / kube-apiserver:
//  - No schema: no static type checking (undefined fields and most overload mismatches are runtime errors,
//    not CRD-creation errors); JSON integers are `int` even in `type: number` fields; strings with
//    `format: duration|date-time|byte` stay strings (call duration()/timestamp() explicitly); `self.x` on a
//    map also finds the Kubernetes-escaped property names (`x__dash__y`, `__namespace__`), in addition to the
//    literal key; null-valued object fields count as absent for every map, not only schema objects.
//  - Map iteration order is the JSON order nlohmann keeps (sorted keys) or literal order; Go's is random.
//  - Cost is a step count, not cel-go's cost units; the per-call limit is 1e6 steps.
//  - Regular expressions: RE2 syntax without Unicode classes (\pL) and with ASCII-only case folding
//    (not std::regex, which backtracks exponentially and recurses per input character).
//  - Timestamps take IANA time zone names only for "UTC"; fixed offsets ("+05:30") work.
//  - quantity('Mi') parses as zero, as resource.ParseQuantity does (the library docs claim an error);
//    quantities beyond 4096 digits are refused; quantities render as plain decimals when returned as JSON.
//  - `sign` is accepted as a method as well as a function; ext strings `format` and `reverse`, ext lists,
//    math, the url/ip/cidr/semver/format/authz libraries are not provided; no protobuf message types
//    (`google.protobuf.Duration` as a type name, `Msg{...}` construction).
//  - Syntax error texts are our own (cel-go's come from ANTLR); positions and the issue layout match.
//  - Rule failures show the schema type as the value (`Invalid value: "object": ...`), as kube-apiserver
//    did up to 1.34; 1.35 omits it for objects and arrays and shows scalar values.
#include "sim/apiserver/cel.h"

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/apiserver/cel/internal.h"

namespace kubex::sim::cel {

using nlohmann::json;
using namespace internal;  // NOLINT(google-build-using-namespace): implementation file

namespace {

constexpr std::size_t kCacheCapacity = 4096;

std::expected<Value, std::string> from_json_impl(const json& j, int depth) {
  if (depth > kMaxValueDepth) {
    return std::unexpected("value nesting exceeds " + std::to_string(kMaxValueDepth) + " levels");
  }
  switch (j.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      return make_null();
    case json::value_t::boolean:
      return make_bool(j.get<bool>());
    case json::value_t::number_integer:
      return make_int(j.get<int64_t>());
    case json::value_t::number_unsigned: {
      auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return make_int(static_cast<int64_t>(u));
      return make_uint(u);
    }
    case json::value_t::number_float:
      return make_double(j.get<double>());
    case json::value_t::string:
      return make_string(j.get<std::string>());
    case json::value_t::binary: {
      const auto& b = j.get_binary();
      return make_bytes(std::string(b.begin(), b.end()));
    }
    case json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) {
        auto v = from_json_impl(e, depth + 1);
        if (!v) return v;
        items.push_back(std::move(*v));
      }
      return make_list(std::move(items));
    }
    case json::value_t::object: {
      MapData m;
      m.entries.reserve(j.size());
      for (const auto& [k, e] : j.items()) {
        if (e.is_null()) continue;  // null-valued fields are absent, as for Kubernetes schema objects
        auto v = from_json_impl(e, depth + 1);
        if (!v) return v;
        m.insert(make_string(k), std::move(*v));
      }
      return make_map(std::move(m));
    }
  }
  return make_null();
}

json to_json(const Value& v, int depth) {
  if (depth > 2 * kMaxValueDepth + kMaxAstDepth) return nullptr;
  switch (v.kind()) {
    case Kind::kNull:
      return nullptr;
    case Kind::kBool:
      return v.as_bool();
    case Kind::kInt:
      return v.as_int();
    case Kind::kUint:
      return v.as_uint();
    case Kind::kDouble:
      return v.as_double();
    case Kind::kString:
      return v.as_string();
    case Kind::kBytes: {
      static constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      const std::string& b = v.as_bytes();
      std::string out;
      for (std::size_t i = 0; i < b.size(); i += 3) {
        uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(b[i])) << 16;
        if (i + 1 < b.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(b[i + 1])) << 8;
        if (i + 2 < b.size()) n |= static_cast<unsigned char>(b[i + 2]);
        out += kB64[(n >> 18) & 63];
        out += kB64[(n >> 12) & 63];
        out += i + 1 < b.size() ? kB64[(n >> 6) & 63] : '=';
        out += i + 2 < b.size() ? kB64[n & 63] : '=';
      }
      return out;
    }
    case Kind::kList: {
      json out = json::array();
      for (const Value& e : v.as_list()) out.push_back(to_json(e, depth + 1));
      return out;
    }
    case Kind::kMap: {
      json out = json::object();
      for (const auto& [k, e] : v.as_map().entries) out[display(k)] = to_json(e, depth + 1);
      return out;
    }
    case Kind::kOptional:
      return v.as_optional().value ? to_json(*v.as_optional().value, depth + 1) : json(nullptr);
    default:
      return display(v);
  }
}

struct Cache {
  std::mutex mu;
  std::unordered_map<std::string, common::Result<std::shared_ptr<const Program>>> programs;
};

Cache& cache() {
  static Cache c;
  return c;
}

common::Result<std::shared_ptr<const Program>> compile_cached_impl(std::string_view expression) {
  Cache& c = cache();
  std::string key(expression);
  {
    std::lock_guard lock(c.mu);
    if (auto it = c.programs.find(key); it != c.programs.end()) return it->second;
  }
  auto compiled = compile(expression);
  std::lock_guard lock(c.mu);
  if (c.programs.size() >= kCacheCapacity) c.programs.clear();
  c.programs.emplace(std::move(key), compiled);
  return compiled;
}

}  // namespace

namespace internal {

std::expected<Value, std::string> from_json(const json& j) {
  return from_json_impl(j, 0);
}

common::Result<std::shared_ptr<const Program>> compile_cached(std::string_view expression) {
  return compile_cached_impl(expression);
}

Outcome run(const Program& p, const Value* self, const Value* old_self, int64_t cost_limit) {
  EvalContext ctx;
  ctx.self = self;
  ctx.old_self = old_self;
  ctx.cost_limit = cost_limit;
  Val v = eval(*p.root, ctx);
  return Outcome{std::move(v), ctx.cost};
}

std::string trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t\n\r\f\v");
  if (b == std::string_view::npos) return "";
  std::size_t e = s.find_last_not_of(" \t\n\r\f\v");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace internal

// ---------------------------------------------------------------------------------------------------------

static common::Result<std::shared_ptr<const Program>> compile_impl(std::string_view expression) {
  auto root = parse(expression);
  if (!root) return common::fail(format_issues(expression, root.error()));
  auto program = std::make_shared<Program>();
  program->source = std::string(expression);
  program->root = std::move(*root);
  auto issues = check(*program->root, &program->uses_old_self);
  if (!issues.empty()) return common::fail(format_issues(expression, issues));
  return std::shared_ptr<const Program>(std::move(program));
}

std::string_view source(const Program& program) {
  return program.source;
}

bool references_old_self(const Program& program) {
  return program.uses_old_self;
}

static common::Result<json> evaluate_impl(const Program& program, const json& self, const json* old_self,
                                          const EvalOptions& options) {
  auto self_v = from_json(self);
  if (!self_v) return common::fail(self_v.error());
  std::optional<Value> old_v;
  if (old_self != nullptr) {
    auto o = from_json(*old_self);
    if (!o) return common::fail(o.error());
    old_v = std::move(*o);
  }
  if (options.optional_old_self) old_v = make_opt(old_v);
  Outcome out = run(program, &*self_v, old_v ? &*old_v : nullptr, options.cost_limit);
  if (options.cost_used != nullptr) *options.cost_used = out.cost;
  if (!out.value) return common::fail(out.value.error().message);
  return to_json(*out.value, 0);
}

common::Result<bool> evaluate_rule(std::string_view rule, const json& self, const json* old_self,
                                   const EvalOptions& options) {
  auto program = compile_cached(rule);
  if (!program) return std::unexpected(program.error());
  auto result = evaluate(**program, self, old_self, options);
  if (!result) return std::unexpected(result.error());
  if (!result->is_boolean()) return common::fail("cel expression must evaluate to a bool");
  return result->get<bool>();
}

// The public entry points: nothing thrown inside (only std::bad_alloc is conceivable) crosses them.

common::Result<std::shared_ptr<const Program>> compile(std::string_view expression) {
  try {
    return compile_impl(expression);
  } catch (const std::exception& e) {
    return common::fail(std::string("internal error: ") + e.what());
  }
}

common::Result<json> evaluate(const Program& program, const json& self, const json* old_self,
                              const EvalOptions& options) {
  try {
    return evaluate_impl(program, self, old_self, options);
  } catch (const std::exception& e) {
    return common::fail(std::string("internal error: ") + e.what());
  }
}

}  // namespace kubex::sim::cel
