#include "telemetry/node_pods.h"

#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"

namespace kubex::telemetry {

namespace {

const nlohmann::json& field(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string text(const nlohmann::json& j, const char* key) {
  const nlohmann::json& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// The container's nvidia.com/gpu limit, else its request (whole GPUs); 0 when none or unreadable.
double whole_gpus(const nlohmann::json& container) {
  const nlohmann::json& resources = field(container, "resources");
  for (const char* kind : {"limits", "requests"}) {
    const nlohmann::json& v = field(field(resources, kind), api::keys::kGpuResource);
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      try {
        return std::stod(v.get<std::string>());
      } catch (const std::exception&) {
        return 0;
      }
    }
  }
  return 0;
}

struct NodePodView : common::CachedObject {
  std::vector<std::pair<std::string, NodeContainer>> containers;
};

}  // namespace

std::vector<std::pair<std::string, NodeContainer>> node_containers_of(const nlohmann::json& pod) {
  const nlohmann::json& meta = field(pod, "metadata");
  const nlohmann::json& annotations = field(meta, "annotations");
  const nlohmann::json& spec = field(pod, "spec");
  double fraction = 0;
  if (std::string f = text(annotations, api::keys::kGpuFraction); !f.empty()) {
    try {
      fraction = std::stod(f);
    } catch (const std::exception&) {
      fraction = 0;
    }
    if (!(fraction > 0 && fraction < 1)) fraction = 0;  // not a fraction KAI accepts
  }
  // The gpu-fraction container: the named one, else the first regular container.
  std::string fraction_container;
  if (fraction > 0) {
    fraction_container = text(annotations, api::keys::kGpuFractionContainerName);
    const nlohmann::json& containers = field(spec, "containers");
    if (fraction_container.empty() && containers.is_array() && !containers.empty()) {
      fraction_container = text(containers[0], "name");
    }
  }
  std::map<std::string, double> whole;  // container name -> whole GPUs
  for (const char* list : {"containers", "initContainers"}) {
    const nlohmann::json& cs = field(spec, list);
    if (!cs.is_array()) continue;
    for (const auto& c : cs) whole[text(c, "name")] = whole_gpus(c);
  }
  std::vector<std::pair<std::string, NodeContainer>> out;
  const nlohmann::json& status = field(pod, "status");
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const nlohmann::json& statuses = field(status, list);
    if (!statuses.is_array()) continue;
    for (const auto& st : statuses) {
      const std::string id = container_id_of_status(text(st, "containerID"));
      if (id.empty()) continue;
      NodeContainer c;
      c.ns = text(meta, "namespace");
      c.pod = text(meta, "name");
      c.pod_uid = text(meta, "uid");
      c.container = text(st, "name");
      const nlohmann::json& restarts = field(st, "restartCount");
      c.restart_count = restarts.is_number_integer() ? restarts.get<int>() : 0;
      if (fraction > 0 && c.container == fraction_container) {
        c.allocation_type = "fraction";
        c.gpu_fraction = fraction;
      } else if (whole[c.container] > 0) {
        c.allocation_type = "whole";
      }
      out.emplace_back(id, std::move(c));
    }
  }
  return out;
}

NodePods::NodePods(std::shared_ptr<kube::Client> client, const std::string& node) {
  kube::InformerOptions options;
  options.field_selector = "spec.nodeName=" + node;
  informer_ = std::make_unique<kube::Informer>(
      std::move(client), "/api/v1/pods",
      [](const nlohmann::json& obj) -> common::ObjectPtr {
        auto view = std::make_shared<NodePodView>();
        common::fill_meta(*view, obj);
        view->containers = node_containers_of(obj);
        return view;
      },
      options);
}

NodePods::~NodePods() { stop(); }

void NodePods::start() { informer_->start(); }
void NodePods::stop() {
  if (informer_) informer_->stop();
}
bool NodePods::synced() const { return informer_->synced(); }
std::size_t NodePods::pods() const { return informer_->size(); }

std::map<std::string, NodeContainer> NodePods::containers() const {
  std::map<std::string, NodeContainer> out;
  for (const common::ObjectPtr& p : informer_->list()) {
    for (const auto& [id, c] : kube::as<NodePodView>(p)->containers) out[id] = c;
  }
  return out;
}

}  // namespace kubex::telemetry
