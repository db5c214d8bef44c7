// The parsed metadata of kubex's own cached objects (api/kubex_views.h), by kind, and the "spec changed"
// predicate over two cached versions of one (kube::generation_changed on their ObjectMeta). Read by the
// catalog's change notifications and by the status controllers' informer handlers.
#pragma once

#include "api/kinds.h"
#include "api/objects.h"
#include "common/cached_object.h"

namespace kubex::observe {

// The parsed metadata of a cached kubex object of kind `k`; nullptr for an object of another kind.
const api::ObjectMeta* meta_of(api::Kind k, const common::CachedObject& o);

// metadata.generation moved between two cached versions of a kubex object of kind `k` (its spec changed;
// status writes leave it alone). A missing side counts as a change.
bool generation_changed(api::Kind k, const common::CachedObject* before, const common::CachedObject* after);

}  // namespace kubex::observe
