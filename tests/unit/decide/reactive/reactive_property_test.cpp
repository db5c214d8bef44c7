// Properties of decide() over 20,000 seeded random inputs (deterministic): the REA-6 step cap, the REA-7
// baseline floor, "missing or partial data never causes a downsize", GPU-2 output, and order independence.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "decide/gpu_value.h"
#include "decide/reactive/reactive.h"
#include "reactive_fixtures.h"

namespace kubex::decide::reactive::test {
namespace {

constexpr int kCases = 20'000;
const char* const kContainers[] = {"a", "b", "c"};

struct Gen {
  std::mt19937 rng{20261201};
  int between(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng); }
  double missing = 0.15;  // per case: some cases have every sample
  double low = 0.2;       // per case: some cases run far below their allocation
  std::optional<double> sample() {
    if (chance(missing)) return std::nullopt;
    if (chance(0.2)) return static_cast<double>(between(0, 25) * 10);  // round values hit thresholds exactly
    if (chance(low)) return between(0, 600) / 10.0;
    return between(0, 2500) / 10.0;
  }
};

struct Case {
  api::ReactiveSpec spec;
  Input in;
};

api::ReactiveSpec random_spec(Gen& g) {
  api::ReactiveSpec s = starter();
  for (api::SignalConfig* cfg : {&s.compute, &s.memory}) {
    cfg->prometheus.interpretation = g.chance(0.5) ? "fullGPU" : "currentAllocation";
    cfg->upsize = {g.between(1, 200), std::chrono::minutes(g.between(1, 20)), g.between(0, 100),
                   g.between(1, 400)};
    cfg->scale_back = {g.between(1, 150), std::chrono::minutes(g.between(1, 20)), g.between(0, 100)};
  }
  return s;
}

Case random_case(Gen& g) {
  Case c;
  g.missing = g.chance(0.4) ? 0.0 : 0.15;
  g.low = g.chance(0.5) ? 0.9 : 0.2;
  c.spec = random_spec(g);
  c.in.now = kNow;
  const int containers = g.between(1, 3), pods = g.between(0, 4);
  const bool same_allocation = g.chance(0.7);  // pods of one template usually agree
  std::vector<Hundredths> template_alloc;
  for (int i = 0; i < containers; ++i) template_alloc.push_back(g.chance(0.15) ? 0 : g.between(1, 400));
  for (int p = 0; p < pods; ++p) {
    PodInput pod{"p-" + std::to_string(g.between(0, 9)) + std::to_string(p), {}, ""};
    for (int i = 0; i < containers; ++i) {
      ContainerInput ctr{kContainers[i], same_allocation ? template_alloc[i] : g.between(0, 400), {}, {}};
      ctr.samples = {g.sample(), g.sample(), g.sample(), g.sample(), std::nullopt};
      if (g.chance(0.2)) ctr.last_terminated_at = kNow - std::chrono::seconds(g.between(-60, 1800));
      pod.containers.push_back(ctr);
    }
    c.in.pods.push_back(pod);
  }
  if (g.chance(0.6)) {
    for (int i = 0; i < containers; ++i) {
      if (g.chance(0.85)) c.in.existing[kContainers[i]] = g.between(1, 600);
    }
  }
  if (g.chance(0.7)) {
    State s;
    for (int i = 0; i < containers; ++i) {
      if (g.chance(0.8)) s.baseline[kContainers[i]] = g.between(1, 400);
    }
    const char* drivers[] = {"", "compute", "memory"};
    s.driver = drivers[g.between(0, 2)];
    s.updated_at = "2026-12-01T10:00:00Z";
    c.in.state = s;
  }
  return c;
}

const PodInput& pod_named(const Input& in, const std::string& name) {
  return *std::find_if(in.pods.begin(), in.pods.end(), [&](const PodInput& p) { return p.name == name; });
}

Hundredths allocated(const PodInput& p) {
  Hundredths a = 0;
  for (const auto& c : p.containers) a += std::max<Hundredths>(c.allocation, 0);
  return a;
}

const Candidate& winning(const Outcome& out) {
  return *std::find_if(out.candidates.begin(), out.candidates.end(), [&](const Candidate& c) {
    return c.signal == out.driver && c.pod == out.selected_pod;
  });
}

// Drops the scale-back sample of one included container of each signal (so neither signal may scale back),
// then more samples at random.
void remove_samples(Gen& g, Input& in) {
  std::vector<ContainerInput*> included;
  for (auto& p : in.pods) {
    for (auto& c : p.containers) {
      if (c.allocation > 0) included.push_back(&c);
    }
  }
  if (included.empty()) return;
  included[g.between(0, static_cast<int>(included.size()) - 1)]->samples.compute_scale_back.reset();
  included[g.between(0, static_cast<int>(included.size()) - 1)]->samples.memory_scale_back.reset();
  for (ContainerInput* c : included) {
    for (std::optional<double>* s : {&c->samples.compute_upsize, &c->samples.compute_scale_back,
                                     &c->samples.memory_upsize, &c->samples.memory_scale_back}) {
      if (g.chance(0.2)) s->reset();
    }
  }
}

TEST(ReactiveProperty, RandomInputs) {
  Gen g;
  int recommended = 0, upsizes = 0, scale_backs = 0, ooms = 0, partial_recommended = 0;
  for (int i = 0; i < kCases; ++i) {
    Case c = random_case(g);
    c.in.spec = &c.spec;
    const Outcome out = decide(c.in);
    SCOPED_TRACE(::testing::Message() << "case " << i);

    // GPU-2: every value written is ≥ 0.01 and survives format_gpu -> parse (and the annotation round trip).
    for (const auto& [name, v] : out.requests) {
      ASSERT_GE(v, 1) << name;
      auto back = parse_gpu_json(nlohmann::json(format_gpu(v)));
      ASSERT_TRUE(back);
      ASSERT_EQ(*back, v);
    }
    auto doc = parse_requests(format_requests(out.requests));
    ASSERT_TRUE(doc);
    ASSERT_EQ(*doc, out.requests);
    auto st = parse_state(format_state(out.state));
    ASSERT_TRUE(st);
    ASSERT_EQ(*st, out.state);

    if (out.result != Result::kRecommended) {
      ASSERT_EQ(out.requests, c.in.existing);  // nothing changes without a recommendation
      ASSERT_EQ(out.state.driver, c.in.state ? c.in.state->driver : "");
      if (c.in.existing.empty()) {
        ASSERT_FALSE(out.state_changed);
      }
    } else {
      ++recommended;
      ASSERT_TRUE(out.state_changed);
      const PodInput& sel = pod_named(c.in, out.selected_pod);
      const Candidate& win = winning(out);
      const Hundredths a_sel = allocated(sel);
      Hundredths sum = 0, b = 0;
      for (const auto& ctr : sel.containers) {
        if (ctr.allocation <= 0) {
          ASSERT_FALSE(out.requests.contains(ctr.name));  // REA-2: left out of the output
          continue;
        }
        sum += out.requests.at(ctr.name);
        b += out.state.baseline.at(ctr.name);
      }
      if (win.direction == "upsize") {
        ++upsizes;
        ooms += win.oom ? 1 : 0;
        const int max_percent = (win.signal == "compute" ? c.spec.compute : c.spec.memory).upsize.max_percent;
        // REA-6: one step never exceeds A_sel × maxPercent/100 (rounded up per GPU-2), per container too.
        ASSERT_LE(win.total, round_up(a_sel / 100.0 * max_percent / 100.0));
        ASSERT_GT(win.total, a_sel);
        for (const auto& ctr : sel.containers) {
          if (ctr.allocation <= 0) continue;
          ASSERT_LE(out.requests.at(ctr.name), round_up(ctr.allocation / 100.0 * max_percent / 100.0));
          ASSERT_GE(out.requests.at(ctr.name), ctr.allocation);
        }
      } else {
        ++scale_backs;
        // REA-7: scale-back never goes below B, and only goes down.
        ASSERT_GE(win.total, b);
        ASSERT_GE(sum, b);
        ASSERT_LT(win.total, a_sel);
        for (const auto& ctr : sel.containers) {
          if (ctr.allocation > 0) {
            ASSERT_LE(out.requests.at(ctr.name), ctr.allocation);
          }
        }
      }
    }

    // The order of the pods does not matter.
    Input reversed = c.in;
    std::reverse(reversed.pods.begin(), reversed.pods.end());
    const Outcome rev = decide(reversed);
    ASSERT_EQ(rev.result, out.result);
    ASSERT_EQ(rev.requests, out.requests);
    ASSERT_EQ(rev.state, out.state);

    // REA-7: missing or partial data never causes a downsize.
    Input partial = c.in;
    remove_samples(g, partial);
    const Outcome p = decide(partial);
    for (const Candidate& cand : p.candidates) ASSERT_NE(cand.direction, "scaleBack");
    if (p.result != Result::kRecommended) {
      ASSERT_EQ(p.requests, c.in.existing);
      continue;
    }
    ++partial_recommended;
    const PodInput& sel = pod_named(partial, p.selected_pod);
    Hundredths sum = 0, existing = 0;
    bool has_existing = true;
    for (const auto& ctr : sel.containers) {
      if (ctr.allocation <= 0) continue;
      ASSERT_GE(p.requests.at(ctr.name), ctr.allocation) << ctr.name;  // never below the current allocation
      sum += p.requests.at(ctr.name);
      auto it = c.in.existing.find(ctr.name);
      has_existing = has_existing && it != c.in.existing.end();
      if (it != c.in.existing.end()) existing += it->second;
    }
    // …nor below an existing recommendation that the pod already runs at or above.
    if (has_existing && existing <= allocated(sel)) {
      ASSERT_GE(sum, existing);
    }
  }
  // The generator reaches every branch (a property over inputs that never take a branch proves nothing).
  const std::string counts = "recommended " + std::to_string(recommended) + " (upsize " +
                             std::to_string(upsizes) + ", oom " + std::to_string(ooms) + ", scale-back " +
                             std::to_string(scale_backs) + "), with partial data " +
                             std::to_string(partial_recommended);
  EXPECT_GT(recommended, kCases / 10) << counts;
  EXPECT_GT(upsizes, 1000) << counts;
  EXPECT_GT(scale_backs, 300) << counts;
  EXPECT_GT(ooms, 50) << counts;
  EXPECT_GT(partial_recommended, 1000) << counts;
}

}  // namespace
}  // namespace kubex::decide::reactive::test
