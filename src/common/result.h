// Errors are values: every parser and validator returns Result<T> or a list of FieldErrors.
#pragma once

#include <expected>
#include <string>
#include <utility>
#include <vector>

namespace kubex::common {

// One problem, optionally tied to a JSON field path such as `spec.metrics.compute.upsize.thresholdPercent`.
struct Error {
  std::string path;
  std::string message;

  // "path: message", or just "message" when there is no path.
  std::string str() const { return path.empty() ? message : path + ": " + message; }
};

template <class T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(std::string message, std::string path = {}) {
  return std::unexpected<Error>(Error{std::move(path), std::move(message)});
}

// An ordered list of field errors, as a validator produces them.
class Errors {
 public:
  void add(std::string path, std::string message) { items_.push_back({std::move(path), std::move(message)}); }
  void add(Error e) { items_.push_back(std::move(e)); }
  void append(const Errors& other) { items_.insert(items_.end(), other.items_.begin(), other.items_.end()); }
  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  const std::vector<Error>& items() const { return items_; }
  // All errors joined with "; " (VAL-1).
  std::string str() const {
    std::string out;
    for (const auto& e : items_) {
      if (!out.empty()) out += "; ";
      out += e.str();
    }
    return out;
  }

 private:
  std::vector<Error> items_;
};

// Joins a parent field path and a child name: join_path("spec", "scope") == "spec.scope".
inline std::string join_path(const std::string& parent, const std::string& child) {
  if (parent.empty()) return child;
  if (!child.empty() && child.front() == '[') return parent + child;
  return parent + "." + child;
}

inline std::string index_path(const std::string& parent, std::size_t i) {
  return parent + "[" + std::to_string(i) + "]";
}

}  // namespace kubex::common
