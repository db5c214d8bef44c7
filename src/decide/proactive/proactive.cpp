#include "decide/proactive/proactive.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace kubex::decide {

namespace {

constexpr const char* kWorkloadKinds[] = {"Deployment", "StatefulSet", "DaemonSet",     "Job",  "CronJob",
                                          "Rollout",    "AnalysisRun", "StrimziPodSet", "Model"};

std::string supported_kinds() {
  std::string out;
  for (const char* k : kWorkloadKinds) {
    if (!out.empty()) out += ", ";
    out += std::string("\"") + k + "\"";
  }
  return out;
}

}  // namespace

ProactiveValue proactive_value(double compute_gpus, double memory_gpus, int headroom_percent,
                               const api::StrategySpec& strategy, const std::string& container) {
  const double base = std::max(compute_gpus, memory_gpus);
  const double with_headroom = base * (1.0 + std::max(headroom_percent, 0) / 100.0);
  return clamp_proactive(desired_value(with_headroom), strategy, container);
}

ProactiveValue clamp_proactive(Hundredths gpu, const api::StrategySpec& strategy,
                               const std::string& container) {
  ProactiveValue v;
  v.gpu = desired_value(gpu);
  v.clamp = clamp_gpu(v.gpu, strategy.gpu_requests, container);
  return v;
}

common::Result<RecommendationSet> parse_recommendations(std::string_view text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return common::fail("recommendations.json: not valid JSON");
  if (!doc.is_array()) return common::fail("recommendations.json: must be a JSON array");
  RecommendationSet set;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& e = doc[i];
    const std::string path = common::index_path("", i);
    if (!e.is_object()) {
      set.problems.push_back({path, "must be an object"});
      continue;
    }
    const std::size_t before = set.problems.size();
    RecommendationKey key;
    for (auto [field, out] : {std::pair{"namespace", &key.ns}, std::pair{"kind", &key.kind},
                              std::pair{"name", &key.name}, std::pair{"container", &key.container}}) {
      auto it = e.find(field);
      if (it == e.end() || it->is_null() || (it->is_string() && it->get_ref<const std::string&>().empty())) {
        set.problems.push_back({common::join_path(path, field), "required"});
      } else if (!it->is_string()) {
        set.problems.push_back({common::join_path(path, field), "must be a string"});
      } else {
        *out = it->get<std::string>();
      }
    }
    if (!key.kind.empty() && std::none_of(std::begin(kWorkloadKinds), std::end(kWorkloadKinds),
                                          [&](const char* k) { return key.kind == k; })) {
      set.problems.push_back(
          {common::join_path(path, "kind"),
           "unsupported value \"" + key.kind + "\": supported values: " + supported_kinds()});
    }
    Hundredths gpu = 0;
    auto g = e.find("gpu");
    if (g == e.end() || g->is_null()) {
      set.problems.push_back({common::join_path(path, "gpu"), "required"});
    } else if (auto h = parse_gpu_json(*g)) {
      gpu = *h;
    } else {
      set.problems.push_back({common::join_path(path, "gpu"), h.error().message});
    }
    if (set.problems.size() != before) continue;
    set.entries[key] = gpu;
    ++set.accepted;
  }
  return set;
}

std::string recommendations_loaded_message(const RecommendationSet& set, std::string_view location) {
  std::string message =
      "loaded " + std::to_string(set.accepted) + " recommendations from ConfigMap " + std::string(location);
  if (set.entries.size() != set.accepted) {
    message += " (" + std::to_string(set.entries.size()) + " after repeats: the last one wins)";
  }
  if (!set.problems.empty()) {
    // One entry can have several problems; each entry is counted once.
    std::set<std::string> skipped;
    for (const auto& p : set.problems) skipped.insert(p.path.substr(0, p.path.find(']') + 1));
    message += "; skipped " + std::to_string(skipped.size()) +
               (skipped.size() == 1 ? " invalid entry: " : " invalid entries: ");
    for (std::size_t i = 0; i < set.problems.size(); ++i) message += (i ? "; " : "") + set.problems[i].str();
  }
  return message;
}

}  // namespace kubex::decide
