// libFuzzer target for the webhook's JSON hot path (common/json_parse.h, common/json_projection.h,
// common/json_diff.h), against nlohmann as the reference: the fast parser accepts only what nlohmann
// accepts and then builds the same value; with a projection it accepts exactly what it accepts without one
// and builds project(nlohmann's value); and for two documents (the input split at its first newline)
// json_diff gives exactly nlohmann::json::diff's operations.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/json_diff.h"
#include "common/json_parse.h"
#include "common/json_projection.h"

namespace {

using nlohmann::json;

[[noreturn]] void violated() {
  std::abort();
}

bool reference_parse(std::string_view text, json& out) {
  try {
    out = json::parse(text);
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

// Short member names, so that mutated inputs hit kept, projected and dropped members alike.
const kubex::common::JsonProjection& projection() {
  using P = kubex::common::JsonProjection;
  static const P p = P::members({{"a", {}},
                                 {"b", P::members({{"a", {}}, {"c", P::elements(P::members({{"a", {}}}))}})},
                                 {"c", P::elements(P::members({{"b", {}}}, true))}});
  return p;
}

// Parses `text` both ways and checks they agree; true with `out` set when it is JSON.
bool agreed_parse(std::string_view text, json& out) {
  json fast;
  bool fast_ok = kubex::common::parse_json_fast(text, fast, 64);
  bool ok = reference_parse(text, out);
  if (fast_ok && (!ok || fast.dump() != out.dump())) violated();
  json cut;
  bool cut_ok = kubex::common::parse_json_fast(text, cut, 64, &projection());
  if (cut_ok != fast_ok) violated();
  if (cut_ok && cut.dump() != kubex::common::project(out, projection()).dump()) violated();
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  json whole;
  agreed_parse(input, whole);
  auto nl = input.find('\n');
  if (nl == std::string_view::npos) return 0;
  json a, b;
  if (!agreed_parse(input.substr(0, nl), a) || !agreed_parse(input.substr(nl + 1), b)) return 0;
  if (kubex::common::json_diff(a, b).dump() != json::diff(a, b).dump()) violated();
  return 0;
}
