// The CRDs of charts/kubex-crds compiled into kubex (cmake/embed_files.cmake), so `kubex validate` checks field
// names against the one source of truth (DESIGN §2.5) from any directory.
#pragma once

#include <string>
#include <vector>

namespace kubex::engine::crds {

struct EmbeddedFile {
  std::string path;  // relative to the source tree, e.g. "charts/kubex-crds/templates/…_staticpolicies.yaml"
  std::string content;
};

const std::vector<EmbeddedFile>& embedded_files();

}  // namespace kubex::engine::crds
