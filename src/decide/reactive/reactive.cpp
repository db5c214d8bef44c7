#include "decide/reactive/reactive.h"

#include <algorithm>

#include "common/time_format.h"
#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

const char* result_name(Result r) {
  switch (r) {
    case Result::kRecommended: return "RECOMMENDED";
    case Result::kUnchanged: return "UNCHANGED";
    case Result::kNoData: return "NO_DATA";
  }
  return "NO_DATA";
}

namespace {

constexpr Query kAllQueries[] = {Query::kComputeUpsize, Query::kComputeScaleBack, Query::kMemoryUpsize,
                                 Query::kMemoryScaleBack};

// kNoData: no included container of any pod has any of the four samples.
bool any_sample(const std::vector<PodInput>& pods) {
  for (const PodInput& pod : pods) {
    for (const ContainerInput& c : pod.containers) {
      if (c.allocation <= 0) continue;
      for (Query q : kAllQueries) {
        if (sample_of(c.samples, q)) return true;
      }
    }
  }
  return false;
}

struct Usages {
  std::vector<PodUsage> upsize, scale_back;
};

Usages usages(const std::vector<PodInput>& pods, const api::SignalConfig& cfg, Query up, Query back) {
  const bool current = is_current_allocation(cfg.prometheus);
  return {usage(pods, up, current), usage(pods, back, current)};
}

const PodUsage* find_usage(const std::vector<PodUsage>& pods, const std::string& name) {
  auto it = std::find_if(pods.begin(), pods.end(), [&](const PodUsage& p) { return p.pod == name; });
  return it == pods.end() ? nullptr : &*it;
}

const PodInput* find_pod(const std::vector<PodInput>& pods, const std::string& name) {
  auto it = std::find_if(pods.begin(), pods.end(), [&](const PodInput& p) { return p.name == name; });
  return it == pods.end() ? nullptr : &*it;
}

// Only the entries of `rec` are compared: the cycle leaves sel's containers as they are.
bool same_as_existing(const std::map<std::string, Hundredths>& rec,
                      const std::map<std::string, Hundredths>& existing) {
  return std::all_of(rec.begin(), rec.end(), [&](const auto& kv) {
    auto it = existing.find(kv.first);
    return it != existing.end() && it->second == kv.second;
  });
}

}  // namespace

static Outcome decide_requests(const Input& in) {
  Outcome out;
  out.requests = in.existing;
  if (in.state) out.state = *in.state;
  if (!in.spec || in.pods.empty()) return out;  // kNoData (X7: no eligible pod)
  const api::ReactiveSpec& spec = *in.spec;
  const std::string stored_driver = in.state ? in.state->driver : "";

  // REA-5: the reactive-state a workload with a reactive entry carries; a workload without one gets a state
  // only with a recommendation.
  out.state.baseline = baselines(in.pods, in.existing, in.state);
  const std::map<std::string, Hundredths> no_baseline;
  const std::map<std::string, Hundredths>& stored_baseline = in.state ? in.state->baseline : no_baseline;
  out.state_changed = !in.existing.empty() && out.state.baseline != stored_baseline;
  if (!any_sample(in.pods)) return out;  // kNoData
  out.result = Result::kUnchanged;

  // REA-4, REA-6, REA-7, REA-11: what each signal offers.
  const Usages compute = usages(in.pods, spec.compute, Query::kComputeUpsize, Query::kComputeScaleBack);
  const Usages memory = usages(in.pods, spec.memory, Query::kMemoryUpsize, Query::kMemoryScaleBack);
  const std::optional<Candidate> compute_offer =
      offer(upsize(compute.upsize, spec.compute.upsize, kCompute), std::nullopt,
            scale_back(compute.scale_back, spec.compute.scale_back, out.state.baseline, kCompute));
  const std::optional<Candidate> memory_offer =
      offer(upsize(memory.upsize, spec.memory.upsize, kMemory),
            oom(in.pods, memory.upsize, spec.memory, in.now),
            scale_back(memory.scale_back, spec.memory.scale_back, out.state.baseline, kMemory));
  if (compute_offer) out.candidates.push_back(*compute_offer);
  if (memory_offer) out.candidates.push_back(*memory_offer);

  // REA-8
  const Candidate* win = winner(compute_offer, memory_offer, stored_driver);
  if (!win) return out;
  const bool compute_won = compute_offer && win == &*compute_offer;
  const std::optional<Candidate>& loser = compute_won ? memory_offer : compute_offer;
  const Candidate* other = loser ? &*loser : nullptr;
  const PodInput* sel = find_pod(in.pods, win->pod);
  const PodUsage* sel_usage = find_usage(compute.upsize, win->pod);  // every query lists the same pods
  if (!sel || !sel_usage) return out;
  out.selected_pod = win->pod;
  out.winner_signal = win->signal;
  if (!accepted(*win, other, stored_driver, existing_total(*sel_usage, in.existing))) return out;
  if (win->oom) out.applied_filters.emplace_back("oom");

  // REA-9
  std::map<std::string, Hundredths> rec = split(*win, *sel);
  if (same_as_existing(rec, in.existing)) return out;
  out.result = Result::kRecommended;
  out.requests = std::move(rec);
  out.driver = win->signal;
  out.state.driver = win->signal;
  out.state.updated_at = common::format_rfc3339(in.now);
  out.state_changed = true;
  return out;
}

Outcome decide(const Input& in) {
  Outcome out = decide_requests(in);
  out.limits = in.existing_limits;
  if (in.record_peak) {
    out.limits = peak_limits(in, out.requests);
    out.limits_changed = out.limits != in.existing_limits;
  }
  return out;
}

}  // namespace kubex::decide::reactive
