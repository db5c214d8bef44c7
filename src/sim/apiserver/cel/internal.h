// Internals of the CEL interpreter (cel.h): values, the syntax tree, and the entry points the parser,
// checker, evaluator and function library share. Only src/sim/apiserver/cel.cpp and cel/ include this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "common/result.h"
#include "common/utf8.h"

namespace kubex::sim::cel {

namespace internal {

struct Value;
struct MapData;
struct QuantityData;
struct Regex;

using StrPtr = std::shared_ptr<const std::string>;
using ListPtr = std::shared_ptr<const std::vector<Value>>;
using MapPtr = std::shared_ptr<const MapData>;
using QuantityPtr = std::shared_ptr<const QuantityData>;

struct NullV {};
struct StrV {
  StrPtr s;
};
struct BytesV {
  StrPtr s;
};
// google.protobuf.Duration as cel-go holds it: a Go time.Duration (int64 nanoseconds).
struct DurationV {
  int64_t nanos = 0;
};
// google.protobuf.Timestamp: seconds since the Unix epoch (UTC) plus nanoseconds; `offset` (seconds east of
// UTC) only affects how string() prints it.
struct TimestampV {
  int64_t seconds = 0;
  int32_t nanos = 0;
  int32_t offset = 0;
};
// A type value such as `int` or `google.protobuf.Duration`; names point at static storage.
struct TypeV {
  std::string_view name;
};
// optional(T): `value` is null for optional.none().
struct OptionalV {
  std::shared_ptr<const Value> value;
};

// Indexes into Value::v; keep in the variant's order.
enum class Kind : uint8_t {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kDuration,
  kTimestamp,
  kType,
  kQuantity,
  kOptional,
};

struct Value {
  std::variant<NullV, bool, int64_t, uint64_t, double, StrV, BytesV, ListPtr, MapPtr, DurationV, TimestampV,
               TypeV, QuantityPtr, OptionalV>
      v;

  Kind kind() const { return static_cast<Kind>(v.index()); }
  bool as_bool() const { return std::get<bool>(v); }
  int64_t as_int() const { return std::get<int64_t>(v); }
  uint64_t as_uint() const { return std::get<uint64_t>(v); }
  double as_double() const { return std::get<double>(v); }
  const std::string& as_string() const { return *std::get<StrV>(v).s; }
  const std::string& as_bytes() const { return *std::get<BytesV>(v).s; }
  const std::vector<Value>& as_list() const { return *std::get<ListPtr>(v); }
  const MapData& as_map() const { return *std::get<MapPtr>(v); }
  int64_t as_duration() const { return std::get<DurationV>(v).nanos; }
  const TimestampV& as_timestamp() const { return std::get<TimestampV>(v); }
  std::string_view as_type() const { return std::get<TypeV>(v).name; }
  const QuantityData& as_quantity() const { return *std::get<QuantityPtr>(v); }
  const OptionalV& as_optional() const { return std::get<OptionalV>(v); }
};

Value make_null();
Value make_bool(bool b);
Value make_int(int64_t i);
Value make_uint(uint64_t u);
Value make_double(double d);
Value make_string(std::string s);
Value make_bytes(std::string s);
Value make_list(std::vector<Value> items);
Value make_duration(int64_t nanos);
Value make_type(std::string_view static_name);
Value make_opt(std::optional<Value> v);

// Map keys may be int, uint, bool or string. Lookups use CEL's heterogeneous numeric equality (1 == 1u
// == 1.0).
struct MapData {
  std::vector<std::pair<Value, Value>> entries;  // insertion order (JSON objects: the order nlohmann keeps)
  std::unordered_map<std::string, std::size_t> index;

  const Value* find(const Value& key) const;
  // False if the key already exists.
  bool insert(Value key, Value value);
};
// Index key for a map key value; nullopt for types that cannot be map keys (doubles qualify when integral).
std::optional<std::string> map_key_repr(const Value& key);
bool is_valid_map_key(const Value& key);
Value make_map(MapData data);

// The static CEL type name of a value ("int", "list", "google.protobuf.Duration", "kubernetes.Quantity",
// ...).
std::string_view type_name(const Value& v);
// A value as Go's %v would show it in an error message ("abc", 12, [1, 2], {a: 1}).
std::string display(const Value& v);

// ---------------------------------------------------------------------------------------------------------
// Errors are values while evaluating: && / || / all / exists may absorb them.
enum class ErrKind : uint8_t {
  kGeneric,
  kNoSuchOverload,
  kCostExceeded,  // fatal: never absorbed, stops evaluation
};
struct Err {
  std::string message;
  ErrKind kind = ErrKind::kGeneric;
  bool fatal() const { return kind == ErrKind::kCostExceeded; }
};
using Val = std::expected<Value, Err>;

inline std::unexpected<Err> error(std::string message) {
  return std::unexpected<Err>(Err{std::move(message)});
}
inline std::unexpected<Err> no_overload() {
  return std::unexpected<Err>(Err{"no such overload", ErrKind::kNoSuchOverload});
}
inline constexpr std::string_view kCostExceededMessage = "operation cancelled: actual cost limit exceeded";

// ---------------------------------------------------------------------------------------------------------
// Syntax tree.

enum class NodeOp : uint8_t {
  kLiteral,        // literal
  kIdent,          // name (resolved into `ref`)
  kSelect,         // args[0].name
  kOptSelect,      // args[0].?name
  kIndex,          // args[0][args[1]]
  kOptIndex,       // args[0][?args[1]]
  kCall,           // name(args...) or args[0].name(args[1..]) when `member`
  kList,           // [args...]; optional_entries marks `?e` elements
  kMap,            // {args[0]: args[1], ...}; optional_entries marks `?k: v` entries (per pair)
  kAnd,            // args[0] && args[1]
  kOr,             // args[0] || args[1]
  kTernary,        // args[0] ? args[1] : args[2]
  kHas,            // has(args[0].name): args[0] is the operand, name the field
  kComprehension,  // macro over args[0] (range) with args[1..] per `macro`
};

enum class Macro : uint8_t {
  kAll,                  // r.all(x, p)
  kExists,               // r.exists(x, p)
  kExistsOne,            // r.exists_one(x, p) / r.existsOne(x, p)
  kMap,                  // r.map(x, t)
  kMapFilter,            // r.map(x, p, t)
  kFilter,               // r.filter(x, p)
  kAll2,                 // r.all(i, v, p)           (two-variable comprehensions)
  kExists2,              // r.exists(i, v, p)
  kExistsOne2,           // r.existsOne(i, v, p)
  kTransformList,        // r.transformList(i, v, t)
  kTransformListFilter,  // r.transformList(i, v, p, t)
  kTransformMap,         // r.transformMap(k, v, t)
  kTransformMapFilter,   // r.transformMap(k, v, p, t)
};

enum class IdentRef : uint8_t { kUnresolved, kSelf, kOldSelf, kLocal, kType };

// Built-in functions and operators; the checker resolves call names to these.
enum class Fn : uint16_t {
  kUnknown,
  // operators
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kNeg,
  kNot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIn,
  // core
  kSize,
  kInt,
  kUint,
  kDouble,
  kString,
  kBool,
  kBytes,
  kDyn,
  kType,
  kDuration,
  kTimestamp,
  kMatches,
  kContains,
  kStartsWith,
  kEndsWith,
  // time accessors
  kGetFullYear,
  kGetMonth,
  kGetDayOfYear,
  kGetDayOfMonth,
  kGetDate,
  kGetDayOfWeek,
  kGetHours,
  kGetMinutes,
  kGetSeconds,
  kGetMilliseconds,
  // cel-go ext strings (version 2)
  kCharAt,
  kIndexOf,  // strings, and the Kubernetes lists library on lists
  kLastIndexOf,
  kLowerAscii,
  kUpperAscii,
  kReplace,
  kSplit,
  kSubstring,
  kTrim,
  kJoin,
  kQuote,
  // Kubernetes regex library
  kFind,
  kFindAll,
  // Kubernetes lists library
  kIsSorted,
  kSum,
  kMin,
  kMax,
  // cel-go ext sets
  kSetsContains,
  kSetsEquivalent,
  kSetsIntersects,
  // Kubernetes quantity library
  kQuantity,
  kIsQuantity,
  kSign,
  kIsGreaterThan,
  kIsLessThan,
  kCompareTo,
  kAsApproximateFloat,
  kAsInteger,
  kIsInteger,
  kQuantityAdd,
  kQuantitySub,
  // optional types
  kOptionalOf,
  kOptionalNone,
  kOptionalOfNonZero,
  kHasValue,
  kOptValue,
  kOrValue,
  kOr,
};

// getFullYear() ... getMilliseconds(): the time accessors (contiguous in Fn).
inline bool is_time_accessor(Fn fn) {
  return fn >= Fn::kGetFullYear && fn <= Fn::kGetMilliseconds;
}

struct Node {
  NodeOp op = NodeOp::kLiteral;
  int32_t pos = 0;    // byte offset into the source, for messages
  int32_t depth = 1;  // height of the subtree (bounded by kMaxAstDepth)
  Value literal;
  std::string name;   // identifier, field, function, or first iteration variable
  std::string name2;  // second iteration variable of two-variable comprehensions
  Fn fn = Fn::kUnknown;
  Macro macro = Macro::kAll;
  IdentRef ref = IdentRef::kUnresolved;
  bool member = false;  // receiver-style call: args[0] is the receiver
  std::vector<bool> optional_entries;
  std::vector<std::unique_ptr<Node>> args;
  std::shared_ptr<const Regex> regex;  // precompiled literal pattern (matches/find/findAll)
};

// A problem found while compiling, at a byte offset of the source.
struct Issue {
  int32_t pos = 0;
  std::string message;
};

// Tokens (cel/lexer.cpp).
enum class Tok : uint8_t {
  kEof,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kIdent,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kBang,
  kLt,
  kLe,
  kGt,
  kGe,
  kEqEq,
  kNe,
  kAnd,
  kOr,
};

struct Token {
  Tok tok = Tok::kEof;
  int32_t pos = 0;
  std::string text;  // identifier name, decoded string/bytes literal, or the number's source text
  uint64_t u = 0;    // integer magnitude
  double d = 0;
};

// Splits `source` into tokens (ending with kEof); false with `issue` set on the first lexical error.
bool tokenize(std::string_view source, std::vector<Token>& out, Issue& issue);
// "identifier 'x'", "end of input", "'+'" — for syntax errors.
std::string describe(const Token& t);

// Parses `source` (cel/parser.cpp). Depth of the tree is capped (kMaxAstDepth).
std::expected<std::unique_ptr<Node>, std::vector<Issue>> parse(std::string_view source);
// Resolves identifiers and functions, validates literal arguments (cel/checker.cpp).
std::vector<Issue> check(Node& root, bool* uses_old_self);
// The result type when it is evident without a schema (literals, operators, known functions), else nullopt.
std::optional<Kind> static_result_kind(const Node& root);
// "ERROR: <input>:1:5: message\n | source line\n | ....^", one block per issue, joined by newlines.
std::string format_issues(std::string_view source, const std::vector<Issue>& issues);

inline constexpr int kMaxAstDepth = 100;
inline constexpr int kMaxValueDepth = 256;

// What the function table knows about a name (cel/functions.cpp).
struct FunctionInfo {
  Fn fn = Fn::kUnknown;
  bool global = false;  // callable as name(args)
  bool member = false;  // callable as target.name(args)
  int min_args = 0;     // including the receiver for member calls
  int max_args = 0;
};
// Looks up `name` (namespaced names such as "optional.of" or "sets.contains" included).
const FunctionInfo* lookup_function(std::string_view name);

// ---------------------------------------------------------------------------------------------------------
// Evaluation.

struct EvalContext {
  const Value* self = nullptr;
  const Value* old_self = nullptr;  // nullptr: unbound
  std::vector<std::pair<const std::string*, Value>> locals;
  int64_t cost = 0;
  int64_t cost_limit = 0;

  // Adds `n` to the cost; false once the limit is passed.
  bool charge(int64_t n) {
    cost += n;
    return cost <= cost_limit;
  }
};

Val eval(const Node& node, EvalContext& ctx);
// Calls a strict built-in on evaluated arguments (receiver first for member calls).
Val call_function(const Node& node, std::vector<Value>& args, EvalContext& ctx);
// Conversions and time accessors (cel/convert.cpp); call_function delegates to it.
Val convert_function(Fn fn, const std::vector<Value>& args);
// A timestamp from seconds and (possibly out of range) nanoseconds; "timestamp overflow" outside 0001-9999.
Val make_timestamp(int64_t seconds, int64_t nanos, int32_t offset);
// The string, regex, list and set functions (cel/strings.cpp); call_function delegates to it.
Val call_collection_function(const Node& node, std::vector<Value>& args, EvalContext& ctx);

// CEL heterogeneous equality. Errors only for kubernetes.Quantity against another non-null type.
std::expected<bool, Err> equals(const Value& a, const Value& b);
// Ordering: -1, 0, 1; no_such_overload for incomparable types; an error for NaN.
std::expected<int, Err> compare(const Value& a, const Value& b);

// Number of Unicode code points in UTF-8 text (invalid bytes count as one each).
inline int64_t utf8_length(std::string_view s) {
  return static_cast<int64_t>(common::utf8_count(s));
}
using common::utf8_append;
using common::utf8_next;

// Go-compatible formatting used by string() (doubles: go_float): strconv 'f' for durations, RFC 3339 nano.
std::string format_duration(int64_t nanos);
std::string format_timestamp(const TimestampV& t);
// Go time.ParseDuration; nullopt when invalid or out of range.
std::optional<int64_t> parse_duration(std::string_view s);
// Go time.Parse(time.RFC3339, s), limited to years 0001-9999.
std::optional<TimestampV> parse_rfc3339(std::string_view s);

inline constexpr int64_t kMinUnixSeconds = -62135596800;  // 0001-01-01T00:00:00Z
inline constexpr int64_t kMaxUnixSeconds = 253402300799;  // 9999-12-31T23:59:59Z

struct CivilTime {
  int64_t year = 1970;
  int month = 1;  // 1-12
  int day = 1;    // 1-31
  int hour = 0;
  int minute = 0;
  int second = 0;
  int32_t nanos = 0;
  int weekday = 4;  // 0 = Sunday
  int yday = 0;     // 0-based day of the year
};
// The calendar fields of a timestamp at `offset` seconds east of UTC.
CivilTime to_civil(int64_t seconds, int32_t nanos, int32_t offset);

// ---------------------------------------------------------------------------------------------------------
// kubernetes.Quantity (resource.Quantity semantics; cel/quantity.cpp).

// A decimal: sign * digits * 10^-scale (inf.Dec layout: digits may carry trailing zeros).
struct BigDecimal {
  bool negative = false;
  std::string digits;  // no leading zeros; empty for zero
  int64_t scale = 0;
};
// Mirrors resource.Quantity's two representations, because asInteger/isInteger depend on which one a value
// uses: an int64 amount (value * 10^scale) when the fast path applies, an arbitrary decimal otherwise.
struct QuantityData {
  bool small = true;
  int64_t value = 0;
  int32_t scale = 0;
  BigDecimal dec;
};
std::expected<QuantityData, std::string> parse_quantity(std::string_view s);
int quantity_compare(const QuantityData& a, const QuantityData& b);
std::expected<QuantityData, std::string> quantity_add(const QuantityData& a, const QuantityData& b,
                                                      bool subtract);
QuantityData quantity_from_int(int64_t v);
std::optional<int64_t> quantity_as_int64(const QuantityData& q);
double quantity_as_approximate_float(const QuantityData& q);
int quantity_sign(const QuantityData& q);
// Plain decimal rendering ("0.5", "1536"), used when a quantity leaves CEL as JSON.
std::string quantity_to_string(const QuantityData& q);

// ---------------------------------------------------------------------------------------------------------
// RE2-style regular expressions on a Pike VM (linear time, no backtracking; cel/regex.cpp).

// The parsed form of a pattern (cel/regex_parse.cpp), compiled to a program by cel/regex.cpp.
using CharRanges = std::vector<std::pair<char32_t, char32_t>>;

enum class RegexAssert : uint8_t {
  kBeginText,
  kEndText,
  kBeginLine,
  kEndLine,
  kWordBoundary,
  kNotWordBoundary
};

struct RegexNode {
  enum class T : uint8_t { kEmpty, kLiteral, kAny, kAnyNotNL, kClass, kAssert, kConcat, kAlt, kRepeat };
  T t = T::kEmpty;
  char32_t c = 0;
  bool fold = false;
  CharRanges ranges;
  bool negated = false;
  RegexAssert assert_kind = RegexAssert::kBeginText;
  int min = 0, max = 0;  // max -1: unbounded
  bool greedy = true;
  std::vector<RegexNode> kids;
};

// Parses RE2 syntax; errors read like Go's.
std::expected<RegexNode, std::string> parse_regex(std::string_view pattern);

// ASCII helpers shared by the regex parser and VM (RE2's \w, \b and (?i) are ASCII-only here).
inline char32_t ascii_lower(char32_t c) {
  return c >= 'A' && c <= 'Z' ? c + 32 : c;
}
inline char32_t ascii_upper(char32_t c) {
  return c >= 'a' && c <= 'z' ? c - 32 : c;
}
inline bool is_word_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Compiles an RE2-syntax pattern; the error reads like Go's: "error parsing regexp: missing closing ): `(a`".
std::expected<std::shared_ptr<const Regex>, std::string> compile_regex(std::string_view pattern);
// Leftmost-first match at or after byte offset `from` of UTF-8 `text` (assertions see the text before
// `from`); [begin, end) byte offsets. `steps` is increased by the work done; the search gives up (nullopt)
// once it passes `step_limit`, so callers compare the two to tell "no match" from "too expensive".
std::optional<std::pair<std::size_t, std::size_t>> regex_search(const Regex& re, std::string_view text,
                                                                std::size_t from, int64_t& steps,
                                                                int64_t step_limit);

}  // namespace internal

// The compiled form of one expression. Immutable once built; evaluating it from several threads is safe.
class Program {
 public:
  std::string source;
  std::unique_ptr<internal::Node> root;
  bool uses_old_self = false;
};

namespace internal {

// Shared by cel.cpp and cel/rules.cpp.

// JSON to CEL values; fails on nesting deeper than kMaxValueDepth.
std::expected<Value, std::string> from_json(const nlohmann::json& j);
// compile() through a process-wide cache keyed by expression text.
common::Result<std::shared_ptr<const Program>> compile_cached(std::string_view expression);
struct Outcome {
  Val value;
  int64_t cost = 0;
};
Outcome run(const Program& p, const Value* self, const Value* old_self, int64_t cost_limit);
// ASCII whitespace trimmed from both ends (Go strings.TrimSpace for the inputs that matter here).
std::string trim(std::string_view s);

}  // namespace internal

}  // namespace kubex::sim::cel
