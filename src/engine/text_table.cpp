#include "engine/text_table.h"

#include <algorithm>
#include <ostream>

namespace kubex::engine {

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<std::size_t> width;
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (const auto& r : rows) {
    std::string line = indent;
    for (std::size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

}  // namespace kubex::engine
