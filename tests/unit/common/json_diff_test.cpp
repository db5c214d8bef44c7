// common::json_diff gives exactly nlohmann::json::diff's operations in the same order (the admission patch,
// ADM-2 idempotence and the golden patches depend on them), checked on hand-picked cases and on thousands of
// random documents and mutations of them.
#include "common/json_diff.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

namespace kubex::common {
namespace {

using nlohmann::json;

void expect_same_diff(const json& a, const json& b) {
  json ours = json_diff(a, b);
  json reference = json::diff(a, b);
  ASSERT_EQ(ours.dump(), reference.dump()) << a.dump() << " -> " << b.dump();
  if (a == b) {
    EXPECT_TRUE(ours.empty());
  } else if (a.is_structured() && b.is_structured()) {
    EXPECT_EQ(a.patch(ours), b) << ours.dump();
  }
}

TEST(JsonDiff, HandPickedCases) {
  const std::vector<std::pair<json, json>> cases = {
      {json::object(), json::object()},
      {{{"a", 1}}, {{"a", 2}}},
      {{{"a", 1}}, {{"a", 1.0}}},  // numerically equal: no operation, as nlohmann
      {{{"a", 1}}, {{"b", 1}}},
      {{{"a/b~c", 1}}, {{"a/b~c", 2}, {"x~/", true}}},  // RFC 6901 escapes
      {json::array({1, 2, 3, 4}), json::array({1})},    // removals from the end
      {json::array({1}), json::array({1, 2, 3})},
      {json::array({1, json::object()}), json::array({"x", {{"k", nullptr}}})},
      {{{"spec", {{"containers", json::array({{{"name", "a"}, {"args", json::array({"--x", "1"})}}})}}}},
       {{"spec",
         {{"containers", json::array({{{"name", "a"}, {"args", json::array({"--x", "0.5", "--y"})}}})}}}}},
      {1, "1"},
      {nullptr, json::object()},
      {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()},
  };
  for (const auto& [a, b] : cases) {
    expect_same_diff(a, b);
    expect_same_diff(b, a);
  }
}

json random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 3 ? 4 : 7);
  switch (kind(rng)) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<int>(rng() % 5) - 2;
    case 3:
      return (rng() % 4) * 0.5;
    case 4:
      return std::string(1, static_cast<char>('a' + rng() % 3));
    case 5:
    case 6: {
      json o = json::object();
      int n = static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i)
        o[std::string(1, static_cast<char>('k' + rng() % 5))] = random_value(rng, depth + 1);
      return o;
    }
    default: {
      json a = json::array();
      int n = static_cast<int>(rng() % 5);
      for (int i = 0; i < n; ++i) a.push_back(random_value(rng, depth + 1));
      return a;
    }
  }
}

// Changes a few places of v (replace, add, remove), so the pair shares most of its structure.
void mutate(json& v, std::mt19937& rng, int depth = 0) {
  if (v.is_object() && !v.empty() && rng() % 4 != 0) {
    auto it = v.begin();
    std::advance(it, rng() % v.size());
    switch (rng() % 3) {
      case 0:
        mutate(*it, rng, depth + 1);
        break;
      case 1:
        v.erase(it.key());
        break;
      default:
        v[std::string(1, static_cast<char>('k' + rng() % 7))] = random_value(rng, depth + 1);
    }
  } else if (v.is_array() && !v.empty() && rng() % 4 != 0) {
    switch (rng() % 3) {
      case 0:
        mutate(v[rng() % v.size()], rng, depth + 1);
        break;
      case 1:
        v.erase(v.begin() + static_cast<long>(rng() % v.size()));
        break;
      default:
        v.push_back(random_value(rng, depth + 1));
    }
  } else {
    v = random_value(rng, depth);
  }
}

TEST(JsonDiff, RandomDocumentsAndMutations) {
  std::mt19937 rng(20261201);
  for (int i = 0; i < 3000; ++i) {
    json a = random_value(rng, 0);
    json b = a;
    for (int m = 0; m < 1 + static_cast<int>(rng() % 3); ++m) mutate(b, rng);
    expect_same_diff(a, b);
    expect_same_diff(b, a);
    expect_same_diff(a, random_value(rng, 0));
  }
}

}  // namespace
}  // namespace kubex::common
