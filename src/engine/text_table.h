// Column-aligned text tables for the operator commands' default output (SPEC §13a): kubex plan and kubex explain.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace kubex::engine {

// Writes `rows` with every column padded to its widest cell (two spaces apart), each line prefixed by `indent`;
// the last column is not padded.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const std::string& indent);

}  // namespace kubex::engine
