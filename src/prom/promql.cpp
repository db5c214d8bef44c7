#include "prom/promql.h"

#include <algorithm>

namespace kubex::prom {

namespace {

// `label=~"a|b|c"` over the sorted, de-duplicated values.
std::string regex_matcher(const std::string& label, std::vector<std::string_view> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::string alternation;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) alternation += '|';
    alternation += regex_escape(values[i]);
  }
  return label + "=~" + string_literal(alternation);
}

}  // namespace

bool is_counter(std::string_view metric) { return metric.ends_with("_total"); }

std::string regex_escape(std::string_view s) {
  static constexpr std::string_view kMeta = "\\.+*?()|[]{}^$";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (kMeta.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string string_literal(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  out += '"';
  return out;
}

std::string signal_query(const SignalSelector& s, Reduction r, std::span<const PodName> pods,
                         std::chrono::seconds window) {
  std::vector<std::string_view> namespaces, names;
  namespaces.reserve(pods.size());
  names.reserve(pods.size());
  for (const auto& p : pods) {
    namespaces.push_back(p.ns);
    names.push_back(p.name);
  }
  std::string selector = s.metric + "{" + regex_matcher(s.namespace_label, std::move(namespaces)) + "," +
                         regex_matcher(s.pod_label, std::move(names)) + "}";
  std::string w = std::to_string(window.count()) + "s";
  // REA-3: a counter's gauge is its per-second rate, read through a subquery at a 30 s resolution.
  std::string range = is_counter(s.metric) ? "rate(" + selector + "[1m])[" + w + ":30s]" : selector + "[" + w + "]";
  std::string reduced = r == Reduction::kQuantile95 ? "quantile_over_time(0.95, " + range + ")"
                        : r == Reduction::kMax     ? "max_over_time(" + range + ")"
                                                   : "stddev_over_time(" + range + ")";
  std::string agg = s.agg == Aggregation::kSum ? "sum" : "avg";
  return agg + " by (" + s.namespace_label + "," + s.pod_label + "," + s.container_label + ") (" + reduced + ")";
}

std::vector<std::string> signal_queries(const SignalSelector& s, Reduction r, std::vector<PodName> pods,
                                        std::chrono::seconds window) {
  std::sort(pods.begin(), pods.end());
  pods.erase(std::unique(pods.begin(), pods.end()), pods.end());
  std::vector<std::string> out;
  out.reserve((pods.size() + kMaxPodsPerQuery - 1) / kMaxPodsPerQuery);
  for (std::size_t i = 0; i < pods.size(); i += kMaxPodsPerQuery) {
    std::size_t n = std::min(kMaxPodsPerQuery, pods.size() - i);
    out.push_back(signal_query(s, r, std::span<const PodName>(pods).subspan(i, n), window));
  }
  return out;
}

}  // namespace kubex::prom
