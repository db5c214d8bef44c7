// YAML -> JSON, reading manifests the way kubectl does (sigs.k8s.io/yaml on top of go-yaml v2, YAML 1.1).
//
// Parsing is done by yaml-cpp, which has no typed scalars; these rules give the types:
//
// * Quoted and block (| >) scalars are strings. A plain scalar is typed by go-yaml v2's resolver:
//   - null:    empty, ~, null, Null, NULL
//   - boolean: y Y yes Yes YES true True TRUE on On ON   /   n N no No NO false False FALSE off Off OFF
//              (the YAML 1.1 words too, so `enabled: yes` is true and `country: NO` is false — quote them
//              to get strings, exactly as with kubectl)
//   - integer: when the text starts with a digit or a sign: all `_` are removed, then Go's base-0 rules
//              apply: 42, -7, +7, 0x1F, 0o17, 0b101, and a leading 0 means octal (017 == 15). Values that
//              fit int64 are integers; larger ones up to 2^64-1 are unsigned integers. (go-yaml drops every
//              `_` first, so even `1_` is the integer 1.)
//   - float:   1.5, 1e3, -.5, 1., .5 (and "08", which is not octal, reads as 8.0). Numbers beyond the double
//              range stay strings, as in go-yaml. `.inf`, `-.inf`, `.nan` (and case variants go-yaml knows)
//              cannot be represented in JSON and are an error.
//   - anything else (including timestamps such as 2024-01-02 and words like `nULL`) is a string.
// * Explicit tags are respected: !!str always gives a string; !!int, !!bool, !!null must resolve to that
//   type (`!!int abc` is an error); !!float accepts integers and floats; !!binary is base64-decoded into a
//   string (invalid UTF-8 replaced by U+FFFD); !!timestamp keeps the text; other tags (`!foo`) give the
//   scalar's text as a string, as go-yaml does.
// * JSON has one number type. A float with an integral value that fits int64 (`1.0`, `1e3`) becomes a JSON
//   integer, because that is what kubectl sends (Go prints float64(1000) as `1000`); `1.5` stays a float.
// * Map keys always become strings: strings as is, integers in decimal, booleans as "true"/"false", floats
//   the way sigs.k8s.io/yaml prints them (`1.5`, `1e+06`). Null, sequence and mapping keys, and integer keys
//   beyond int64, are errors. A repeated key keeps the last value.
// * Anchors and aliases are resolved; merge keys (`<<: *base`, `<<: [*a, *b]`) are applied in order like
//   go-yaml v2 (a later explicit key overrides a merged one; earlier maps in a merge list take precedence).
//   An anchor that contains itself, nesting deeper than yaml-cpp allows (about 500 levels) or than 1000
//   levels through aliases, or aliases expanding to more than 1,000,000 values (plus one per byte of input)
//   are errors.
// * Two top-level values need a `---` between them ("- a\nb: c" is an error, as in go-yaml, although
//   yaml-cpp alone would read it as two documents).
// * Input must be UTF-8 (or UTF-16/32 with a byte-order mark) without control characters other than tab,
//   LF and CR, as in go-yaml.
// * Errors carry the position yaml-cpp reports, 1-based: `yaml: line 3, column 5: <problem>`.
// Nothing throws: every problem comes back as an error.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kubex::common {

// Where a document of yaml_to_json_documents starts, 1-based: the line of its content (after its `---` and any
// comments), and, when the document is a mapping with an `items` sequence (a List), the line of each item.
struct DocumentLines {
  int line = 0;
  std::vector<int> items;
};

// Every document of a `---`-separated stream. Empty and null documents (`---` alone, `~`, comments only)
// are skipped, so an empty input gives an empty vector. JSON input works too (JSON is YAML). When `lines` is
// given it receives one entry per returned document.
Result<std::vector<nlohmann::json>> yaml_to_json_documents(std::string_view text,
                                                           std::vector<DocumentLines>* lines = nullptr);

// Exactly one document: an error when the stream has several non-empty documents; JSON null when it has
// none (like sigs.k8s.io/yaml.YAMLToJSON of an empty input).
Result<nlohmann::json> yaml_to_json(std::string_view text);

}  // namespace kubex::common
