// `kubex validate -f FILE|DIR|-` (DESIGN §1): checks rightsizing.kubex.ai manifests offline with the engine's
// own validator (api::validate_any, the same rules and messages as the validating webhook, VAL-1..4).
//
// Input: every -f is a file, a directory (its *.yaml, *.yml and *.json files, sorted by name, not recursive)
// or
// `-` (standard input). Files hold one or more YAML or JSON documents; `List` documents (kind `List` or
// `<Kind>List` with `items`) are expanded. Documents of other API groups are skipped with a note.
//
// Text output, on stderr, one line per problem (CLI-3), where LINE is the 1-based line at which the object starts
// in the file (the first line of its YAML document's content, or of its entry in a List's `items`):
//   FILE:LINE: KIND/NAME: FIELD.PATH: MESSAGE
//   FILE:LINE: KIND/NAME: warning: TEXT
//   FILE:LINE: KIND/NAME: skipped: not a rightsizing.kubex.ai object
//   FILE: MESSAGE                      (the file does not parse, cannot be read, or holds no object)
// On success (exit 0) one line on stdout: `N objects valid` ("1 object valid"), then `, M skipped (not
// rightsizing.kubex.ai)` when documents of other groups were skipped; warnings stay on stderr.
// `--output json` prints one JSON report on stdout instead (see run_validate).
// Exit code: 0 when every validated document is valid, 1 when any document is invalid, does not parse, or an
// input holds no object at all (an empty file, only comments, a directory without manifests), 2 on usage or
// I/O errors.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace kubex::engine {

struct ValidateOptions {
  std::vector<std::string> files;  // FILE, DIR or "-"
  std::string output = "text";     // text | json
  // The cluster facts some VAL-2 warnings depend on; offline, the early webhook is assumed enabled.
  bool early_webhook_enabled = true;
};

// Runs the command; `in` is standard input (for "-"). Never throws.
// JSON report: {"valid": bool, "documents": [{"file", "document", "line", "apiVersion", "kind", "name",
// "namespace", "valid", "reason" (InvalidSpec|InvalidContract, when invalid), "errors": [{"path", "message"}],
// "warnings": [..]}], "skipped": [{"file", "document", "line", "apiVersion", "kind", "name"}],
// "problems": [{"file", "message"}]} (problems: unreadable files, documents that do not parse, inputs without
// objects). "document" is the 1-based document number ("3", or "3.2" for the second item of a List) and "line"
// the line the object starts at.
int run_validate(const ValidateOptions& options, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace kubex::engine
