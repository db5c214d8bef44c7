// Forward declarations of the observe/ room's main types, for headers that only pass them by reference.
#pragma once

namespace kubex::observe {
struct Caches;
class CatalogCache;
class OwnerResolver;
}  // namespace kubex::observe
