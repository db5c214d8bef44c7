// Files compiled into kubex-sim for the demo (cmake/embed_files.cmake): the CRDs of charts/kubex-crds, the
// guide's starter example and the demo's workloads, so `kubex-sim demo` works from any directory.
#pragma once

#include <string>
#include <vector>

namespace kubex::sim::demo {

struct EmbeddedFile {
  std::string path;  // relative to the source tree, e.g. "examples/kai-gpu-sharing.yaml"
  std::string content;
};

const std::vector<EmbeddedFile>& embedded_files();

}  // namespace kubex::sim::demo
