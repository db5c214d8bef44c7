// What a pod (or a pod template: the same {metadata, spec} shape) currently asks for, as admission reads
// it: the target containers (SPEC §0) in pod order, their resources, the current GPU value of each (§0),
// the fraction container (ADM-12), and the ADM-5 checks that do not depend on the strategy.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/quantity.h"
#include "decide/gpu_value.h"
#include "decide/policy/desired.h"
#include "decide/resource_slot.h"

namespace kubex::decide {

struct ContainerResources {
  std::string name;
  bool init = false;      // listed in spec.initContainers (a restartable init container)
  std::size_t index = 0;  // position in its list (spec.containers or spec.initContainers)
  std::optional<std::int64_t> gpu_request, gpu_limit;  // nvidia.com/gpu, whole GPUs
  std::optional<common::Quantity> cpu_request, cpu_limit, memory_request, memory_limit;
  // §0 current GPU value in hundredths: the gpu-fraction (fraction container), else the nvidia.com/gpu
  // request, else its limit; nullopt = unspecified.
  std::optional<Hundredths> current_gpu;
  bool current_is_fraction = false;

  Hundredths allocation() const { return current_gpu.value_or(0); }  // a_c
  const std::optional<common::Quantity>& quantity(Slot s) const;
  // JSON pointer of the container: "/spec/containers/0" or "/spec/initContainers/1".
  std::string pointer() const;
};

struct PodResources {
  std::vector<ContainerResources> targets;  // restartable init containers, then regular containers
  std::string first_container;              // spec.containers[0].name ("" when there is none)
  bool has_fraction_annotation = false;     // gpu-fraction is present (valid or not)
  std::string fraction_text;
  std::optional<Hundredths> fraction;  // gpu-fraction when it parses and is in (0, 1)
  bool has_fraction_limit = false;     // gpu-fraction.limit is present (KAI-2, valid or not)
  std::string fraction_limit_text;
  std::optional<Hundredths> fraction_limit;  // gpu-fraction.limit when it parses and is in (0, 1]
  // pod-rightsizing-info records that kubex removed this pod's gpu-fraction.limit (KAI-2): a later pass
  // records fraction-limit-removed again, so that early + late give the same pod as one pass (ADM-2).
  bool fraction_limit_removed = false;
  // pod-rightsizing-info's gpu `from` per container: the GPU it had before kubex changed it on an earlier pass.
  std::map<std::string, Hundredths> gpu_before;
  // ADM-12: the container named by gpu-fraction-container-name, else spec.containers[0].
  std::string fraction_container;
  bool any_container_gpu = false;  // some container (of any list) has nvidia.com/gpu in requests or limits
  // ADM-5 reasons that hold whatever the strategy ("" when none): gpu-memory / gpu-fraction-num-devices,
  // gpu-fraction together with nvidia.com/gpu, an unparseable or out-of-range gpu-fraction, a fraction
  // container that does not exist, an nvidia.com/gpu that is not a whole quantity, a gpu-fraction.limit
  // that is not a value in (gpu-fraction, 1] or comes without gpu-fraction (KAI's own rule).
  std::string unsupported;

  std::optional<std::size_t> find(const std::string& name) const;
  // KAI-2a: the container's allocation before kubex (RBK-1 `original`): what an earlier pass recorded in
  // pod-rightsizing-info, else what the pod (or template: kubex never changes templates) asks for.
  std::optional<Hundredths> original_gpu(const ContainerResources& c) const;
  // The targets as precedence sees them (SEL-8 needs the allocations).
  std::vector<policy::TargetContainer> target_containers() const;
};

// Never throws: missing or mistyped fields read as absent.
PodResources read_pod_resources(const nlohmann::json& pod);

// ACT-1: the GPU allocation of each target container with one, in hundredths, and whether it is a
// fraction. Comparing two of these tells whether a live pod differs from what admission would give it.
struct GpuAllocation {
  std::string container;
  Hundredths value = 0;
  bool fraction = false;
  friend bool operator==(const GpuAllocation&, const GpuAllocation&) = default;
};
std::vector<GpuAllocation> gpu_allocation(const PodResources& pod);

}  // namespace kubex::decide
