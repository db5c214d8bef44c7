#include "common/cached_object.h"

#include <nlohmann/json.hpp>

namespace kubex::common {

void fill_meta(CachedObject& out, const nlohmann::json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return;
  const nlohmann::json& m = obj["metadata"];
  out.ns = IStr(m.value("namespace", ""));
  out.name = m.value("name", "");
  out.resource_version = m.value("resourceVersion", "");
}

}  // namespace kubex::common
