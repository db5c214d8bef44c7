// Placeholder until the GPU usage model lands: no samples, no crashes, an empty /metrics.
#include "sim/gpu/gpu_model.h"

namespace kubex::sim::gpu {

struct GpuModel::Impl {};

GpuModel::GpuModel(cluster::ClusterContext&) : impl_(std::make_unique<Impl>()) {}
GpuModel::~GpuModel() = default;
common::Result<int> GpuModel::listen(const std::string&) { return 0; }
void GpuModel::start() {}
void GpuModel::stop() {}
std::optional<std::string> GpuModel::crash_reason(const cluster::SimPod&, const cluster::SimContainer&,
                                                  common::TimePoint) const {
  return std::nullopt;
}
void GpuModel::sample(common::TimePoint) {}
std::vector<Sample> GpuModel::samples() const { return {}; }
std::string GpuModel::render_metrics() const { return ""; }

}  // namespace kubex::sim::gpu
