#include "common/json_projection.h"
#include "decide/admission/pod_mutation.h"

namespace kubex::decide {

const common::JsonProjection& admission_pod_fields() {
  using P = common::JsonProjection;
  static const P fields = [] {
    // pod_resources.cpp (name, resources, restartPolicy of init containers), the vLLM rewrite (image,
    // command, args) and the well-formedness checks of pod_mutation.cpp.
    const P container = P::members({{"name", {}},
                                    {"image", {}},
                                    {"command", {}},
                                    {"args", {}},
                                    {"resources", {}},
                                    {"restartPolicy", {}}});
    return P::members({
        {"apiVersion", {}},
        {"kind", {}},
        {"metadata", P::members({{"name", {}},
                                 {"generateName", {}},
                                 {"namespace", {}},
                                 {"labels", {}},
                                 {"annotations", {}},
                                 {"ownerReferences", {}}})},
        {"spec", P::members({{"schedulerName", {}},
                             {"containers", P::elements(container)},
                             {"initContainers", P::elements(container)}})},
    });
  }();
  return fields;
}

}  // namespace kubex::decide
