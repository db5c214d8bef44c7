// The kubex_gpu_container_* series shared by kubex-sim's exporter and `kubex gpu-exporter` (TEL-3,
// docs/gpu-model.md): the footprint rule and the text exposition format 0.0.4.
#include "api/gpu_series.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

namespace kubex::api {

namespace {

struct Family {
  const char* name;
  const char* type;
  const char* help;
};

constexpr Family kSm{
    "kubex_gpu_container_sm_utilization_percent", "gauge",
    "SM utilization of the container on this GPU in percent of the whole GPU, after contention "
    "with the other containers sharing the GPU."};
constexpr Family kSmTotal{"kubex_gpu_container_sm_utilization_percent_seconds_total", "counter",
                          "Accumulated SM utilization in percent-seconds (the integral of "
                          "kubex_gpu_container_sm_utilization_percent over time)."};
constexpr Family kFootprint{
    "kubex_gpu_container_memory_footprint_percent", "gauge",
    "GPU memory used by the container in percent of its allocation on this GPU: "
    "gpu-fraction times the device memory for KAI fraction pods, one whole device for "
    "nvidia.com/gpu pods."};
constexpr Family kBytes{"kubex_gpu_container_memory_bytes", "gauge",
                        "GPU memory used by the container on this GPU, in bytes."};
constexpr Family kTotalBytes{
    "kubex_gpu_container_memory_total_bytes", "gauge",
    "GPU memory allocated to the container on this GPU, in bytes (the denominator of "
    "kubex_gpu_container_memory_footprint_percent)."};

void append_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? end : buf);
  }
}

void append_header(std::string& out, const Family& f) {
  out += "# HELP ";
  out += f.name;
  out += ' ';
  out += f.help;
  out += "\n# TYPE ";
  out += f.name;
  out += ' ';
  out += f.type;
  out += '\n';
}

std::string labels_of(const GpuContainerSample& s) {
  const std::pair<const char*, const std::string*> labels[] = {
      {"namespace", &s.ns},          {"pod", &s.pod},           {"container", &s.container},
      {"node", &s.node},             {"gpu_uuid", &s.gpu_uuid}, {"gpu_model", &s.gpu_model},
      {"gpu_allocation_type", &s.allocation_type}};
  std::string out = "{";
  for (const auto& [name, value] : labels) {
    if (out.size() > 1) out += ',';
    out += name;
    out += "=\"";
    out += escape_label_value(*value);
    out += '"';
  }
  out += '}';
  return out;
}

}  // namespace

std::int64_t gpu_allocation_bytes(std::string_view allocation_type, double gpu_fraction, std::int64_t device_bytes) {
  if (device_bytes <= 0) return 0;
  if (allocation_type != "fraction") return device_bytes;
  if (!(gpu_fraction > 0)) return 0;  // also NaN
  if (gpu_fraction >= 1) return device_bytes;
  const double exact = gpu_fraction * static_cast<double>(device_bytes);
  // Rounded down, but a product that is a whole number of bytes in decimal (0.3 × 10 GiB) must not lose a byte to
  // the binary representation of the fraction: both roundings err by at most a few ulps of the product.
  const double slack = exact * 8 * std::numeric_limits<double>::epsilon();
  return static_cast<std::int64_t>(std::floor(exact + slack));
}

double gpu_footprint_percent(std::int64_t memory_bytes, std::int64_t allocation_bytes) {
  if (allocation_bytes <= 0) return 0;
  return static_cast<double>(memory_bytes) * 100 / static_cast<double>(allocation_bytes);
}

std::string escape_label_value(std::string_view v) {
  if (v.find_first_of("\\\"\n") == std::string_view::npos) return std::string(v);
  std::string out;
  out.reserve(v.size() + 8);
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_gpu_series(const std::vector<GpuContainerSample>& samples) {
  std::vector<std::string> labels;
  labels.reserve(samples.size());
  std::size_t size = 2048;
  for (const auto& s : samples) {
    labels.push_back(labels_of(s));
    size += 5 * (labels.back().size() + 80);
  }
  std::string out;
  out.reserve(size);
  auto family = [&](const Family& f, auto value) {
    append_header(out, f);
    for (std::size_t i = 0; i < samples.size(); ++i) {
      out += f.name;
      out += labels[i];
      out += ' ';
      append_number(out, value(samples[i]));
      out += '\n';
    }
  };
  using S = GpuContainerSample;
  family(kSm, [](const S& s) { return s.sm_percent; });
  family(kSmTotal, [](const S& s) { return s.sm_percent_seconds_total; });
  family(kFootprint, [](const S& s) { return s.memory_footprint_percent; });
  family(kBytes, [](const S& s) { return static_cast<double>(s.memory_bytes); });
  family(kTotalBytes, [](const S& s) { return static_cast<double>(s.memory_total_bytes); });
  return out;
}

}  // namespace kubex::api
