// CEL interpreter for x-kubernetes-validations (API-2: CRD schemas refuse invalid objects while the webhook
// is down). Each case cites the CEL language definition (cel-spec doc/langdef.md), cel-go's runtime, or the
// Kubernetes CEL libraries / apiextensions-apiserver behaviour it checks.
#include "sim/apiserver/cel.h"
#include "sim/apiserver/custom.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace kubex::sim::cel {
namespace {

using nlohmann::json;

struct Case {
  const char* expr;
  const char* self;  // JSON; nullptr for {}
  const char*
      want;  // JSON of the result, or "!<exact error>" / "~<error substring>" / "#<compile error substring>"
  const char* why;
};

std::string run_case(const Case& c) {
  auto program = compile(c.expr);
  if (!program) return "#" + program.error().message;
  json self = c.self ? json::parse(c.self) : json::object();
  auto r = evaluate(**program, self, nullptr);
  if (!r) return "!" + r.error().message;
  return r->dump();
}

void check_cases(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    std::string got = run_case(c);
    std::string want = c.want;
    if (want[0] == '~' || want[0] == '#') {
      std::string needle = want.substr(1);
      EXPECT_TRUE((got[0] == (want[0] == '~' ? '!' : '#')) && got.find(needle) != std::string::npos)
          << c.expr << " (" << c.why << ")\n  got:  " << got << "\n  want: " << want;
    } else if (want[0] == '!') {
      EXPECT_EQ(got, want) << c.expr << " (" << c.why << ")";
    } else {
      EXPECT_EQ(got, json::parse(want).dump()) << c.expr << " (" << c.why << ")";
    }
  }
}

TEST(CelLiterals, NumbersStringsAndBytes) {
  check_cases({
      {"42", nullptr, "42", "langdef: INT_LIT"},
      {"0x1F", nullptr, "31", "langdef: hex INT_LIT"},
      {"7u", nullptr, "7", "langdef: UINT_LIT is a distinct type"},
      {"type(7u) == uint", nullptr, "true", "langdef: 7u is a uint, not an int"},
      {"1.5e2", nullptr, "150.0", "langdef: FLOAT_LIT with exponent"},
      {".5", nullptr, "0.5", "langdef: FLOAT_LIT may omit leading digits"},
      {"-9223372036854775808", nullptr, "-9223372036854775808",
       "cel-go: negative literal folding reaches INT64_MIN"},
      {"9223372036854775808", nullptr, "#invalid int literal", "langdef: int literal out of range"},
      {"18446744073709551615u", nullptr, "18446744073709551615", "langdef: UINT64_MAX as uint literal"},
      {"'it\\'s'", nullptr, "\"it's\"", "langdef: escaped quote"},
      {"\"\\x41\\u00e9\\U0001F600\\101\"", nullptr, "\"Aé😀A\"", "langdef: \\x, \\u, \\U and octal escapes"},
      {"r'\\d+'", nullptr, "\"\\\\d+\"", "langdef: raw strings keep backslashes"},
      {"'''a'b\nc'''", nullptr, "\"a'b\\nc\"", "langdef: triple-quoted strings hold quotes and newlines"},
      {"'\\s'", nullptr, "#invalid escape sequence", "langdef: \\s is not a valid escape"},
      {"'\\uD83D'", nullptr, "#invalid unicode code point", "langdef: surrogate code points are rejected"},
      {"b'\\xff'.size()", nullptr, "1", "langdef: \\xff in bytes is one octet"},
      {"'\\xff'.size()", nullptr, "1", "langdef: \\xff in a string is one code point (U+00FF)"},
      {"b'abc' == bytes('abc')", nullptr, "true", "langdef: bytes literal vs bytes() conversion"},
      {"null", nullptr, "null", "langdef: NULL_LIT"},
      {"[1, 2, 3,]", nullptr, "[1,2,3]", "langdef: trailing comma in list literal"},
      {"{'a': 1, 'b': 2,}.b", nullptr, "2", "langdef: map literal with trailing comma"},
      {"// comment\n1 // trailing", nullptr, "1", "langdef: COMMENT"},
  });
}

TEST(CelParser, ErrorsCarryLineColumnAndCaret) {
  // cel-go formats issues as "ERROR: <input>:line:column: message" plus the source line and a caret.
  auto p = compile("self.");
  ASSERT_FALSE(p);
  EXPECT_EQ(
      p.error().message,
      "ERROR: <input>:1:6: Syntax error: unexpected end of input, expected identifier\n | self.\n | .....^");
  auto q = compile("self.a &&\n  self.b +* 1");
  ASSERT_FALSE(q);
  EXPECT_NE(q.error().message.find("ERROR: <input>:2:11:"), std::string::npos) << q.error().message;
  EXPECT_NE(q.error().message.find("\n |   self.b +* 1\n | ..........^"), std::string::npos)
      << q.error().message;

  check_cases({
      {"1 +", nullptr, "#<input>:1:4: Syntax error: unexpected end of input", "missing operand"},
      {"(1", nullptr, "#expected ')'", "unbalanced parenthesis"},
      {"a = 1", nullptr, "#token recognition error at: '='", "single '=' is not an operator"},
      {"'abc", nullptr, "#unterminated string literal", "unterminated string"},
      {"for", nullptr, "#reserved identifier: for", "langdef: RESERVED words cannot be identifiers"},
      {"self.for", "{\"for\": 1}", "1", "langdef: reserved words are fine as selectors"},
      {"undeclared", nullptr, "#undeclared reference to 'undeclared' (in container '')",
       "cel-go checker: unknown identifiers are compile errors"},
      {"nosuch(1)", nullptr, "#undeclared reference to 'nosuch'", "unknown functions are compile errors"},
      {"'a'.contains()", nullptr, "#found no matching overload for 'contains'", "wrong arity"},
      {"has(self)", nullptr, "#invalid argument to has() macro", "langdef: has() needs a field selection"},
      {"[1].all(1, true)", nullptr, "#argument must be a simple name", "macro variables are identifiers"},
      {"duration('1d')", nullptr, "#invalid duration argument",
       "k8s: cel.ValidateDurationLiterals (no 'd' unit in Go)"},
      {"timestamp('2023-13-01T00:00:00Z')", nullptr, "#invalid timestamp argument",
       "k8s: cel.ValidateTimestampLiterals"},
      {"'a'.matches('(')", nullptr, "#invalid matches argument", "k8s: cel.ValidateRegexLiterals"},
      {"[1, 'a']", nullptr, "#expected type 'int' but found 'string'",
       "k8s: ValidateHomogeneousAggregateLiterals"},
  });
}

TEST(CelArithmetic, TypesOverflowAndDivision) {
  check_cases({
      {"1 + 2 * 3 - 4 / 2", nullptr, "5", "langdef: precedence of * / over + -"},
      {"7 % 3", nullptr, "1", "langdef: int modulus"},
      {"-7 / 2", nullptr, "-3", "int division truncates toward zero"},
      {"5u - 3u", nullptr, "2", "uint arithmetic"},
      {"3u - 5u", nullptr, "!unsigned integer overflow", "cel-go: uint underflow is an error"},
      {"9223372036854775807 + 1", nullptr, "!integer overflow", "langdef: overflow is an error"},
      {"-9223372036854775808 - 1", nullptr, "!integer overflow", "langdef: overflow is an error"},
      {"4611686018427387904 * 2", nullptr, "!integer overflow", "langdef: multiplication overflow"},
      {"-(-9223372036854775808)", nullptr, "!integer overflow", "negating INT64_MIN overflows"},
      {"1 / 0", nullptr, "!division by zero", "cel-go: division by zero"},
      {"1 % 0", nullptr, "!modulus by zero", "cel-go: modulus by zero"},
      {"1.0 / 0.0", nullptr, "null", "IEEE: double division by zero is +Inf (JSON null)"},
      {"1 + 1.0", nullptr, "!no such overload", "langdef: no implicit int/double arithmetic"},
      {"1 + 1u", nullptr, "!no such overload", "langdef: 1 + 1u fails to dispatch"},
      {"uint(1) + 1u", nullptr, "2", "langdef: explicit conversion"},
      {"'ab' + 'cd'", nullptr, "\"abcd\"", "string concatenation"},
      {"[1] + [2, 3]", nullptr, "[1,2,3]", "list concatenation"},
      {"2.5 * 2.0", nullptr, "5.0", "double multiplication"},
  });
}

TEST(CelEquality, HeterogeneousNumbersAndAggregates) {
  check_cases({
      {"1 == 1.0", nullptr, "true", "langdef: numeric equality across types"},
      {"1u == 1", nullptr, "true", "langdef: numeric equality across types"},
      {"9007199254740993 == 9007199254740992.0", nullptr, "false",
       "exact int/double comparison, no rounding"},
      {"1 < 1.5 && 2u > 1 && -1 < 1u", nullptr, "true", "k8s: CrossTypeNumericComparisons"},
      {"'a' == 1", nullptr, "false", "langdef: different types are unequal, not an error"},
      {"null == self.x", "{\"x\": 1}", "false", "comparison with null"},
      {"'a' < 1", nullptr, "!no such overload", "ordering needs comparable types"},
      {"[1, 2] == dyn([1.0, 2.0])", nullptr, "true",
       "langdef: list equality is elementwise, numbers across types"},
      {"{'a': 1} == {'a': 1u}", nullptr, "true", "langdef: map equality by entries"},
      {"{'a': 1} == {'b': 1}", nullptr, "false", "different keys"},
      {"'abc' < 'abd' && b'a' < b'b'", nullptr, "true", "lexicographic ordering"},
      {"true > false", nullptr, "true", "bool ordering"},
      {"double('NaN') == double('NaN')", nullptr, "false", "langdef: NaN compares unequal"},
      {"double('NaN') < 1.0", nullptr, "!NaN values cannot be ordered", "cel-go: NaN ordering error"},
      {"type(1) == int && type('a') == string && type(type(1)) == type", nullptr, "true",
       "langdef: type values"},
  });
}

TEST(CelLogic, CommutativeErrorAbsorption) {
  check_cases({
      {"false && 1 / 0 == 1", nullptr, "false", "langdef: false && error is false"},
      {"1 / 0 == 1 && false", nullptr, "false", "langdef: error && false is false (commutative)"},
      {"true || 1 / 0 == 1", nullptr, "true", "langdef: true || error is true"},
      {"1 / 0 == 1 || true", nullptr, "true", "langdef: error || true is true (commutative)"},
      {"1 / 0 == 1 && true", nullptr, "!division by zero", "langdef: error && true is error"},
      {"false || 1 / 0 == 1", nullptr, "!division by zero", "langdef: false || error is error"},
      {"self.missing == 1 || true", nullptr, "true", "missing field error absorbed"},
      {"1 && false", nullptr, "false", "cel-go: non-bool operand absorbed by a decisive false"},
      {"1 && true", nullptr, "!no such overload", "cel-go: non-bool operand"},
      {"!true", nullptr, "false", "logical not"},
      {"!1", nullptr, "!no such overload", "logical not needs a bool"},
      {"true ? 1 : 1 / 0", nullptr, "1", "langdef: the untaken branch is not evaluated"},
      {"1 ? 1 : 2", nullptr, "!no such overload", "ternary condition must be bool"},
      {"1 / 0 == 1 ? 1 : 2", nullptr, "!division by zero", "ternary propagates condition errors"},
  });
}

TEST(CelFields, SelectionPresenceAndIndexing) {
  const char* obj = R"j({"spec": {"a": 1, "list": [10, 20], "labels": {"x-y": "z"}, "nil": null,
                        "x-kubernetes-foo": 5, "namespace": "ns", "m": {"1": "one"}}})j";
  check_cases({
      {"self.spec.a", obj, "1", "langdef: e.f on a map is e['f']"},
      {"self.spec.b", obj, "!no such key: b", "cel-go: missing field is `no such key`"},
      {"has(self.spec.a)", obj, "true", "langdef: has() tests presence"},
      {"has(self.spec.b)", obj, "false", "langdef: has() on a missing key"},
      {"has(self.spec.nil)", obj, "false", "k8s: null-valued object fields are absent"},
      {"has(self.nope.b)", obj, "!no such key: nope", "has() still evaluates its operand"},
      {"self.spec.list[1]", obj, "20", "list indexing"},
      {"self.spec.list[2]", obj, "!index out of bounds: 2", "cel-go: out of range index"},
      {"self.spec.list[-1]", obj, "!index out of bounds: -1", "negative index"},
      {"self.spec.list['a']", obj, "!unsupported index type 'string' in list", "cel-go: list index type"},
      {"self.spec.list[1.0]", obj, "20", "cel-go: integral double index"},
      {"self.spec.labels['x-y']", obj, "\"z\"", "map indexing with any string key"},
      {"self.spec.x__dash__kubernetes__dash__foo", obj, "5", "k8s escaping: '-' is __dash__"},
      {"self.spec.__namespace__", obj, "\"ns\"", "k8s escaping: reserved words are __word__"},
      {"self.spec.labels['nope']", obj, "!no such key: nope", "missing map key"},
      {"self.spec.a.b", obj, "!no such key: b", "selecting a field on a number"},
      {"self.spec.?b.orValue(7)", obj, "7", "k8s 1.29+: optional field selection"},
      {"self.spec.?a.value()", obj, "1", "optional field selection present"},
      {"self.spec.list[?5].hasValue()", obj, "false", "optional index"},
      {"optional.none().value()", nullptr, "!optional.none() dereference", "cel-go optional dereference"},
      {"optional.of(1).or(optional.of(2)).value()", nullptr, "1", "optional.or"},
      {"[?optional.none(), ?optional.of(1), 2]", nullptr, "[1,2]", "optional list elements"},
      {"{?'a': optional.none(), 'b': 1}", nullptr, "{\"b\":1}", "optional map entries"},
      {"optional.ofNonZeroValue('').hasValue()", nullptr, "false", "optional.ofNonZeroValue"},
  });
}

TEST(CelMacros, ComprehensionsOnListsAndMaps) {
  const char* obj = R"j({"values": ["a", "bb", ""], "m": {"a": 1, "b": 2}, "n": [0, 1, 2]})j";
  check_cases({
      {"self.values.all(v, v.size() > 0)", obj, "false", "langdef: all"},
      {"self.values.exists(v, v == 'bb')", obj, "true", "langdef: exists"},
      {"self.values.exists_one(v, v.size() == 1)", obj, "true", "langdef: exists_one"},
      {"self.n.exists_one(v, v > 0)", obj, "false", "langdef: exists_one needs exactly one"},
      {"self.values.map(v, v + '!')", obj, "[\"a!\",\"bb!\",\"!\"]", "langdef: map"},
      {"self.n.map(x, x > 0, x * 10)", obj, "[10,20]", "langdef: map with filter"},
      {"self.n.filter(x, x % 2 == 0)", obj, "[0,2]", "langdef: filter"},
      {"self.m.all(k, k.size() == 1)", obj, "true", "langdef: macros on maps range over keys"},
      {"self.m.map(k, self.m[k] * 2)", obj, "[2,4]", "langdef: map over map keys"},
      {"self.m.filter(k, self.m[k] > 1)", obj, "[\"b\"]", "langdef: filter over map keys"},
      {"[0, 1].all(x, 1 / x > 0)", obj, "!division by zero",
       "langdef: all with an error and no false is error"},
      {"self.n.all(x, x > 0 && 1 / x > 0)", obj, "false", "langdef: false absorbs errors in all"},
      {"self.n.exists(x, 1 / x == 1)", obj, "true", "langdef: true absorbs errors in exists"},
      {"self.n.exists_one(x, 1 / x == 1)", obj, "!division by zero", "langdef: exists_one propagates errors"},
      {"self.n.map(x, 1 / x)", obj, "!division by zero", "langdef: map propagates errors"},
      {"[1, 2].all(x, [3].all(x, x == 3))", nullptr, "true", "langdef: inner variables shadow outer ones"},
      {"self.n.all(i, v, v == i)", obj, "true", "k8s 1.32+: two-variable all over (index, value)"},
      {"self.m.exists(k, v, k == 'b' && v == 2)", obj, "true", "two-variable exists over (key, value)"},
      {"self.m.transformMap(k, v, v * 10)", obj, "{\"a\":10,\"b\":20}", "ext: transformMap"},
      {"self.n.transformList(i, v, i + v)", obj, "[0,2,4]", "ext: transformList"},
      {"1.all(x, true)", nullptr, "!no such overload", "comprehension range must be a list or map"},
  });
}

TEST(CelOperators, InForListsAndMaps) {
  check_cases({
      {"2 in [1, 2, 3]", nullptr, "true", "langdef: list membership"},
      {"4 in [1, 2, 3]", nullptr, "false", "langdef: list membership"},
      {"2.0 in [1, 2]", nullptr, "true", "langdef: membership uses heterogeneous equality"},
      {"'a' in {'a': 1}", nullptr, "true", "langdef: map key membership"},
      {"'b' in {'a': 1}", nullptr, "false", "langdef: map key membership"},
      {"1.0 in {1: 'x'}", nullptr, "true", "langdef: numeric map keys compare across types"},
      {"'x' in self.labels", R"j({"labels": {"x": "1"}})j", "true", "membership on a JSON object"},
      {"1 in 1", nullptr, "!no such overload", "in needs a list or map"},
  });
}

TEST(CelStrings, StandardAndExtensionFunctions) {
  check_cases({
      {"'héllo'.size()", nullptr, "5", "langdef: size counts code points"},
      {"size('😀')", nullptr, "1", "langdef: size of one astral code point"},
      {"'hello world'.contains('o w')", nullptr, "true", "langdef: contains"},
      {"'foobar'.startsWith('foo') && 'foobar'.endsWith('bar')", nullptr, "true",
       "langdef: startsWith/endsWith"},
      {"'foobar'.matches('^f.+r$')", nullptr, "true", "langdef: matches (RE2)"},
      {"matches('foobar', 'oba')", nullptr, "true", "langdef: matches is unanchored"},
      {"'Ab1'.matches('(?i)^ab\\\\d$')", nullptr, "true", "RE2 flags and \\d"},
      {"'x'.matches(self.re)", R"j({"re": "("})j", "~error parsing regexp: missing closing )",
       "runtime bad regex"},
      {"'ABc'.lowerAscii() + 'abC'.upperAscii()", nullptr, "\"abcABC\"", "ext strings: ASCII case"},
      {"' \\t x \\n'.trim()", nullptr, "\"x\"", "ext strings: trim (Go TrimSpace)"},
      {"'a,b,,c'.split(',')", nullptr, "[\"a\",\"b\",\"\",\"c\"]", "ext strings: split"},
      {"'a,b,c'.split(',', 2)", nullptr, "[\"a\",\"b,c\"]", "ext strings: split with limit"},
      {"['a', 'b'].join('-')", nullptr, "\"a-b\"", "ext strings: join"},
      {"['a', 1].join()", nullptr, "#expected type 'string' but found 'int'",
       "join needs strings (literal check)"},
      {"self.l.join()", R"j({"l": ["a", 1]})j", "!join: invalid input: 1",
       "ext strings: join on non-strings"},
      {"'hello'.indexOf('l') == 2 && 'hello'.lastIndexOf('l') == 3", nullptr, "true", "ext strings: indexOf"},
      {"'héllo'.indexOf('l')", nullptr, "2", "ext strings: indexOf counts code points"},
      {"'hello'.indexOf('l', 3)", nullptr, "3", "ext strings: indexOf with offset"},
      {"'hello'.indexOf('l', -1)", nullptr, "!index out of range: -1", "ext strings: negative offset"},
      {"'aaa'.replace('a', 'b')", nullptr, "\"bbb\"", "ext strings: replace"},
      {"'aaa'.replace('a', 'b', 1)", nullptr, "\"baa\"", "ext strings: replace with limit"},
      {"'héllo'.substring(1, 3)", nullptr, "\"él\"", "ext strings: substring on code points"},
      {"'abc'.substring(2, 1)", nullptr, "!invalid substring range. start: 2, end: 1",
       "ext strings: bad range"},
      {"'abc'.substring(4)", nullptr, "!index out of range: 4", "ext strings: start past the end"},
      {"'abc'.charAt(1)", nullptr, "\"b\"", "ext strings: charAt"},
      {"strings.quote('a\"b\\n')", nullptr, "\"\\\"a\\\\\\\"b\\\\n\\\"\"", "ext strings: strings.quote"},
      {"'abc 123'.find('[0-9]+')", nullptr, "\"123\"", "k8s regex library: find"},
      {"'abc 123'.find('[0-9]*')", nullptr, "\"\"", "k8s regex: leftmost match may be empty (Go semantics)"},
      {"'1, 2, 3, 4'.findAll('[0-9]*')", nullptr, "[\"1\",\"\",\"2\",\"\",\"3\",\"\",\"4\"]",
       "k8s regex: Go FindAllString skips empty matches right after a match"},
      {"'123 abc 456'.findAll('[0-9]+', 1)", nullptr, "[\"123\"]", "k8s regex: findAll with a limit"},
      {"'abc'.findAll('x')", nullptr, "[]", "k8s regex: no matches"},
  });
}

TEST(CelConversions, TypeConversionFunctions) {
  check_cases({
      {"int('42') + int(2.9) + int(-2.9)", nullptr, "42", "langdef: int() truncates toward zero"},
      {"int('4x')", nullptr, "!type conversion error from 'string' to 'int'", "cel-go conversion error"},
      {"int(9223372036854775807.0)", nullptr, "!integer overflow",
       "langdef: double to int range is exclusive"},
      {"int(18446744073709551615u)", nullptr, "!integer overflow", "uint to int range"},
      {"uint(-1)", nullptr, "!unsigned integer overflow", "int to uint range"},
      {"uint('7')", nullptr, "7", "uint from string"},
      {"double(1) + double('2.5') + double(1u)", nullptr, "4.5", "double conversions"},
      {"string(1) + string(2u) + string(true)", nullptr, "\"12true\"", "string conversions"},
      {"string(3.14) + ' ' + string(1e6) + ' ' + string(100.0)", nullptr, "\"3.14 1e+06 100\"",
       "cel-go: Go %g"},
      {"bool('true') && !bool('F')", nullptr, "true", "Go strconv.ParseBool spellings"},
      {"bool('yes')", nullptr, "!type conversion error from 'string' to 'bool'", "invalid bool string"},
      {"string(b'\\xff')", nullptr, "~invalid UTF-8", "bytes to string needs valid UTF-8"},
      {"dyn(1) == 1", nullptr, "true", "dyn is the identity at runtime"},
      {"type(self.x) == double", R"j({"x": 1.5})j", "true", "JSON floats are doubles"},
      {"type(self.x) == int", R"j({"x": 2})j", "true", "JSON integers are ints"},
  });
}

TEST(CelTime, DurationsAndTimestamps) {
  check_cases({
      {"duration('1m30s').getSeconds()", nullptr, "90", "langdef: duration getSeconds converts"},
      {"duration('1h30m').getMinutes()", nullptr, "90", "langdef: getMinutes"},
      {"duration('1.5s').getMilliseconds()", nullptr, "1500", "cel-go: Duration.Milliseconds() (total)"},
      {"string(duration('1m1ms'))", nullptr, "\"60.001s\"", "langdef: string(duration)"},
      {"duration('-1.5h') == duration('-90m')", nullptr, "true", "Go ParseDuration: negative and fractional"},
      {"duration('1h') > duration('59m') && duration('2h') + duration('1h1m') >= duration('3h')", nullptr,
       "true", "langdef: duration ordering and arithmetic"},
      {"duration(self.d)", R"j({"d": "1x"})j",
       "!type conversion error from 'string' to 'google.protobuf.Duration'", "runtime duration parse error"},
      {"duration('9223372036854775807ns') + duration('1ns')", nullptr, "!integer overflow",
       "duration overflow"},
      {"timestamp('2023-01-01T00:00:00Z') + duration('24h') == timestamp('2023-01-02T00:00:00Z')", nullptr,
       "true", "langdef: timestamp + duration"},
      {"timestamp('2023-01-10T12:00:00Z') - timestamp('2023-01-10T00:00:00Z') == duration('12h')", nullptr,
       "true", "langdef: timestamp - timestamp"},
      {"string(timestamp('2023-08-26T12:39:00.500-07:00'))", nullptr, "\"2023-08-26T12:39:00.5-07:00\"",
       "RFC 3339 nano formatting keeps the offset"},
      {"timestamp('2023-12-25T12:00:00Z').getDayOfWeek()", nullptr, "1", "langdef: getDayOfWeek (Monday)"},
      {"timestamp('2023-12-25T12:00:00Z').getDayOfYear()", nullptr, "358", "langdef: getDayOfYear"},
      {"timestamp('2023-12-25T12:00:00Z').getMonth()", nullptr, "11", "langdef: zero-based month"},
      {"timestamp('2023-12-25T00:00:00Z').getDate('-08:00')", nullptr, "24",
       "langdef: fixed time zone offsets"},
      {"timestamp('2023-12-25T00:00:00Z').getHours('Mars/Base')", nullptr, "!unknown time zone Mars/Base",
       "unsupported time zone"},
      {"int(timestamp('1970-01-01T00:01:00Z'))", nullptr, "60", "langdef: int(timestamp) is Unix seconds"},
      {"timestamp('9999-12-31T23:59:59Z') + duration('1s')", nullptr, "!timestamp overflow",
       "langdef: timestamps are limited to year 9999"},
      {"timestamp('2023-01-01T00:00:00Z') < timestamp('2023-01-01T00:00:01Z')", nullptr, "true", "ordering"},
  });
}

TEST(CelQuantity, KubernetesQuantityLibrary) {
  check_cases({
      {"quantity('200M').compareTo(quantity('0.2G'))", nullptr, "0", "k8s quantity: equal values compare 0"},
      {"quantity('50M').compareTo(quantity('50Mi'))", nullptr, "-1", "k8s quantity: decimal vs binary"},
      {"quantity('150Mi').isGreaterThan(quantity('100Mi'))", nullptr, "true", "k8s quantity: isGreaterThan"},
      {"quantity('50M').isLessThan(quantity('100M'))", nullptr, "true", "k8s quantity: isLessThan"},
      {"quantity('500m').compareTo(quantity('0.5'))", nullptr, "0", "milli suffix"},
      {"quantity('50k').add(quantity('20k')) == quantity('70k')", nullptr, "true", "k8s quantity: add"},
      {"quantity('50k').add(20) == quantity('50020')", nullptr, "true", "k8s quantity: add int"},
      {"quantity('50k').sub(20000) == quantity('30k')", nullptr, "true", "k8s quantity: sub int"},
      {"quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", nullptr, "true",
       "k8s quantity docs example"},
      {"quantity('50k').add(20).sub(quantity('100k')).asInteger()", nullptr, "-49980",
       "k8s quantity: asInteger"},
      {"quantity('1Gi').asInteger()", nullptr, "1073741824", "binary suffix"},
      {"quantity('50.703k').asApproximateFloat()", nullptr, "50703.0", "k8s quantity: asApproximateFloat"},
      {"quantity('50').isInteger()", nullptr, "true", "k8s quantity: isInteger"},
      {"quantity('1.0').isInteger()", nullptr, "false",
       "resource.Quantity: a scale<0 int64 amount is not AsInt64"},
      {"quantity('9999999999999999999999999999999999999G').isInteger()", nullptr, "false", "beyond int64"},
      {"quantity('9999999999999999999999999999999999999G').asInteger()", nullptr,
       "!cannot convert value to integer", "k8s quantity: asInteger error"},
      {"sign(quantity('-1m')) == -1 && sign(quantity('0')) == 0", nullptr, "true", "k8s quantity: sign"},
      {"quantity('0').sign()", nullptr, "#found no matching overload for 'sign'",
       "kube-apiserver v1.37: sign is a global function, not a member"},
      {"quantity('0.000000000001Ki').compareTo(quantity('2n'))", nullptr, "0",
       "resource.ParseQuantity rounds up to nano units"},
      {"isQuantity('1.3Gi') && isQuantity('10000k') && !isQuantity('200K') && !isQuantity('1,3G')", nullptr,
       "true", "k8s quantity: isQuantity"},
      {"isQuantity('20Mo') || isQuantity('10Mm')", nullptr, "false", "k8s quantity tests: bad suffixes"},
      {"quantity('Three')", nullptr, "~quantities must match the regular expression",
       "resource.ErrFormatWrong"},
      {"quantity('1ki')", nullptr, "~unable to parse quantity's suffix", "resource.ErrSuffix"},
      {"quantity('1') == 1", nullptr, "!no such overload", "k8s Quantity.Equal with a non-quantity"},
      {"quantity('1').compareTo(1)", nullptr, "!no such overload", "compareTo needs a quantity"},
  });
}

TEST(CelLists, KubernetesListsLibraryAndSets) {
  check_cases({
      {"[1, 2, 2, 3].isSorted() && ['a', 'b'].isSorted() && [].isSorted()", nullptr, "true",
       "k8s lists: isSorted"},
      {"[2.0, 1.0].isSorted()", nullptr, "false", "k8s lists: isSorted"},
      {"[1, 3].sum()", nullptr, "4", "k8s lists: sum"},
      {"[1.0, 3.0].sum()", nullptr, "4.0", "k8s lists: sum of doubles"},
      {"[duration('1m'), duration('1s')].sum() == duration('1m1s')", nullptr, "true",
       "k8s lists: sum of durations"},
      {"[].sum()", nullptr, "0", "k8s lists: empty sum"},
      {"[9223372036854775807, 1].sum()", nullptr, "!integer overflow", "sum overflows like +"},
      {"[1, 3].min() == 1 && [1, 3].max() == 3", nullptr, "true", "k8s lists: min/max"},
      {"[].min()", nullptr, "!min called on empty list", "k8s lists: min of empty list"},
      {"[1, 2, 2, 3].indexOf(2) == 1 && ['a', 'b', 'b'].lastIndexOf('b') == 2", nullptr, "true",
       "k8s lists: indexOf/lastIndexOf"},
      {"[1.0].indexOf(1.1)", nullptr, "-1", "k8s lists: not found"},
      {"sets.contains([1, 2, 3], [3, 1]) && !sets.contains([1], [2])", nullptr, "true", "ext sets: contains"},
      {"sets.equivalent([1, 2, 2], [2, 1]) && sets.intersects([1], [2, 1])", nullptr, "true",
       "ext sets: equivalent/intersects"},
  });
}

// The cross-field rules our CRDs carry (SPEC API-2): contract, floor <= ceiling, duration minimums.
TEST(CelCrdRules, RulesWeShip) {
  const char* floor_rule =
      "!has(self.floor) || !has(self.ceiling) || "
      "quantity(string(self.floor)).compareTo(quantity(string(self.ceiling))) <= 0";
  const char* kai_rule =
      "self.overrideScheduler != 'kai' || (has(self.experimental) && self.experimental.gpuKaiContract == "
      "'v1alpha1-2026-07')";
  check_cases({
      {floor_rule, R"j({"floor": "0.25", "ceiling": "1"})j", "true", "API-2 floor <= ceiling"},
      {floor_rule, R"j({"floor": "2", "ceiling": "500m"})j", "false", "API-2 floor > ceiling"},
      {floor_rule, R"j({"floor": "1Gi", "ceiling": "1073741824"})j", "true",
       "equal quantities, mixed suffixes"},
      {floor_rule, R"j({"floor": "2"})j", "true", "API-2 only one bound set"},
      {floor_rule, R"j({"floor": 1, "ceiling": 2})j", "true", "int-or-string quantities as numbers"},
      {kai_rule, R"j({"overrideScheduler": "none"})j", "true", "contract only needed for kai"},
      {kai_rule, R"j({"overrideScheduler": "kai"})j", "false", "kai without experimental block"},
      {kai_rule, R"j({"overrideScheduler": "kai", "experimental": {"gpuKaiContract": "none"}})j", "false",
       "kai with the wrong contract"},
      {kai_rule, R"j({"overrideScheduler": "kai", "experimental": {"gpuKaiContract": "v1alpha1-2026-07"}})j",
       "true", "kai with the contract"},
      {"duration(self.metricsWindow) >= duration('1m')", R"j({"metricsWindow": "10m"})j", "true",
       "duration minimum"},
      {"duration(self.metricsWindow) >= duration('1m')", R"j({"metricsWindow": "30s"})j", "false",
       "duration minimum violated"},
      {"self.values.all(v, v.size() > 0)", R"j({"values": ["a", "b"]})j", "true", "non-empty list items"},
      {"self.values.all(v, v.size() > 0)", R"j({"values": ["a", ""]})j", "false", "an empty item"},
      {"self.precedence.map(p, p.type).size() == self.precedence.size()",
       R"j({"precedence": [{"type": "StaticPolicy"}, {"type": "GpuReactivePolicy"}]})j", "true",
       "every precedence entry has a type"},
      {"self.precedence.map(p, p.type).size() == self.precedence.size()",
       R"j({"precedence": [{"type": "StaticPolicy"}, {"name": "x"}]})j", "!no such key: type",
       "a precedence entry without type is an evaluation error"},
  });
}

TEST(CelTransition, OldSelfRules) {
  auto p = compile("self == oldSelf");
  ASSERT_TRUE(p);
  EXPECT_TRUE(references_old_self(**p));
  auto q = compile("[1].all(oldSelf, oldSelf == 1)");
  ASSERT_TRUE(q);
  EXPECT_FALSE(references_old_self(**q)) << "a comprehension variable named oldSelf shadows it";

  json old_v = {{"a", 1}};
  json same = {{"a", 1.0}};
  json changed = {{"a", 2}};
  EXPECT_EQ(evaluate(**p, same, &old_v).value(), json(true));
  EXPECT_EQ(evaluate(**p, changed, &old_v).value(), json(false));
  auto unbound = evaluate(**p, same, nullptr);
  ASSERT_FALSE(unbound);
  EXPECT_EQ(unbound.error().message, "no such attribute(s): oldSelf");

  // optionalOldSelf binds oldSelf as optional(T).
  auto r = compile("!oldSelf.hasValue() || self.a >= oldSelf.value().a");
  ASSERT_TRUE(r);
  EvalOptions opts;
  opts.optional_old_self = true;
  EXPECT_EQ(evaluate(**r, changed, nullptr, opts).value(), json(true));
  EXPECT_EQ(evaluate(**r, changed, &old_v, opts).value(), json(true));
  EXPECT_EQ(evaluate(**r, old_v, &changed, opts).value(), json(false));
}

TEST(CelEvaluateRule, RequiresBoolAndCaches) {
  json self = {{"x", 3}};
  EXPECT_EQ(evaluate_rule("self.x > 2", self, nullptr).value(), true);
  EXPECT_EQ(evaluate_rule("self.x > 5", self, nullptr).value(), false);
  auto not_bool = evaluate_rule("self.x", self, nullptr);
  ASSERT_FALSE(not_bool);
  EXPECT_EQ(not_bool.error().message, "cel expression must evaluate to a bool");
  auto bad = evaluate_rule("self.", self, nullptr);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("Syntax error"), std::string::npos);
}

// apiextensions-apiserver pkg/apiserver/schema/cel/validation.go (field.Error formats of 1.30-1.34).
TEST(CelApplyRules, KubeApiserverMessages) {
  json self = json::parse(R"j({"floor": "2", "ceiling": "500m", "name": "x"})j");
  json rules = json::parse(R"j([
    {"rule": "quantity(self.floor).compareTo(quantity(self.ceiling)) <= 0",
     "message": "floor must be less than or equal to ceiling"},
    {"rule": "self.name.size() > 3"},
    {"rule": "self.name.size() > 3", "fieldPath": ".name", "reason": "FieldValueForbidden", "message": "too short"},
    {"rule": "self.name.size() > 3", "reason": "FieldValueRequired", "message": "need a long name"},
    {"rule": "self.name.size() > 3", "reason": "FieldValueDuplicate"},
    {"rule": "self.name.size() > 3", "messageExpression": "'name ' + self.name + ' is too short'"},
    {"rule": "self.name.size() > 3", "message": "fallback", "messageExpression": "self.nope"},
    {"rule": "self.missing > 1", "message": "missing check"},
    {"rule": "self.floor > 1"},
    {"rule": "self.name.size() < 3"},
    {"rule": "self."}
  ])j");
  auto v = apply_rules(rules, self, nullptr, "spec.enablement.gpu.requests");
  std::vector<std::string> got;
  for (const auto& e : v) got.push_back(e.message);
  std::vector<std::string> want = {
      R"(spec.enablement.gpu.requests: Invalid value: "object": floor must be less than or equal to ceiling)",
      R"(spec.enablement.gpu.requests: Invalid value: "object": failed rule: self.name.size() > 3)",
      R"(spec.enablement.gpu.requests.name: Forbidden: too short)",
      R"(spec.enablement.gpu.requests: Required value: need a long name)",
      R"(spec.enablement.gpu.requests: Duplicate value: "object")",
      R"(spec.enablement.gpu.requests: Invalid value: "object": name x is too short)",
      R"(spec.enablement.gpu.requests: Invalid value: "object": fallback)",
      R"(spec.enablement.gpu.requests: Invalid value: "object": no such key: missing evaluating rule: missing check)",
      R"(spec.enablement.gpu.requests: Invalid value: "object": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self.floor > 1)",
      std::string(
          R"(spec.enablement.gpu.requests: Invalid value: "object": rule compile error: compilation failed: )") +
          "ERROR: <input>:1:6: Syntax error: unexpected end of input, expected identifier\n | self.\n | "
          ".....^",
  };
  EXPECT_EQ(got, want);
  ASSERT_EQ(v.size(), want.size());
  EXPECT_EQ(v[0].reason, "FieldValueInvalid");
  EXPECT_EQ(v[0].field, "spec.enablement.gpu.requests");
  EXPECT_EQ(v[0].bad_value, "\"object\"");
  EXPECT_EQ(v[0].body(), R"(Invalid value: "object": floor must be less than or equal to ceiling)");
  EXPECT_EQ(v[2].reason, "FieldValueForbidden");
  EXPECT_EQ(v[2].field, "spec.enablement.gpu.requests.name");
  EXPECT_EQ(v[3].reason, "FieldValueRequired");
  EXPECT_EQ(v[4].reason, "FieldValueDuplicate");

  auto errs = to_errors(v);
  ASSERT_EQ(errs.size(), v.size());
  EXPECT_EQ(errs.items()[0].str(), v[0].message);
}

TEST(CelApplyRules, PathsTypesAndSkips) {
  json rules = json::parse(R"j([{"rule": "self.size() > 2", "message": "too short"}])j");
  auto s = apply_rules(rules, json("ab"), nullptr, "spec.name");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].message, R"(spec.name: Invalid value: "string": too short)")
      << "schema type of a string node";
  auto root = apply_rules(json::parse(R"j([{"rule": "has(self.spec)"}])j"), json::object(), nullptr, "");
  ASSERT_EQ(root.size(), 1u);
  EXPECT_EQ(root[0].message, R"(<nil>: Invalid value: "object": failed rule: has(self.spec))")
      << "kube-apiserver validates the root with a nil field path";
  auto fp = apply_rules(json::parse(R"j([{"rule": "false", "fieldPath": ".a['b.c']"}])j"), json::object(),
                        nullptr, "");
  ASSERT_EQ(fp.size(), 1u);
  EXPECT_EQ(fp[0].field, "a.b.c");
  EXPECT_TRUE(apply_rules(rules, json(nullptr), nullptr, "spec.name").empty())
      << "null values are not validated";
  RuleOptions typed;
  typed.schema_type = "integer";
  auto t =
      apply_rules(json::parse(R"j([{"rule": "false", "message": "m"}])j"), json(1), nullptr, "spec.n", typed);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].message, R"(spec.n: Invalid value: "integer": m)");

  // Transition rules are skipped on create unless optionalOldSelf is set.
  json transition = json::parse(R"j([
    {"rule": "self == oldSelf", "message": "immutable"},
    {"rule": "oldSelf.hasValue() && self == oldSelf.value()", "optionalOldSelf": true, "message": "needs old"}
  ])j");
  auto created = apply_rules(transition, json("a"), nullptr, "spec.x");
  ASSERT_EQ(created.size(), 1u);
  EXPECT_EQ(created[0].message, R"(spec.x: Invalid value: "string": needs old)");
  json old_v = "b";
  auto updated = apply_rules(transition, json("a"), &old_v, "spec.x");
  ASSERT_EQ(updated.size(), 2u);
  EXPECT_EQ(updated[0].message, R"(spec.x: Invalid value: "string": immutable)");
  json same = "a";
  EXPECT_TRUE(apply_rules(transition, json("a"), &same, "spec.x").empty());
}

TEST(CelApplyRules, CostLimitStopsFurtherRules) {
  json big = json::array();
  for (int i = 0; i < 200; ++i) big.push_back(i);
  json rules = json::parse(R"j([
    {"rule": "self.all(a, self.all(b, self.all(c, a + b + c >= 0)))"},
    {"rule": "false", "message": "never reached"}
  ])j");
  auto v = apply_rules(rules, big, nullptr, "spec.items");
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(
      v[0].message,
      "spec.items: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further "
      "validation rules will be run due to call cost exceeds limit for rule: "
      "self.all(a, self.all(b, self.all(c, a + b + c >= 0)))");

  // A shared budget runs out across calls.
  int64_t budget = 50;
  RuleOptions opts;
  opts.remaining_budget = &budget;
  json cheap = json::parse(R"j([{"rule": "self.all(x, x >= 0)"}])j");
  EXPECT_TRUE(apply_rules(cheap, json::array({1, 2}), nullptr, "a", opts).empty());
  EXPECT_LT(budget, 50);
  auto out = apply_rules(cheap, big, nullptr, "b", opts);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].message.find("running out of cost budget"), std::string::npos) << out[0].message;
}

// apiextensions validation of x-kubernetes-validations at CRD creation.
TEST(CelCheckRules, CrdCreationErrors) {
  json rules = json::parse(R"j([
    {"rule": "self.replicas <= "},
    {"rule": "self.a", "message": "m"},
    {"rule": "self.a == 1", "optionalOldSelf": true},
    {"rule": "self.a == 1", "reason": "Bogus", "fieldPath": ".a["},
    {"rule": "  "},
    {"rule": "self.a == 1", "messageExpression": "1 + "},
    {"rule": "self == oldSelf", "optionalOldSelf": true, "message": "ok"}
  ])j");
  auto v = check_rules(rules, "spec.validation.openAPIV3Schema.properties[spec]");
  std::vector<std::string> got;
  for (const auto& e : v) got.push_back(e.message);
  const std::string base = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";
  std::vector<std::string> want = {
      base +
          R"([3].reason: Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")",
      base + R"([3].fieldPath: Invalid value: ".a[": must be a valid path)",
      base + "[4].rule: Required value: rule is not specified",
      base +
          R"([0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.replicas <= ", Message:"", )" +
          R"(MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", )" +
          R"(OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:18: Syntax error: unexpected end of )" +
          "input, expected an expression\n | self.replicas <= \n | .................^",
      base + "[2].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule",
      base +
          R"([5].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:"self.a == 1", Message:"", )" +
          R"(MessageExpression:"1 + ", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", )" +
          R"(OptionalOldSelf:(*bool)(nil)}: messageExpression compilation failed: ERROR: <input>:1:5: Syntax error: )" +
          "unexpected end of input, expected an expression\n | 1 + \n | ....^",
  };
  EXPECT_EQ(got, want);

  auto non_bool = check_rules(json::parse(R"j([{"rule": "'abc'"}])j"), "s");
  ASSERT_EQ(non_bool.size(), 1u);
  EXPECT_NE(non_bool[0].message.find("cel expression must evaluate to a bool"), std::string::npos);
  EXPECT_TRUE(check_rules(json::parse(R"j([{"rule": "self.x > 0", "fieldPath": ".x"}])j"), "s").empty());
}

// kube-apiserver v1.37 refuses a root metadata schema with anything but type and name/generateName (issue 16).
TEST(CelCheckRules, RootMetadataSchemaHoldsOnlyTypeAndName) {
  auto crd_with = [](const json& metadata) {
    return json{{"metadata", {{"name", "things.t.example.com"}}},
                {"spec",
                 {{"group", "t.example.com"},
                  {"names", {{"kind", "Thing"}, {"plural", "things"}}},
                  {"scope", "Cluster"},
                  {"versions",
                   json::array({{{"name", "v1"},
                                 {"served", true},
                                 {"storage", true},
                                 {"schema",
                                  {{"openAPIV3Schema",
                                    {{"type", "object"}, {"properties", {{"metadata", metadata}}}}}}}}})}}}};
  };
  EXPECT_TRUE(custom::validate_crd(crd_with({{"type", "object"}}), nullptr).empty());
  EXPECT_TRUE(custom::validate_crd(
                  crd_with({{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}}), nullptr)
                  .empty());
  // kube-apiserver: a rule's fieldPath must name a declared property (`.metadata.name` needs metadata.name).
  auto with_rule = [&](const json& metadata) {
    json crd = crd_with(metadata);
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = json::parse(
        R"([{"rule": "self.metadata.name == 'x'", "fieldPath": ".metadata.name"}])");
    return custom::validate_crd(crd, nullptr);
  };
  EXPECT_TRUE(with_rule({{"type", "object"}, {"properties", {{"name", {{"type", "string"}}}}}}).empty());
  auto undeclared = with_rule({{"type", "object"}});
  ASSERT_EQ(undeclared.size(), 1u);
  EXPECT_EQ(undeclared[0].message,
            "spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].fieldPath: Invalid value: "
            "\".metadata.name\": must be a valid path");
  auto out = custom::validate_crd(crd_with({{"type", "object"}, {"description", "Standard metadata."}}), nullptr);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].message,
            "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than "
            "name and generateName, but metadata is implicitly specified");
}

// Guards: nothing a user sends may crash or hang the server (DESIGN §2.4).
TEST(CelGuards, DeepNestingIsRefused) {
  auto nested = [](const std::string& open, const std::string& mid, const std::string& close, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += mid;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  for (const auto& e :
       {nested("(", "1", ")", 5000), nested("[", "", "]", 5000), nested("!", "true", "", 5000),
        nested("-", "1", "", 5000), nested("f(", "1", ")", 5000)}) {
    auto p = compile(e);
    ASSERT_FALSE(p);
    EXPECT_NE(p.error().message.find("max recursion depth exceeded"), std::string::npos)
        << p.error().message.substr(0, 200);
  }
  std::string chain = "1";
  for (int i = 0; i < 5000; ++i) chain += " + 1";
  auto c = compile(chain);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("max recursion depth exceeded"), std::string::npos);
  // && and || chains are balanced, so long lists of conditions still compile.
  std::string conds = "true";
  for (int i = 0; i < 5000; ++i) conds += " && true";
  auto ok = compile(conds);
  ASSERT_TRUE(ok);
  EXPECT_EQ(evaluate(**ok, json::object(), nullptr).value(), json(true));
  // So are deeply nested regular expressions, at compile time (literal) or when evaluated (dynamic).
  std::string re(1000, '(');
  auto rc = compile("'a'.matches('" + re + "')");
  ASSERT_FALSE(rc);
  EXPECT_NE(rc.error().message.find("invalid matches argument"), std::string::npos);
  auto rd = compile("'a'.matches(self.re)");
  ASSERT_TRUE(rd);
  auto rr = evaluate(**rd, json{{"re", re}}, nullptr);
  ASSERT_FALSE(rr);
  EXPECT_NE(rr.error().message.find("error parsing regexp: expression nests too deeply"), std::string::npos)
      << rr.error().message;
  // Deeply nested input values are refused too.
  json deep = json::array();
  for (int i = 0; i < 1000; ++i) deep = json::array({deep});
  auto p = compile("size(self) == 1");
  ASSERT_TRUE(p);
  auto r = evaluate(**p, deep, nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "value nesting exceeds 256 levels");
}

// The deepest expressions the parser accepts compile and evaluate on a 512 KiB thread stack (recursion is
// bounded by the nesting and depth limits, not by the input).
void* eval_deep(void* arg) {
  auto* out = static_cast<std::vector<std::string>*>(arg);
  std::vector<std::string> exprs(4);
  for (int i = 0; i < 49; ++i) exprs[0] = "(" + exprs[0];
  exprs[0] += "self";
  for (int i = 0; i < 49; ++i) exprs[0] += ")";
  exprs[1] = "self";
  for (int i = 0; i < 49; ++i) exprs[1] = "[" + exprs[1] + "][0]";
  exprs[2] = "self";
  for (int i = 0; i < 49; ++i) exprs[2] = "(" + exprs[2] + " + 1)";
  exprs[3] = "self";
  for (int i = 0; i < 30; ++i)
    exprs[3] = "[" + exprs[3] + "].map(x" + std::to_string(i) + ", x" + std::to_string(i) + ")[0]";
  for (const auto& e : exprs) {
    auto p = compile(e);
    out->push_back(p ? evaluate(**p, json(7), nullptr).value_or(json("error")).dump() : p.error().message);
  }
  // The deepest regular expression the regex parser accepts (64 nested groups).
  std::string re;
  for (int i = 0; i < 63; ++i) re += "(a|";
  re += "b";
  for (int i = 0; i < 63; ++i) re += ")*";
  auto m = evaluate(**compile("self.matches(r'^" + re + "$')"), json("aab"), nullptr);
  out->push_back(m ? m->dump() : m.error().message);
  return nullptr;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kSmallStack = 8 * 512 * 1024;  // AddressSanitizer's redzones inflate every frame
#else
constexpr std::size_t kSmallStack = 512 * 1024;
#endif

TEST(CelGuards, DeepestExpressionsFitASmallStack) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kSmallStack);
  std::vector<std::string> out;
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, &attr, eval_deep, &out), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(out, (std::vector<std::string>{"7", "7", "56", "7", "true"}));
}

TEST(CelGuards, RunawayEvaluationHitsTheCostLimit) {
  const std::vector<std::string> runaway = {
      // exponential macro nesting
      "[0,1,2,3,4,5,6,7,8,9].all(a, [0,1,2,3,4,5,6,7,8,9].all(b, [0,1,2,3,4,5,6,7,8,9].all(c, "
      "[0,1,2,3,4,5,6,7,8,9].all(d, [0,1,2,3,4,5,6,7,8,9].all(e, [0,1,2,3,4,5,6,7,8,9].all(f, true))))))",
      // exponential string growth
      "['ab'].map(x, x + x).map(x, x + x).map(x, x + x).map(x, x + x).map(x, x + x).map(x, x + x)"
      ".map(x, x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x)"
      ".map(x, x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x)"
      ".map(x, x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x)"
      ".map(x, x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x + x)",
      // a regular expression whose work (text length x program size) exceeds the budget
      "self.s.matches('[ab]{1000}x')",
  };
  json self = {{"s", std::string(200000, 'a')}};
  for (const auto& e : runaway) {
    auto p = compile(e);
    ASSERT_TRUE(p) << p.error().message;
    int64_t used = 0;
    EvalOptions opts;
    opts.cost_used = &used;
    auto r = evaluate(**p, self, nullptr, opts);
    ASSERT_FALSE(r) << e;
    EXPECT_EQ(r.error().message, "operation cancelled: actual cost limit exceeded") << e;
    EXPECT_GT(used, kDefaultCostLimit);
  }
  // Catastrophic-backtracking patterns run in linear time on the Pike VM, and their work is charged.
  auto p = compile("self.s.matches('(a*)*b') || self.s.matches('(a|a)*b') || self.s.matches('^(a|aa)+$x')");
  ASSERT_TRUE(p);
  int64_t used = 0;
  EvalOptions opts;
  opts.cost_used = &used;
  EXPECT_EQ(evaluate(**p, self, nullptr, opts).value(), json(false));
  EXPECT_GT(used, 100000);
  auto q = compile("'aaab'.matches('(a*)*b') && !'aaaa'.matches('(a|a)*b')");
  ASSERT_TRUE(q);
  EXPECT_EQ(evaluate(**q, json::object(), nullptr).value(), json(true));
}

TEST(CelGuards, ConcurrentEvaluationOfOneProgram) {
  auto p = compile("self.items.map(i, i * 2).sum() == 2 * self.items.sum() && self.name.matches('^[a-z]+$')");
  ASSERT_TRUE(p);
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      json self = {{"items", {t, t + 1, t + 2}}, {"name", "abc"}};
      for (int i = 0; i < 200; ++i)
        ok[static_cast<std::size_t>(t)] += evaluate(**p, self, nullptr).value() == json(true);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, std::vector<int>(4, 200));
}

}  // namespace
}  // namespace kubex::sim::cel
