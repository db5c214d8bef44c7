#include "prom/history_queries.h"

#include <algorithm>
#include <map>

#include "prom/promql.h"

namespace kubex::prom {

namespace {

constexpr std::string_view kLabels = "namespace,pod,container";

// `[a-z0-9]+` (alnum) or `[0-9]+` (digits) after a dash: the suffix regexes of pod_pattern as token lists.
enum class Token { kAlnum, kDigits };

std::vector<Token> tokens_of(std::string_view suffix) {
  std::vector<Token> out;
  for (std::size_t i = 0; i < suffix.size();) {
    std::string_view rest = suffix.substr(i);
    if (rest.starts_with("-[a-z0-9]+")) {
      out.push_back(Token::kAlnum);
      i += 10;
    } else if (rest.starts_with("-[0-9]+")) {
      out.push_back(Token::kDigits);
      i += 7;
    } else {
      return {};
    }
  }
  return out;
}

bool token_char(Token t, char c) {
  return (c >= '0' && c <= '9') || (t == Token::kAlnum && c >= 'a' && c <= 'z');
}

// Whether `rest` is exactly the dash-separated tokens (each one character or more), like the anchored regex.
bool matches_tokens(std::string_view rest, const std::vector<Token>& tokens) {
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (rest.empty() || rest[0] != '-') return false;
    rest.remove_prefix(1);
    std::size_t n = 0;
    while (n < rest.size() && token_char(tokens[t], rest[n])) ++n;
    if (n == 0) return false;
    // The last token takes the rest; an earlier one ends at a dash (its characters never include '-').
    if (t + 1 == tokens.size() && n != rest.size()) return false;
    rest.remove_prefix(n);
  }
  return rest.empty();
}

std::string selector(std::string_view metric, const std::vector<HistoryWorkload>& batch, bool whole_gpu_only,
                     bool kai_only) {
  std::vector<HistoryWorkload> picked;
  for (const auto& w : batch) {
    if ((whole_gpu_only && !w.whole_gpu) || (kai_only && w.whole_gpu)) continue;
    picked.push_back(w);
  }
  return std::string(metric) + "{" + history_matchers(picked, "namespace", "pod") + "}";
}

}  // namespace

std::optional<PodPattern> pod_pattern(std::string_view kind) {
  if (kind == "Deployment" || kind == "Rollout") return PodPattern{"", "-[a-z0-9]+-[a-z0-9]+"};
  if (kind == "StatefulSet" || kind == "StrimziPodSet") return PodPattern{"", "-[0-9]+"};
  if (kind == "DaemonSet" || kind == "Job") return PodPattern{"", "-[a-z0-9]+"};
  if (kind == "CronJob") return PodPattern{"", "-[0-9]+-[a-z0-9]+"};
  if (kind == "Model") return PodPattern{"model-", "-[a-z0-9]+-[a-z0-9]+"};
  return std::nullopt;
}

std::string history_matchers(const std::vector<HistoryWorkload>& batch, std::string_view namespace_label,
                             std::string_view pod_label) {
  std::vector<std::string> namespaces, names;
  PodPattern pattern{"", ""};
  for (const auto& w : batch) {
    namespaces.push_back(regex_escape(w.ns));
    names.push_back(regex_escape(w.name));
    if (auto p = pod_pattern(w.kind)) pattern = *p;
  }
  for (auto* v : {&namespaces, &names}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  std::string ns_alt, name_alt;
  for (const auto& n : namespaces) ns_alt += (ns_alt.empty() ? "" : "|") + n;
  for (const auto& n : names) name_alt += (name_alt.empty() ? "" : "|") + n;
  std::string pod = std::string(pattern.prefix) + "(" + name_alt + ")" + std::string(pattern.suffix);
  return std::string(namespace_label) + "=~" + string_literal(ns_alt) + "," + std::string(pod_label) + "=~" +
         string_literal(pod);
}

std::string history_query(HistorySignal signal, const std::vector<HistoryWorkload>& batch,
                          std::chrono::seconds lookback) {
  const std::string l = std::to_string(lookback.count()) + "s";
  const std::string by = " by (" + std::string(kLabels) + ") ";
  switch (signal) {
    case HistorySignal::kCompute:
      return "sum" + by + "(quantile_over_time(0.95, " + selector(kHistoryComputeMetric, batch, false, false) + "[" +
             l + "]))";
    case HistorySignal::kMemory: {
      // KAI fraction pods: the footprint is relative to the allocation, averaged over the pod's containers' GPU
      // (one device); whole-GPU pods: relative to one device, summed over the devices (PRO-2).
      const bool kai = std::any_of(batch.begin(), batch.end(), [](const auto& w) { return !w.whole_gpu; });
      const bool whole = std::any_of(batch.begin(), batch.end(), [](const auto& w) { return w.whole_gpu; });
      std::string q;
      if (kai) q = "avg" + by + "(max_over_time(" + selector(kHistoryMemoryMetric, batch, false, true) + "[" + l + "]))";
      if (whole) {
        q += (q.empty() ? "" : " or ") + std::string("sum") + by + "(max_over_time(" +
             selector(kHistoryMemoryMetric, batch, true, false) + "[" + l + "]))";
      }
      return q;
    }
    case HistorySignal::kComputeSpan:
    case HistorySignal::kMemorySpan: {
      std::string_view metric = signal == HistorySignal::kComputeSpan ? kHistoryComputeMetric : kHistoryMemoryMetric;
      return "min" + by + "(min_over_time(timestamp(" + selector(metric, batch, false, false) + ")[" + l + ":5m]))";
    }
  }
  return "";
}

std::vector<std::vector<HistoryWorkload>> history_batches(std::vector<HistoryWorkload> workloads) {
  std::map<std::string, std::vector<HistoryWorkload>> by_kind;
  for (auto& w : workloads) {
    if (pod_pattern(w.kind)) by_kind[w.kind].push_back(std::move(w));
  }
  std::vector<std::vector<HistoryWorkload>> out;
  for (auto& [kind, list] : by_kind) {
    std::sort(list.begin(), list.end(),
              [](const auto& a, const auto& b) { return std::tie(a.ns, a.name) < std::tie(b.ns, b.name); });
    list.erase(std::unique(list.begin(), list.end(),
                           [](const auto& a, const auto& b) { return a.ns == b.ns && a.name == b.name; }),
               list.end());
    for (std::size_t i = 0; i < list.size(); i += kMaxWorkloadsPerHistoryQuery) {
      auto end = list.begin() + static_cast<std::ptrdiff_t>(std::min(list.size(), i + kMaxWorkloadsPerHistoryQuery));
      out.emplace_back(list.begin() + static_cast<std::ptrdiff_t>(i), end);
    }
  }
  return out;
}

const HistoryWorkload* history_owner(const std::vector<HistoryWorkload>& batch, std::string_view ns,
                                     std::string_view pod) {
  const HistoryWorkload* best = nullptr;
  for (const auto& w : batch) {
    if (w.ns != ns) continue;
    auto pattern = pod_pattern(w.kind);
    if (!pattern) continue;
    std::string head = std::string(pattern->prefix) + w.name;
    if (!pod.starts_with(head)) continue;
    if (!matches_tokens(pod.substr(head.size()), tokens_of(pattern->suffix))) continue;
    if (!best || w.name.size() > best->name.size()) best = &w;
  }
  return best;
}

}  // namespace kubex::prom
