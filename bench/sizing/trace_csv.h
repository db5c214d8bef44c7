// Reading a per-container GPU trace (issue 36): one CSV of GPU memory used (bytes) and one of GPU duty cycle
// (percent), each with columns `timestamp_anon`, `value`, `container_ip` in any order (the GenTD26 files of
// ../shared/data/alibaba-gentd26 differ in column order). They are joined by container and timestamp.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "decide/sizing/replay.h"

namespace kubex::bench {

// The series of every container, sorted by container id; memory in GPUs of a `device_mib` device, compute =
// duty / 100. A malformed row is an error naming the file and line.
common::Result<std::vector<decide::sizing::ContainerSeries>> read_trace(const std::string& memory_csv,
                                                                        const std::string& duty_csv,
                                                                        double device_mib);

}  // namespace kubex::bench
