#pragma once
// Where tests and benchmarks find the repository and the built programs. Both paths are compiled into one
// generated file of the build tree (CMakeLists.txt: kubex_paths), so no other object file holds an absolute path
// and the compiler cache shares every other object between clones in different folders (README, "CI").
namespace kubex_paths {
const char* source_dir();  // the repository root
const char* bin_dir();     // <build>/bin
}  // namespace kubex_paths
