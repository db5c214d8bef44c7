// The base of every cached projection (PodView, NodeView, WorkloadView, typed kubex objects): the
// identity an informer keys its store by.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "common/intern.h"

namespace kubex::common {

struct CachedObject {
  virtual ~CachedObject() = default;
  IStr ns;           // interned: few distinct values
  std::string name;  // not interned: names churn (replacement pods) and interned strings live forever
  std::string resource_version;
  std::string key() const { return ns.empty() ? name : ns.str() + "/" + name; }
};
using ObjectPtr = std::shared_ptr<const CachedObject>;

// Fills ns/name/resource_version from the object's metadata.
void fill_meta(CachedObject& out, const nlohmann::json& obj);

}  // namespace kubex::common
