// What `kubex version` prints (ENG-3): the release version, the git commit and the build date, compiled into one
// small file (build_info.cpp, from the header cmake/build_info.cmake writes at build time), so a new commit
// recompiles only that file. The same values label the kubex_build_info gauge and the engine's first log line.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace kubex::kube {
class Metrics;
}

namespace kubex::engine {

struct BuildInfo {
  std::string version;     // "0.1.0"
  std::string commit;      // full git commit, "unknown" when built without git metadata
  std::string build_date;  // RFC 3339 UTC, e.g. "2026-12-01T20:14:22Z"
};

const BuildInfo& build_info();

// The text of `kubex version` / `kubex --version` (three lines, no trailing newline).
std::string version_text();
// {"version", "commit", "buildDate"}: fields of the engine's first log line and of `kubex version -o json`.
nlohmann::json build_info_fields();
// kubex_build_info{version, commit, build_date} = 1 on the engine's /metrics.
void export_build_info(kube::Metrics& metrics);

}  // namespace kubex::engine
