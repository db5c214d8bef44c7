#include "engine/build_info.h"

#include <nlohmann/json.hpp>
#include <prometheus/family.h>
#include <prometheus/gauge.h>

#include "build_info_values.h"  // generated in the build tree by cmake/build_info.cmake
#include "kube/runtime/metrics.h"

namespace kubex::engine {

const BuildInfo& build_info() {
  static const BuildInfo info{KUBEX_BUILD_VERSION, KUBEX_BUILD_COMMIT, KUBEX_BUILD_DATE};
  return info;
}

std::string version_text() {
  const BuildInfo& b = build_info();
  return "kubex version " + b.version + "\ncommit: " + b.commit + "\nbuild date: " + b.build_date;
}

nlohmann::json build_info_fields() {
  const BuildInfo& b = build_info();
  return {{"version", b.version}, {"commit", b.commit}, {"buildDate", b.build_date}};
}

void export_build_info(kube::Metrics& metrics) {
  const BuildInfo& b = build_info();
  metrics
      .gauge_family("kubex_build_info",
                    "A metric with a constant '1' value labeled by the version, git commit and build date of kubex.")
      .Add({{"version", b.version}, {"commit", b.commit}, {"build_date", b.build_date}})
      .Set(1);
}

}  // namespace kubex::engine
