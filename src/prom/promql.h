// PromQL text for the REA-3 signal queries. Pure: no I/O, no state.
//
// A signal query reads one metric for a set of pods, reduced over a window and aggregated per container:
//   compute (gauge):   sum by (<ns>,<pod>,<ctr>) (quantile_over_time(0.95, <metric>{<ns>=~"a|b",<pod>=~"p|q"}[600s]))
//   memory  (gauge):   avg by (<ns>,<pod>,<ctr>) (max_over_time(<metric>{…}[600s]))
//   a counter (`…_total`) is read as the gauge rate(<metric>{…}[1m]) through a subquery:
//                      sum by (…) (quantile_over_time(0.95, rate(<metric>{…}[1m])[600s:30s]))
// Pod and namespace names are regex-escaped (RE2) and then written as PromQL double-quoted strings, so pod
// `a.b` appears in the query text as "a\\.b".
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kubex::prom {

inline constexpr std::size_t kMaxPodsPerQuery = 500;  // REA-3

// compute: quantile_over_time(0.95, …); memory: max_over_time(…); kStddev: stddev_over_time(…), TEL-4's check
// that a series moved.
enum class Reduction { kQuantile95, kMax, kStddev };
// fullGPU: sum; currentAllocation: avg (REA-3).
enum class Aggregation { kSum, kAvg };

// The metric and the three label names of one signal (spec.metrics.<signal>.prometheus).
struct SignalSelector {
  std::string metric, namespace_label, pod_label, container_label;
  Aggregation agg = Aggregation::kSum;
};

struct PodName {
  std::string ns, name;
  friend auto operator<=>(const PodName&, const PodName&) = default;
};

// The metric name ends in "_total": a counter, read through rate() (REA-3).
bool is_counter(std::string_view metric);

// Every RE2 metacharacter (\ . + * ? ( ) | [ ] { } ^ $) preceded by a backslash, like Go's regexp.QuoteMeta:
// the result matches exactly `s`.
std::string regex_escape(std::string_view s);

// `s` as a PromQL double-quoted string: backslash and double quote escaped with a backslash (and newline,
// carriage return and tab written as \n, \r, \t, which a double-quoted string cannot hold raw).
std::string string_literal(std::string_view s);

// One query over `pods` (1..kMaxPodsPerQuery of them; the matchers list their namespaces and names, each
// sorted and de-duplicated), window W in whole seconds (sub-second parts are dropped). The caller keeps to
// the 500-pod limit; signal_queries does the splitting.
std::string signal_query(const SignalSelector& s, Reduction r, std::span<const PodName> pods,
                         std::chrono::seconds window);

// ⌈pods/500⌉ queries (REA-3): pods sorted by (ns, name), de-duplicated, split into chunks of at most 500 in
// that order; each chunk's namespace matcher lists only that chunk's namespaces (sorted, unique). No pods ->
// no queries (never a query that matches everything).
std::vector<std::string> signal_queries(const SignalSelector& s, Reduction r, std::vector<PodName> pods,
                                        std::chrono::seconds window);

}  // namespace kubex::prom
