// libFuzzer target for the rightsizing.kubex.ai parsers (API-2, ENG-2): bytes -> JSON (or YAML, as kubectl
// reads manifests) -> every validator and parser entry point. Crashes, sanitizer reports and these invariants
// fail:
//  * validation never throws, and an object validates exactly like its defaulted form (API-2);
//  * defaulting is idempotent;
//  * an invalid report always has a reason and a non-empty message (VAL-1).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/defaults.h"
#include "api/parse.h"
#include "api/validate.h"
#include "common/yaml.h"

namespace {

using nlohmann::json;
using namespace kubex::api;  // NOLINT(google-build-using-namespace): a fuzz harness

void require(bool ok) {
  if (!ok) std::abort();
}

void check_report(const ValidationReport& r) {
  require(r.ok() == r.errors.empty());
  require(r.ok() || !r.message().empty());
  require(!r.contract || !r.ok());
}

void exercise(const json& doc) {
  check_report(validate_any(doc));
  for (const auto& info : all_kinds()) {
    ValidationReport raw = validate(info.kind, doc);
    check_report(raw);
    json defaulted = doc;
    apply_defaults(info.kind, defaulted);
    json twice = defaulted;
    apply_defaults(info.kind, twice);
    require(twice == defaulted);
    ValidationReport d = validate(info.kind, defaulted);
    require(d.message() == raw.message());
    require(d.warnings == raw.warnings);
  }
  ValidationContext ctx;
  ctx.early_webhook_enabled = false;
  ctx.kai_queues = std::set<std::string>{"kubex-unlimited-gpu-queue"};
  check_report(parse_strategy(doc, ctx).report);
  auto policy = parse_policy(doc, ctx);
  check_report(policy.report);
  check_report(parse_consolidation_policy(doc).report);
  check_report(parse_global_config(doc).report);
  auto pe = parse_policy_evaluation(doc);
  check_report(pe.report);
  for (const auto& info : all_kinds()) (void)pe.value.priority_of(info.kind);
  (void)parse_meta(doc);
  (void)parse_conditions(doc);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<json> docs;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    docs.push_back(std::move(j));
  } else if (auto yaml = kubex::common::yaml_to_json_documents(text)) {
    docs = std::move(*yaml);
  }
  for (const auto& doc : docs) exercise(doc);
  return 0;
}
