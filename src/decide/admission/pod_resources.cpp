#include "decide/admission/pod_resources.h"

#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "decide/admission/change.h"

namespace kubex::decide {

namespace {

using nlohmann::json;

const json& member(const json& obj, const char* key) {
  static const json kNull;  // immutable
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::optional<std::string> string_member(const json& obj, const char* key) {
  const json& v = member(obj, key);
  if (!v.is_string()) return std::nullopt;
  return v.get<std::string>();
}

std::optional<common::Quantity> quantity_member(const json& list, const char* key) {
  const json& v = member(list, key);
  if (v.is_null()) return std::nullopt;
  auto q = common::Quantity::from_json(v);
  if (!q) return std::nullopt;
  return *q;
}

// nvidia.com/gpu: a whole, non-negative quantity. Sets `bad` for anything else.
std::optional<std::int64_t> gpu_member(const json& list, bool& bad) {
  const json& v = member(list, api::keys::kGpuResource);
  if (v.is_null()) return std::nullopt;
  auto q = common::Quantity::from_json(v);
  if (!q || q->sign() < 0 || q->nano_value() % 1'000'000'000 != 0) {
    bad = true;
    return std::nullopt;
  }
  return q->value();
}

bool has_gpu_key(const json& c) {
  const json& res = member(c, "resources");
  return !member(member(res, "requests"), api::keys::kGpuResource).is_null() ||
         !member(member(res, "limits"), api::keys::kGpuResource).is_null();
}

ContainerResources read_container(const json& c, bool init, std::size_t index, bool& bad_gpu) {
  ContainerResources r;
  r.name = string_member(c, "name").value_or("");
  r.init = init;
  r.index = index;
  const json& res = member(c, "resources");
  const json& req = member(res, "requests");
  const json& lim = member(res, "limits");
  r.gpu_request = gpu_member(req, bad_gpu);
  r.gpu_limit = gpu_member(lim, bad_gpu);
  r.cpu_request = quantity_member(req, "cpu");
  r.cpu_limit = quantity_member(lim, "cpu");
  r.memory_request = quantity_member(req, "memory");
  r.memory_limit = quantity_member(lim, "memory");
  return r;
}

}  // namespace

const std::optional<common::Quantity>& ContainerResources::quantity(Slot s) const {
  switch (s) {
    case Slot::kRequestsCpu:
      return cpu_request;
    case Slot::kLimitsCpu:
      return cpu_limit;
    case Slot::kRequestsMemory:
      return memory_request;
    case Slot::kLimitsMemory:
      return memory_limit;
    case Slot::kRequestsGpu:
    case Slot::kLimitsGpu:
      break;
  }
  static const std::optional<common::Quantity> kNone;  // immutable
  return kNone;
}

std::string ContainerResources::pointer() const {
  return std::string(init ? "/spec/initContainers/" : "/spec/containers/") + std::to_string(index);
}

std::optional<std::size_t> PodResources::find(const std::string& name) const {
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<Hundredths> PodResources::original_gpu(const ContainerResources& c) const {
  if (auto it = gpu_before.find(c.name); it != gpu_before.end()) return it->second;
  return c.current_gpu;
}

std::vector<policy::TargetContainer> PodResources::target_containers() const {
  std::vector<policy::TargetContainer> out;
  out.reserve(targets.size());
  for (const auto& t : targets) out.push_back({t.name, t.allocation() > 0});
  return out;
}

PodResources read_pod_resources(const nlohmann::json& pod) {
  PodResources r;
  const json& annotations = member(member(pod, "metadata"), "annotations");
  const json& spec = member(pod, "spec");
  const json& containers = member(spec, "containers");
  const json& init_containers = member(spec, "initContainers");

  bool bad_gpu = false;
  if (init_containers.is_array()) {
    for (std::size_t i = 0; i < init_containers.size(); ++i) {
      const json& c = init_containers[i];
      r.any_container_gpu = r.any_container_gpu || has_gpu_key(c);
      if (string_member(c, "restartPolicy").value_or("") != "Always") continue;
      r.targets.push_back(read_container(c, true, i, bad_gpu));
    }
  }
  if (containers.is_array()) {
    for (std::size_t i = 0; i < containers.size(); ++i) {
      const json& c = containers[i];
      r.any_container_gpu = r.any_container_gpu || has_gpu_key(c);
      r.targets.push_back(read_container(c, false, i, bad_gpu));
      if (i == 0) r.first_container = r.targets.back().name;
    }
  }

  if (auto f = string_member(annotations, api::keys::kGpuFraction)) {
    r.has_fraction_annotation = true;
    r.fraction_text = *f;
    if (auto h = parse_gpu_fraction(*f)) r.fraction = *h;
  }
  if (auto l = string_member(annotations, api::keys::kGpuFractionLimit)) {
    r.has_fraction_limit = true;
    r.fraction_limit_text = *l;
    if (auto v = parse_decimal(*l); v && *v > 0 && *v <= 1) r.fraction_limit = round_up(*v);
  }
  // ADM-16: what kubex recorded on an earlier pass (the GPU each container had before kubex, KAI-2a) and whether
  // it removed this pod's gpu-fraction.limit (KAI-2).
  const json& info = member(annotations, api::keys::kPodRightsizingInfo);
  if (info.is_string()) {
    const json doc = json::parse(info.get_ref<const std::string&>(), nullptr, false);
    if (doc.is_object() && doc.contains("containers") && doc["containers"].is_object()) {
      for (const auto& [name, entry] : doc["containers"].items()) {
        if (!entry.is_object()) continue;
        if (entry.contains("gpu") && entry["gpu"].is_object()) {
          if (auto v = parse_decimal(entry["gpu"].value("from", "")); v && *v > 0) r.gpu_before[name] = round_up(*v);
        }
        if (r.has_fraction_limit || !entry.contains("gpu-limit") || !entry["gpu-limit"].is_object()) continue;
        const json& l = entry["gpu-limit"];
        r.fraction_limit_removed |= l.value("to", "") == kUnspecified && l.value("from", "") != kUnspecified;
      }
    }
  }
  r.fraction_container = r.first_container;
  if (auto name = string_member(annotations, api::keys::kGpuFractionContainerName); name && !name->empty()) {
    r.fraction_container = *name;
  }

  if (!member(annotations, api::keys::kGpuMemory).is_null()) {
    r.unsupported = "the pod carries gpu-memory";
  } else if (!member(annotations, api::keys::kGpuFractionNumDevices).is_null()) {
    r.unsupported = "the pod carries gpu-fraction-num-devices";
  } else if (r.has_fraction_annotation && r.any_container_gpu) {
    r.unsupported = "the pod carries gpu-fraction and a container has nvidia.com/gpu";
  } else if (r.has_fraction_annotation && !r.fraction) {
    r.unsupported = "gpu-fraction \"" + r.fraction_text + "\" does not parse or is outside (0, 1)";
  } else if (r.has_fraction_annotation && !r.find(r.fraction_container)) {
    r.unsupported = "gpu-fraction-container-name \"" + r.fraction_container + "\" names no target container";
  } else if (bad_gpu) {
    r.unsupported = "nvidia.com/gpu is not a whole number of GPUs";
  } else if (r.has_fraction_limit && !r.has_fraction_annotation) {
    r.unsupported = "the pod carries gpu-fraction.limit without gpu-fraction";
  } else if (r.has_fraction_limit && (!r.fraction_limit || *r.fraction_limit <= *r.fraction)) {
    r.unsupported = "gpu-fraction.limit \"" + r.fraction_limit_text + "\" is not a value in (gpu-fraction, 1]";
  }

  for (auto& t : r.targets) {
    if (r.fraction && t.name == r.fraction_container) {
      t.current_gpu = *r.fraction;
      t.current_is_fraction = true;
    } else if (t.gpu_request) {
      t.current_gpu = from_whole(*t.gpu_request);
    } else if (t.gpu_limit) {
      t.current_gpu = from_whole(*t.gpu_limit);
    }
  }
  return r;
}

std::vector<GpuAllocation> gpu_allocation(const PodResources& pod) {
  std::vector<GpuAllocation> out;
  for (const auto& t : pod.targets) {
    if (t.allocation() > 0) out.push_back({t.name, t.allocation(), t.current_is_fraction});
  }
  return out;
}

}  // namespace kubex::decide
