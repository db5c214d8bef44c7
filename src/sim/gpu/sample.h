// One exported series of the GPU model: a container on one physical GPU. The struct is the one both exporters
// serve (api/gpu_series.h, TEL-3), so kubex-sim renders and computes its footprint through the same code.
#pragma once

#include "api/gpu_series.h"

namespace kubex::sim::gpu {

using Sample = api::GpuContainerSample;

}  // namespace kubex::sim::gpu
