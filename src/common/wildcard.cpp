#include "common/wildcard.h"

#include <cstddef>
#include <vector>

namespace kubex::common {
namespace {

// Leftmost occurrence of `needle` in `hay` at or after `from` (Knuth-Morris-Pratt); npos when absent.
std::size_t find_kmp(std::string_view hay, std::string_view needle, std::size_t from) {
  if (needle.empty()) return from;
  std::vector<std::size_t> border(needle.size(), 0);
  for (std::size_t i = 1, k = 0; i < needle.size(); ++i) {
    while (k > 0 && needle[i] != needle[k]) k = border[k - 1];
    if (needle[i] == needle[k]) ++k;
    border[i] = k;
  }
  for (std::size_t i = from, k = 0; i < hay.size(); ++i) {
    while (k > 0 && hay[i] != needle[k]) k = border[k - 1];
    if (hay[i] == needle[k]) ++k;
    if (k == needle.size()) return i + 1 - needle.size();
  }
  return std::string_view::npos;
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view text) {
  std::size_t first_star = pattern.find('*');
  if (first_star == std::string_view::npos) return pattern == text;
  std::size_t last_star = pattern.rfind('*');
  std::string_view prefix = pattern.substr(0, first_star);
  std::string_view suffix = pattern.substr(last_star + 1);
  if (text.size() < prefix.size() + suffix.size()) return false;
  if (text.substr(0, prefix.size()) != prefix) return false;
  if (text.substr(text.size() - suffix.size()) != suffix) return false;

  // Middle pieces must appear in order, without overlapping the prefix or the suffix.
  std::string_view middle_text = text.substr(0, text.size() - suffix.size());
  std::size_t pos = prefix.size();
  std::size_t i = first_star + 1;
  while (i <= last_star) {
    std::size_t next = pattern.find('*', i);
    std::string_view piece = pattern.substr(i, next - i);
    if (!piece.empty()) {
      std::size_t at = find_kmp(middle_text, piece, pos);
      if (at == std::string_view::npos) return false;
      pos = at + piece.size();
    }
    i = next + 1;
  }
  return true;
}

}  // namespace kubex::common
