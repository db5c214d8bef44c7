#include "sim/cluster/kai_modes.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "sim/cluster/model.h"

namespace kubex::sim::cluster {

namespace {

std::string shortest(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

const std::string* annotation(const SimPod& p, const char* key) {
  auto it = p.annotations.find(key);
  return it == p.annotations.end() ? nullptr : &it->second;
}

}  // namespace

bool go_parse_float(const std::string& s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front())) ||
      std::isspace(static_cast<unsigned char>(s.back()))) {
    return false;
  }
  errno = 0;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  if (errno == ERANGE && std::isinf(out)) return false;
  return true;
}

std::optional<KaiVersion> parse_kai_version(std::string_view s) {
  if (s == "0.17") return KaiVersion::k0_17;
  if (s == "0.18") return KaiVersion::k0_18;
  return std::nullopt;
}

std::optional<GpuSharingMode> parse_gpu_sharing_mode(std::string_view s) {
  if (s == "Disabled") return GpuSharingMode::kDisabled;
  if (s == "NonMemoryEnforced") return GpuSharingMode::kNonMemoryEnforced;
  if (s == "HamiCore") return GpuSharingMode::kHamiCore;
  if (s == "NvFractions") return GpuSharingMode::kNvFractions;
  return std::nullopt;
}

const char* kai_version_name(KaiVersion v) {
  return v == KaiVersion::k0_17 ? "0.17" : "0.18";
}

const char* gpu_sharing_mode_name(GpuSharingMode m) {
  switch (m) {
    case GpuSharingMode::kDisabled:
      return "Disabled";
    case GpuSharingMode::kNonMemoryEnforced:
      return "NonMemoryEnforced";
    case GpuSharingMode::kHamiCore:
      return "HamiCore";
    case GpuSharingMode::kNvFractions:
      return "NvFractions";
  }
  return "NonMemoryEnforced";
}

GpuSharingMode mode_from_memory_isolation(std::string_view isolation) {
  return isolation == "HAMiCore" ? GpuSharingMode::kHamiCore : GpuSharingMode::kNonMemoryEnforced;
}

std::string kai_settings_problem(const KaiSettings& s) {
  if (s.version == KaiVersion::k0_17 && s.mode == GpuSharingMode::kNvFractions) {
    return "gpu sharing mode NvFractions needs KAI 0.18 (KAI 0.17 has no NvFractions; use HamiCore, "
           "NonMemoryEnforced or Disabled)";
  }
  return "";
}

std::optional<double> parse_fraction_limit(const SimPod& p) {
  const std::string* v = annotation(p, api::keys::kGpuFractionLimit);
  double f = 0;
  if (!v || !go_parse_float(*v, f) || std::isnan(f)) return std::nullopt;
  return f;
}

std::optional<double> valid_fraction_limit(const SimPod& p) {
  if (!(p.gpu_fraction > 0) || p.gpu_fraction_invalid) return std::nullopt;
  auto lim = parse_fraction_limit(p);
  if (!lim || !(*lim > p.gpu_fraction) || *lim > 1) return std::nullopt;
  return lim;
}

std::string fraction_limit_problem(const SimPod& p) {
  const std::string* v = annotation(p, api::keys::kGpuFractionLimit);
  if (!v) return "";
  if (!annotation(p, api::keys::kGpuFraction)) {
    return "invalid GPU request: the gpu-fraction.limit annotation (\"" + *v +
           "\") requires the gpu-fraction annotation";
  }
  if (valid_fraction_limit(p)) return "";
  std::string request = p.gpu_fraction > 0 ? shortest(p.gpu_fraction) : *annotation(p, api::keys::kGpuFraction);
  return "invalid GPU request: gpu-fraction.limit annotation value \"" + *v +
         "\" must be a number greater than the gpu-fraction (" + request + ") and at most 1.0";
}

std::string kai_sharing_problem(const SimPod& p, const KaiSettings& s) {
  bool fraction = annotation(p, api::keys::kGpuFraction) != nullptr;
  if (s.mode == GpuSharingMode::kDisabled && fraction) {
    return "GPU sharing is disabled (gpu sharing mode Disabled): KAI refuses gpu-fraction pods; request whole "
           "GPUs (nvidia.com/gpu) instead";
  }
  if (s.version == KaiVersion::k0_18) return fraction_limit_problem(p);
  return "";
}

std::string compute_mode(const SimPod& p, KaiVersion v) {
  if (v == KaiVersion::k0_17) return "";
  std::string mode;
  if (const std::string* m = annotation(p, api::keys::kGpuComputeSharingMode)) {
    mode = *m;
  } else {
    const std::string_view prefix = api::keys::kContainerComputeModePrefix;
    const std::string_view suffix = api::keys::kContainerComputeModeSuffix;
    for (auto it = p.annotations.lower_bound(std::string(prefix)); it != p.annotations.end(); ++it) {
      std::string_view key = it->first;
      if (!key.starts_with(prefix)) break;
      if (key.size() > prefix.size() + suffix.size() && key.ends_with(suffix)) {
        mode = it->second;
        break;
      }
    }
  }
  return mode == "time-slicing" ? "" : mode;
}

}  // namespace kubex::sim::cluster
