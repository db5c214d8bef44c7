// Fakes for the controllers that write owner annotations (staticpolicy, proactivepolicy): an
// act::AnnotationWriter that records what it was asked to write and answers as the real one does (nothing to
// change -> kNothing), or with the outcome a test sets (kDryRun, kStale, kGone) or an error; and the
// workload objects those controllers read, as the informer caches project them.
#pragma once

#include <expected>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "act/owner_annotations.h"
#include "api/views.h"

namespace kubex::controllers::test {

struct AnnotationWrite {
  std::string owner;  // "ns/name"
  std::map<std::string, std::string> set;
  std::vector<std::string> remove;
  std::string what;
};

class FakeAnnotationWriter final : public act::AnnotationWriter {
 public:
  std::vector<AnnotationWrite> writes;             // every write with something to change, in order
  int calls = 0;                                   // every call, empty ones included
  act::OwnerWrite result = act::OwnerWrite::kWritten;  // what a write with changes comes to
  std::optional<std::string> fail;                 // the next write with changes fails with this (once)

  std::expected<act::OwnerWrite, std::string> write(const api::WorkloadView& w,
                                                    const std::map<std::string, std::string>& set,
                                                    const std::vector<std::string>& remove,
                                                    const std::string& what) override {
    ++calls;
    if (set.empty() && remove.empty()) return act::OwnerWrite::kNothing;
    if (fail) {
      std::string e = *fail;
      fail.reset();
      return std::unexpected(e);
    }
    writes.push_back({w.ns.str() + "/" + w.name, set, remove, what});
    return result;
  }
};

// A Deployment as the caches project it, with its labels and annotations.
inline std::shared_ptr<const api::WorkloadView> annotated_deployment(const std::string& ns,
                                                                     const std::string& name,
                                                                     const nlohmann::json& labels,
                                                                     const nlohmann::json& annotations) {
  return api::project_workload({{"apiVersion", "apps/v1"},
                                {"kind", "Deployment"},
                                {"metadata",
                                 {{"name", name},
                                  {"namespace", ns},
                                  {"uid", "d-" + name},
                                  {"resourceVersion", "7"},
                                  {"labels", labels},
                                  {"annotations", annotations}}},
                                {"spec", nlohmann::json::object()}});
}

}  // namespace kubex::controllers::test
