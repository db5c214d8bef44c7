// SIM-4: KAI versions and GPU sharing modes in the KAI-like scheduler: the gpu-fraction.limit rule of KAI 0.18
// (ADM-5; ignored by 0.17), the refusal of fractions when sharing is Disabled, compute modes that never share a
// GPU (CON-5b), and the --kai-version / --gpu-sharing-mode flags over the config file.
#include "sim/cluster/kai_modes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/cluster/config.h"
#include "sim/cluster/sched_ledger.h"
#include "sim/cluster/sched_placement.h"

using namespace kubex::sim::cluster;
using namespace kubex::sim::cluster::sched;
namespace keys = kubex::api::keys;

namespace {

// A kai-scheduler pod with the given annotations; gpu-fraction is parsed as parse_pod does.
SimPod kai_pod(std::map<std::string, std::string> annotations) {
  nlohmann::json meta = {{"name", "p"}, {"namespace", "ml"}, {"annotations", annotations}};
  nlohmann::json pod = {{"metadata", meta},
                        {"spec", {{"schedulerName", "kai-scheduler"}, {"containers", {{{"name", "app"}}}}}}};
  return parse_pod(pod);
}

const KaiSettings k17{KaiVersion::k0_17, GpuSharingMode::kNonMemoryEnforced};
const KaiSettings k18{KaiVersion::k0_18, GpuSharingMode::kNonMemoryEnforced};
const KaiSettings k18nv{KaiVersion::k0_18, GpuSharingMode::kNvFractions};

}  // namespace

TEST(KaiModes, NamesRoundTripAndMemoryIsolationMapsOntoTheMode) {
  for (auto m : {GpuSharingMode::kDisabled, GpuSharingMode::kNonMemoryEnforced, GpuSharingMode::kHamiCore,
                 GpuSharingMode::kNvFractions}) {
    EXPECT_EQ(parse_gpu_sharing_mode(gpu_sharing_mode_name(m)), m);
  }
  for (auto v : {KaiVersion::k0_17, KaiVersion::k0_18}) EXPECT_EQ(parse_kai_version(kai_version_name(v)), v);
  EXPECT_EQ(parse_gpu_sharing_mode("nvfractions"), std::nullopt) << "KAI-1 names are exact";
  EXPECT_EQ(parse_gpu_sharing_mode("HAMiCore"), std::nullopt) << "the memoryIsolation spelling is not a mode";
  EXPECT_EQ(parse_kai_version("0.19"), std::nullopt);
  EXPECT_EQ(mode_from_memory_isolation("HAMiCore"), GpuSharingMode::kHamiCore);
  EXPECT_EQ(mode_from_memory_isolation("None"), GpuSharingMode::kNonMemoryEnforced);
  EXPECT_EQ(kai_settings_problem({KaiVersion::k0_17, GpuSharingMode::kNvFractions}),
            "gpu sharing mode NvFractions needs KAI 0.18 (KAI 0.17 has no NvFractions; use HamiCore, "
            "NonMemoryEnforced or Disabled)");
  EXPECT_EQ(kai_settings_problem(k18nv), "");
  EXPECT_EQ(kai_settings_problem({KaiVersion::k0_17, GpuSharingMode::kHamiCore}), "");
}

TEST(KaiModes, FractionLimitValidation) {
  struct Case {
    const char* name;
    KaiSettings kai;
    std::map<std::string, std::string> annotations;
    std::string problem;  // "" = schedulable; else a substring of the message
  };
  const std::string range = "must be a number greater than the gpu-fraction";
  std::vector<Case> cases = {
      {"0.17 ignores a valid limit", k17, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.63"}}, ""},
      {"0.17 ignores a limit below the request", k17, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.2"}}, ""},
      {"0.17 ignores garbage", k17, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "lots"}}, ""},
      {"0.17 ignores a limit without gpu-fraction", k17, {{"gpu-fraction.limit", "0.5"}}, ""},
      {"0.18 no limit", k18, {{"gpu-fraction", "0.3"}}, ""},
      {"0.18 valid limit", k18, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.63"}}, ""},
      {"0.18 limit of a whole GPU", k18nv, {{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "1"}}, ""},
      {"0.18 limit equal to the request", k18, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.5"}}, range},
      {"0.18 limit below the request", k18, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.2"}}, range},
      {"0.18 limit above 1", k18, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "1.5"}}, range},
      {"0.18 limit not a number", k18, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "lots"}}, range},
      {"0.18 limit with spaces", k18, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", " 0.7"}}, range},
      {"0.18 limit NaN", k18, {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "NaN"}}, range},
      {"0.18 limit without gpu-fraction", k18, {{"gpu-fraction.limit", "0.5"}},
       "requires the gpu-fraction annotation"},
      {"0.18 any mode validates", {KaiVersion::k0_18, GpuSharingMode::kHamiCore},
       {{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.4"}}, range},
      {"Disabled refuses a fraction", {KaiVersion::k0_18, GpuSharingMode::kDisabled}, {{"gpu-fraction", "0.5"}},
       "GPU sharing is disabled"},
      {"Disabled refuses a fraction under 0.17", {KaiVersion::k0_17, GpuSharingMode::kDisabled},
       {{"gpu-fraction", "0.5"}}, "KAI refuses gpu-fraction pods"},
      {"Disabled lets whole-GPU pods through", {KaiVersion::k0_18, GpuSharingMode::kDisabled}, {}, ""},
  };
  for (const auto& c : cases) {
    std::string got = kai_sharing_problem(kai_pod(c.annotations), c.kai);
    if (c.problem.empty()) {
      EXPECT_EQ(got, "") << c.name;
    } else {
      EXPECT_NE(got.find(c.problem), std::string::npos) << c.name << ": " << got;
    }
  }
  EXPECT_EQ(kai_sharing_problem(kai_pod({{"gpu-fraction", "0.5"}, {"gpu-fraction.limit", "0.2"}}), k18),
            "invalid GPU request: gpu-fraction.limit annotation value \"0.2\" must be a number greater than the "
            "gpu-fraction (0.5) and at most 1.0");
  EXPECT_EQ(valid_fraction_limit(kai_pod({{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.63"}})), 0.63);
  EXPECT_EQ(valid_fraction_limit(kai_pod({{"gpu-fraction", "0.3"}, {"gpu-fraction.limit", "0.3"}})), std::nullopt);
  EXPECT_EQ(valid_fraction_limit(kai_pod({{"gpu-fraction", "1.5"}, {"gpu-fraction.limit", "1"}})), std::nullopt);
}

TEST(KaiModes, ComputeModeFromThePodOrAContainerKey) {
  struct Case {
    const char* name;
    KaiVersion version;
    std::map<std::string, std::string> annotations;
    std::string mode;
  };
  std::vector<Case> cases = {
      {"absent is time-slicing", KaiVersion::k0_18, {}, ""},
      {"explicit time-slicing", KaiVersion::k0_18, {{keys::kGpuComputeSharingMode, "time-slicing"}}, ""},
      {"pod key", KaiVersion::k0_18, {{keys::kGpuComputeSharingMode, "sm-sharing"}}, "sm-sharing"},
      {"container key", KaiVersion::k0_18, {{"nvidia.com/container.app.gpu-compute.mode", "sm-sharing"}},
       "sm-sharing"},
      {"pod key wins", KaiVersion::k0_18,
       {{keys::kGpuComputeSharingMode, "time-slicing"}, {"nvidia.com/container.app.gpu-compute.mode", "sm-sharing"}},
       ""},
      {"other nvidia.com/container keys", KaiVersion::k0_18, {{"nvidia.com/container.app.gpu-memory", "2000"}}, ""},
      {"0.17 has no compute modes", KaiVersion::k0_17, {{keys::kGpuComputeSharingMode, "sm-sharing"}}, ""},
  };
  for (const auto& c : cases) EXPECT_EQ(compute_mode(kai_pod(c.annotations), c.version), c.mode) << c.name;
}

TEST(KaiModes, ComputeModesNeverShareAGpu) {
  PlacementNode n;
  n.name = "n1";
  n.cpu_milli = 16000;
  n.memory_bytes = 64LL << 30;
  n.gpus = 2;
  NodeUse u;
  GpuGroupUse ts{"ts", 30, 1, 0, 1};
  GpuGroupUse sm{"sm", 60, 1, 1, 1};
  sm.compute_mode = "sm-sharing";
  u.groups = {ts, sm};
  struct Case {
    const char* name;
    int fraction;
    std::string mode;
    std::optional<std::string> slot;
  };
  std::vector<Case> cases = {
      {"time-slicing joins its own mode, not the fuller sm-sharing GPU", 30, "", "ts"},
      {"sm-sharing joins its own mode", 30, "sm-sharing", "sm"},
      {"sm-sharing does not fit its GPU and the other is time-slicing", 50, "sm-sharing", std::nullopt},
      {"time-slicing does not fit its GPU and the other is sm-sharing", 80, "", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(fraction_slot(c.fraction, n, u, c.mode), c.slot) << c.name;
  // An empty GPU takes any mode; a group without members (its reservation only) has no mode.
  u.groups[1].members = 0;
  u.groups[1].hundredths = 0;
  EXPECT_EQ(fraction_slot(80, n, u, ""), std::optional<std::string>("sm")) << "too big for ts";
  u.groups = {ts};
  EXPECT_EQ(fraction_slot(30, n, u, "sm-sharing"), std::optional<std::string>("")) << "a new group on the free GPU";

  // Through the ledger: the mode comes from the pod (0.18) and the group keeps it.
  Ledger ledger(KaiVersion::k0_18);
  SimNode node;
  node.name = "n1";
  node.gpus = 1;
  node.cpu_milli = 8000;
  node.memory_bytes = 32LL << 30;
  ledger.upsert_node(node);
  PlacementPod first;
  first.fraction = 30;
  first.compute_mode = "sm-sharing";
  Decision d = ledger.schedule("ml/a", first, Strategy::kKai, "g1", "abcde");
  ASSERT_TRUE(d.scheduled);
  PlacementPod second;
  second.fraction = 30;  // time-slicing: the only GPU is sm-sharing now
  Decision d2 = ledger.schedule("ml/b", second, Strategy::kKai, "g2", "fghij");
  EXPECT_FALSE(d2.scheduled);
  EXPECT_EQ(d2.message, "0/1 nodes are available: 1 node(s) didn't have enough resources: GPUs.");
  second.compute_mode = "sm-sharing";
  EXPECT_TRUE(ledger.schedule("ml/b", second, Strategy::kKai, "g2", "fghij").scheduled);

  SimPod member = kai_pod({{"gpu-fraction", "0.3"}, {keys::kGpuComputeSharingMode, "sm-sharing"}});
  member.node = "n1";
  member.phase = "Running";
  member.labels[keys::kGpuGroupLabel] = "g1";
  EXPECT_EQ(Ledger::holding_of(member, KaiVersion::k0_18)->compute_mode, "sm-sharing");
  EXPECT_EQ(Ledger::holding_of(member, KaiVersion::k0_17)->compute_mode, "");
}

TEST(KaiModes, FlagsOverTheConfigFile) {
  auto parsed = [](const char* yaml_json) { return ClusterConfig::parse(nlohmann::json::parse(yaml_json)); };
  // Defaults: 0.18, the mode derived from memoryIsolation.
  EXPECT_EQ(ClusterConfig::defaults().kai(), k18);
  auto hami = parsed(R"({"memoryIsolation":"HAMiCore"})");
  ASSERT_TRUE(hami);
  EXPECT_EQ(hami->kai().mode, GpuSharingMode::kHamiCore);
  auto file = parsed(R"({"memoryIsolation":"HAMiCore","gpuSharingMode":"NvFractions","kaiVersion":0.18})");
  ASSERT_TRUE(file) << file.error().str();
  EXPECT_EQ(file->kai(), k18nv) << "gpuSharingMode wins over memoryIsolation";

  struct Case {
    const char* name;
    std::string version, mode;
    std::optional<KaiSettings> want;
    std::string error;
  };
  std::vector<Case> cases = {
      {"no flags keep the file", "", "", k18nv, ""},
      {"the mode flag wins", "", "HamiCore", KaiSettings{KaiVersion::k0_18, GpuSharingMode::kHamiCore}, ""},
      {"both flags", "0.17", "Disabled", KaiSettings{KaiVersion::k0_17, GpuSharingMode::kDisabled}, ""},
      {"bad version", "0.16", "", std::nullopt, "invalid --kai-version \"0.16\": supported values: \"0.17\", \"0.18\""},
      {"bad mode", "", "HAMiCore", std::nullopt,
       "invalid --gpu-sharing-mode \"HAMiCore\": supported values: \"Disabled\", \"NonMemoryEnforced\", "
       "\"HamiCore\", \"NvFractions\""},
      {"NvFractions needs 0.18", "0.17", "", std::nullopt,
       "invalid --kai-version 0.17 with --gpu-sharing-mode NvFractions: gpu sharing mode NvFractions needs KAI 0.18"},
  };
  for (const auto& c : cases) {
    ClusterConfig cfg = *file;
    auto r = apply_kai_flags(cfg, c.version, c.mode);
    if (c.want) {
      ASSERT_TRUE(r) << c.name << ": " << r.error().str();
      EXPECT_EQ(cfg.kai(), *c.want) << c.name;
    } else {
      ASSERT_FALSE(r) << c.name;
      EXPECT_NE(r.error().str().find(c.error), std::string::npos) << c.name << ": " << r.error().str();
    }
  }
  auto bad = parsed(R"({"gpuSharingMode":"hami"})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().str().find("gpuSharingMode"), std::string::npos) << bad.error().str();
  auto bad_pair = parsed(R"({"kaiVersion":"0.17","gpuSharingMode":"NvFractions"})");
  ASSERT_FALSE(bad_pair);
  EXPECT_NE(bad_pair.error().str().find("needs KAI 0.18"), std::string::npos) << bad_pair.error().str();
}
