// Interned strings: one shared copy per distinct value for the names, namespaces, label keys and values
// that repeat across thousands of cached objects (DESIGN §2.3). Interned strings are never freed; the pool
// grows with the number of DISTINCT values only.
#pragma once

#include <string>
#include <string_view>

namespace kubex::common {

// An immutable, interned string: 8 bytes, compared by pointer.
class IStr {
 public:
  IStr();  // the empty string
  explicit IStr(std::string_view s);
  const std::string& str() const { return *p_; }
  std::string_view view() const { return *p_; }
  bool empty() const { return p_->empty(); }
  friend bool operator==(IStr a, IStr b) { return a.p_ == b.p_; }
  friend bool operator<(IStr a, IStr b) { return *a.p_ < *b.p_; }
  operator const std::string&() const { return *p_; }

 private:
  const std::string* p_;
};

// Number of distinct interned strings and their total size (for memory reports).
std::size_t interned_count();
std::size_t interned_bytes();

}  // namespace kubex::common
