// KAI-Scheduler versions and GPU sharing modes in kubex-sim (SPEC SIM-4, KAI-1): `--kai-version 0.17|0.18`
// and `--gpu-sharing-mode Disabled|NonMemoryEnforced|HamiCore|NvFractions`. The rules the KAI-like scheduler
// applies before placing a pod (the gpu-fraction.limit check of KAI 0.18, the refusal of fractions when sharing
// is disabled, the compute mode of a fraction) live here as pure functions; the GPU model's memory rules are in
// sim/gpu/usage_core.h. User docs: docs/gpu-model.md ("KAI versions and sharing modes").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kubex::sim::cluster {

struct SimPod;

enum class KaiVersion { k0_17, k0_18 };
// KAI-1: what a fraction means on the node. HamiCore = HAMi-core holds a fraction to its request;
// NonMemoryEnforced = nothing holds it; NvFractions (KAI ≥ 0.18.2) = a fraction may burst to its
// gpu-fraction.limit and memory above its request is reclaimed first when the GPU is contended.
enum class GpuSharingMode { kDisabled, kNonMemoryEnforced, kHamiCore, kNvFractions };

// Go's strconv.ParseFloat(s, 64) acceptance, as KAI parses its annotations: no surrounding spaces, the whole
// string consumed; out-of-range values fail.
bool go_parse_float(const std::string& s, double& out);

std::optional<KaiVersion> parse_kai_version(std::string_view s);           // "0.17" | "0.18"
std::optional<GpuSharingMode> parse_gpu_sharing_mode(std::string_view s);  // exact KAI-1 names
const char* kai_version_name(KaiVersion v);
const char* gpu_sharing_mode_name(GpuSharingMode m);
// The mode a deprecated memoryIsolation value stands for: HAMiCore -> HamiCore, anything else ->
// NonMemoryEnforced (KAI-1).
GpuSharingMode mode_from_memory_isolation(std::string_view isolation);

struct KaiSettings {
  KaiVersion version = KaiVersion::k0_18;
  GpuSharingMode mode = GpuSharingMode::kNonMemoryEnforced;
  bool operator==(const KaiSettings&) const = default;
};

// Why the pair cannot be simulated ("" = it can): NvFractions exists from KAI 0.18 on.
std::string kai_settings_problem(const KaiSettings& s);

// The pod's gpu-fraction.limit when present and a number (Go's strconv.ParseFloat, as KAI reads it).
std::optional<double> parse_fraction_limit(const SimPod& p);
// The limit a fraction may burst to: the value of gpu-fraction.limit when it satisfies KAI's rule (a number in
// (gpu-fraction, 1] on a pod with a valid gpu-fraction), else nullopt. Version and mode are the caller's concern.
std::optional<double> valid_fraction_limit(const SimPod& p);
// KAI 0.18's check of gpu-fraction.limit (ADM-5): "" when the pod has none or a valid one, else why not.
std::string fraction_limit_problem(const SimPod& p);

// Why the KAI-like scheduler refuses the pod's GPU request under `s` ("" = it may be placed): under Disabled a
// gpu-fraction pod; under 0.18 an invalid gpu-fraction.limit (0.17 ignores the annotation).
std::string kai_sharing_problem(const SimPod& p, const KaiSettings& s);

// KAI 0.18's compute mode of a pod (CON-5b): the value of kai.scheduler/gpu-compute-sharing-mode, else of the
// first nvidia.com/container.<c>.gpu-compute.mode; "" for time-slicing (absent or "time-slicing"). Always ""
// under 0.17, which has no compute modes.
std::string compute_mode(const SimPod& p, KaiVersion v);

}  // namespace kubex::sim::cluster
