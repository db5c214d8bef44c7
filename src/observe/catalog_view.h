// The current decide::policy::Catalog, as its readers need it: observe::CatalogCache in the engine, small fakes
// in tests. A named interface instead of a std::function, so a reader's dependencies say what they are.
#pragma once

#include <memory>

namespace kubex::decide::policy {
class Catalog;
}

namespace kubex::observe {

class CatalogView {
 public:
  virtual ~CatalogView() = default;
  // Cheap when nothing changed since the last call; shared immutably by every reader.
  virtual std::shared_ptr<const decide::policy::Catalog> catalog() const = 0;
};

}  // namespace kubex::observe
