#include "common/intern.h"

#include <mutex>
#include <unordered_set>

namespace kubex::common {
namespace {

struct Hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct Pool {
  std::mutex mu;
  std::unordered_set<std::string, Hash, std::equal_to<>> strings;
  std::size_t bytes = 0;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: interned strings outlive every static object
  return *p;
}

const std::string* intern(std::string_view s) {
  Pool& p = pool();
  std::lock_guard lk(p.mu);
  auto it = p.strings.find(s);
  if (it != p.strings.end()) return &*it;
  auto [ins, _] = p.strings.emplace(s);
  p.bytes += s.size();
  return &*ins;
}

}  // namespace

IStr::IStr() : p_(intern("")) {}
IStr::IStr(std::string_view s) : p_(intern(s)) {}

std::size_t interned_count() {
  std::lock_guard lk(pool().mu);
  return pool().strings.size();
}

std::size_t interned_bytes() {
  std::lock_guard lk(pool().mu);
  return pool().bytes;
}

}  // namespace kubex::common
