// bench-sizing (issue 36): replays each container of a real GPU trace through the engine's own sizing decisions
// (decide/sizing/replay.h: reactive::decide every minute, the proactive history reload every hour, SEL-6, ADM-7/8/9)
// and, on the same samples, four references: an hourly oracle, a static peak, a p95-of-history recommender and an
// oracle allowed at most 4 resizes per container-day (the most any safe sizer can save within that budget).
// Prints per container and in total: GPU-hours as written and held, saved %, the share of samples whose memory
// exceeds the held allocation and their episodes, and resizes per container-day.
//
//   bench-sizing --memory FILE --duty FILE --device-mib N [--policy POLICY.yaml] [-o table|json]
//
// Without --policy the guide's starter example (examples/kai-gpu-sharing.yaml) is replayed as written.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "common/yaml.h"
#include "decide/sizing/policy_file.h"
#include "kubex_paths.h"
#include "sizing/trace_csv.h"

namespace sz = kubex::decide::sizing;
using kubex::decide::Hundredths;

namespace {

constexpr Hundredths kAsWritten = kubex::decide::kOneGpu;  // every container starts as written: one whole GPU

struct Sizer {
  const char* key;    // the JSON key
  const char* title;  // the table's column
  sz::Tally total;
  std::vector<sz::Tally> containers;
};

nlohmann::json fields(const sz::Tally& t) {
  const auto r2 = [](double v) { return std::round(v * 100.0) / 100.0; };
  const auto r4 = [](double v) { return std::round(v * 10000.0) / 10000.0; };
  return {{"gpu_hours_as_written", r2(t.gpu_hours_as_written)},
          {"gpu_hours_held", r2(t.gpu_hours_held)},
          {"saved_percent", r2(t.saved_percent())},
          {"over_allocation_percent", r4(t.over_allocation_percent())},
          {"over_allocation_samples", t.over_allocation_samples},
          {"over_allocation_episodes", t.over_allocation_episodes},
          {"resizes_per_container_day", r2(t.resizes_per_container_day())},
          {"samples", t.samples},
          {"container_days", r4(t.days)}};
}

void print_table(const std::vector<Sizer>& sizers, const std::vector<sz::ContainerSeries>& series) {
  std::printf("%-34s", "container");
  for (const Sizer& s : sizers) std::printf(" | %-30s", s.title);
  std::printf("\n%-34s", "");
  for (std::size_t i = 0; i < sizers.size(); ++i) std::printf(" | %7s %8s %4s %7s", "saved%", "over%", "ep", "rs/day");
  std::printf("\n");
  const auto row = [&](const std::string& name, auto get) {
    std::printf("%-34s", name.c_str());
    for (const Sizer& s : sizers) {
      const sz::Tally& t = get(s);
      std::printf(" | %7.1f %8.3f %4zu %7.2f", t.saved_percent(), t.over_allocation_percent(),
                  t.over_allocation_episodes, t.resizes_per_container_day());
    }
    std::printf("\n");
  };
  for (std::size_t c = 0; c < series.size(); ++c) {
    row(series[c].id, [&](const Sizer& s) -> const sz::Tally& { return s.containers[c]; });
  }
  row("TOTAL", [](const Sizer& s) -> const sz::Tally& { return s.total; });
  const sz::Tally& k = sizers[0].total;
  std::printf("\nGPU-hours as written %.1f; held by kubex %.1f", k.gpu_hours_as_written, k.gpu_hours_held);
  for (std::size_t i = 1; i < sizers.size(); ++i) std::printf(", %s %.1f", sizers[i].key, sizers[i].total.gpu_hours_held);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Sizing replay on a GPU usage trace (issue 36)"};
  std::string memory, duty, output = "table";
  std::string policy = std::string(kubex_paths::source_dir()) + "/examples/kai-gpu-sharing.yaml";
  double device_mib = 0;
  app.add_option("--memory", memory, "CSV of GPU memory used, bytes (timestamp_anon,value,container_ip)")->required();
  app.add_option("--duty", duty, "CSV of GPU duty cycle, percent (value,timestamp_anon,container_ip)")->required();
  app.add_option("--device-mib", device_mib, "GPU memory of one device, MiB")->required()->check(CLI::PositiveNumber);
  app.add_option("--policy", policy, "a GpuReactivePolicy/ClusterGpuReactivePolicy file (with its strategy, static "
                                     "and proactive policies when it holds them); default: the guide's starter example");
  app.add_option("-o,--output", output, "table or json")->check(CLI::IsMember({"table", "json"}));
  std::string steps_of;
  app.add_option("--steps", steps_of, "print every resize kubex made on this container (its container_ip) and exit");
  CLI11_PARSE(app, argc, argv);

  auto text = kubex::common::read_file(policy);
  if (!text) {
    std::cerr << "bench-sizing: " << text.error().str() << "\n";
    return 2;
  }
  auto docs = kubex::common::yaml_to_json_documents(*text);
  if (!docs) {
    std::cerr << "bench-sizing: " << policy << ": " << docs.error().str() << "\n";
    return 2;
  }
  auto policies = sz::replay_policies(*docs);
  if (!policies) {
    std::cerr << "bench-sizing: " << policy << ": " << policies.error().str() << "\n";
    return 2;
  }
  auto series = kubex::bench::read_trace(memory, duty, device_mib);
  if (!series) {
    std::cerr << "bench-sizing: " << series.error().str() << "\n";
    return 2;
  }

  if (!steps_of.empty()) {
    for (const sz::ContainerSeries& s : *series) {
      if (s.id != steps_of) continue;
      std::vector<sz::Step> steps;
      sz::replay_kubex(s, *policies, kAsWritten, &steps);
      const auto t0 = s.samples.front().at;
      for (const sz::Step& st : steps) {
        const auto& x = s.samples[st.index];
        std::printf("%6.1f min  %s -> %s  %-10s %-8s memory %.3f compute %.3f\n",
                    std::chrono::duration<double>(x.at - t0).count() / 60.0,
                    kubex::decide::format_gpu(st.held).c_str(), kubex::decide::format_gpu(st.next).c_str(),
                    st.source.c_str(), st.driver.c_str(), x.memory.value_or(-1), x.compute.value_or(-1));
      }
      return 0;
    }
    std::cerr << "bench-sizing: no container " << steps_of << "\n";
    return 2;
  }

  std::vector<Sizer> sizers = {{"kubex", "kubex", {}, {}},
                               {"oracle_hourly", "oracle (hourly peak x1.2)", {}, {}},
                               {"static_peak", "static peak x1.2", {}, {}},
                               {"p95_history", "p95 of history x1.2", {}, {}},
                               {"oracle_4_resizes_per_day", "oracle, <= 4 resizes/day", {}, {}}};
  const kubex::api::StrategySpec& strategy = policies->strategy;
  // Where kubex's resizes and over-allocated samples come from: the source (and reactive driver) of the value held.
  std::map<std::string, std::size_t> resizes_by, over_by;
  for (const sz::ContainerSeries& s : *series) {
    std::vector<sz::Step> steps;
    const std::vector<Hundredths> kubex_held = sz::replay_kubex(s, *policies, kAsWritten, &steps);
    std::string source = "as-written";
    for (std::size_t i = 0, k = 0; i < s.samples.size(); ++i) {
      if (k < steps.size() && steps[k].index + 1 == i) {
        source = steps[k].source + (steps[k].driver.empty() ? "" : " " + steps[k].driver);
        ++resizes_by[source];
        ++k;
      }
      const auto& m = s.samples[i].memory;
      if (m && *m * kubex::decide::kOneGpu > static_cast<double>(kubex_held[i]) + 1e-9) ++over_by[source];
    }
    const std::vector<Hundredths> held[] = {kubex_held,
                                            sz::oracle_hourly(s, strategy, kAsWritten),
                                            sz::static_peak(s, strategy, kAsWritten),
                                            sz::p95_history(s, strategy, kAsWritten),
                                            sz::oracle_budget(s, strategy, kAsWritten, 4.0)};
    for (std::size_t i = 0; i < sizers.size(); ++i) {
      sizers[i].containers.push_back(sz::tally(s, held[i], kAsWritten));
      sizers[i].total += sizers[i].containers.back();
    }
  }

  if (output == "json") {
    nlohmann::json out = {{"policy", policies->reactive_name},
                          {"strategy", policies->strategy_name.empty() ? "kai-gpu-sharing (the guide's starter)"
                                                                        : policies->strategy_name},
                          {"device_mib", device_mib},
                          {"container_count", series->size()}};
    out["kubex_by_source"] = {{"resizes", resizes_by}, {"over_allocation_samples", over_by}};
    for (const Sizer& s : sizers) {
      nlohmann::json j = fields(s.total);
      j["containers"] = nlohmann::json::object();
      for (std::size_t c = 0; c < series->size(); ++c) j["containers"][(*series)[c].id] = fields(s.containers[c]);
      out[s.key] = std::move(j);
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::printf("policy %s, strategy %s, device %.0f MiB, %zu containers\n\n", policies->reactive_name.c_str(),
              policies->strategy_name.empty() ? "kai-gpu-sharing (the guide's starter)" : policies->strategy_name.c_str(),
              device_mib, series->size());
  print_table(sizers, *series);
  std::printf("kubex's resizes by the source of the new value:");
  for (const auto& [k, n] : resizes_by) std::printf(" %s %zu;", k.c_str(), n);
  std::printf("\nkubex's samples above the allocation, by the source of the value held:");
  for (const auto& [k, n] : over_by) std::printf(" %s %zu;", k.c_str(), n);
  std::printf("\n");
  return 0;
}
