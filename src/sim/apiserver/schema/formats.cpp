// String formats (k8s.io/kube-openapi strfmt) as kube-apiserver checks them.
#include "sim/apiserver/schema/formats.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "common/utf8.h"

namespace kubex::sim::schema {
namespace {

bool two_digits(std::string_view s, std::size_t at) {
  return at + 2 <= s.size() && std::isdigit(static_cast<unsigned char>(s[at])) &&
         std::isdigit(static_cast<unsigned char>(s[at + 1]));
}

int num_at(std::string_view s, std::size_t at, std::size_t len) {
  int v = 0;
  for (std::size_t i = at; i < at + len; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

}  // namespace

// time.Parse("2006-01-02", s) == nil
bool is_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  if (!two_digits(s, 0) || !two_digits(s, 2) || !two_digits(s, 5) || !two_digits(s, 8)) return false;
  const int year = num_at(s, 0, 4), month = num_at(s, 5, 2), day = num_at(s, 8, 2);
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int max_day = kDays[month - 1];
  if (month == 2 && year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) max_day = 29;
  return day <= max_day;
}

namespace {

bool is_zone(std::string_view z) {
  if (z == "z") return true;
  return z.size() == 6 && (z[0] == '+' || z[0] == '-') && two_digits(z, 1) && z[3] == ':' && two_digits(z, 4);
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

// strfmt.IsDateTime: lower-cased, split at "t", a full-date and then
// ^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$ with hh<=23, mm<=59, ss<=59.
bool is_date_time(std::string_view str) {
  if (str.size() < 4) return false;
  std::string lower(str);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view s = lower;
  auto t1 = s.find('t');
  if (t1 == std::string_view::npos || !is_date(s.substr(0, t1))) return false;
  std::string_view time = s.substr(t1 + 1);
  time = time.substr(0, time.find('t'));
  if (time.size() < 9 || !two_digits(time, 0) || time[2] != ':' || !two_digits(time, 3) || time[5] != ':' ||
      !two_digits(time, 6)) {
    return false;
  }
  if (num_at(time, 0, 2) > 23 || num_at(time, 3, 2) > 59 || num_at(time, 6, 2) > 59) return false;
  std::string_view tail = time.substr(8);
  if (is_zone(tail)) return true;
  // One character (not a newline), digits, then the zone.
  std::size_t i = 0;
  if (tail.empty() || tail[0] == '\n') return false;
  common::utf8_next(tail, i);
  std::string_view rest = tail.substr(i);
  if (!rest.empty() && rest.back() == 'z' && all_digits(rest.substr(0, rest.size() - 1))) return true;
  return rest.size() > 6 && is_zone(rest.substr(rest.size() - 6)) &&
         all_digits(rest.substr(0, rest.size() - 6));
}

// Formats kube-apiserver keeps on string (or untyped) schemas, normalised without "-".
bool is_supported_string_format(std::string_view normalized) {
  static constexpr std::string_view kFormats[] = {
      "bsonobjectid", "uri",        "email",    "hostname",     "ipv4",       "ipv6", "cidr",
      "mac",          "uuid",       "uuid3",    "uuid4",        "uuid5",      "isbn", "isbn10",
      "isbn13",       "creditcard", "ssn",      "hexcolor",     "rgbcolor",   "byte", "password",
      "date",         "duration",   "datetime", "k8sshortname", "k8slongname"};
  return std::find(std::begin(kFormats), std::end(kFormats), normalized) != std::end(kFormats);
}

}  // namespace kubex::sim::schema
