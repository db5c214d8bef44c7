#include "sim/cluster/trace_cluster.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "common/file_io.h"
#include "sim/apiserver/api_server.h"
#include "sim/cluster/cluster_io.h"
#include "sim/gpu/gpu_catalog.h"

namespace kubex::sim::cluster {

using nlohmann::json;

namespace {

constexpr const char* kTraceImage = "registry.example/alibaba-trace/task:1";

std::string cpu_text(std::int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

std::string mib_text(std::int64_t mib) {
  return std::to_string(mib) + "Mi";
}

json queue(const std::string& name, const std::string& parent) {
  json unlimited = {{"quota", -1}, {"limit", -1}, {"overQuotaWeight", 1}};
  json spec = {{"resources", {{"cpu", unlimited}, {"gpu", unlimited}, {"memory", unlimited}}}};
  if (!parent.empty()) spec["parentQueue"] = parent;
  return {{"apiVersion", "scheduling.run.ai/v2"},
          {"kind", "Queue"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

}  // namespace

std::string trace_file_path(const TraceOptions& options, const std::string& file) {
  if (file.find('/') != std::string::npos) return file;
  return options.dir.empty() ? file : options.dir + "/" + file;
}

std::string trace_pool(const TraceNode& node) {
  if (node.gpus <= 0 || node.model.empty()) return "cpu";
  std::string pool = node.model;
  for (char& c : pool) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return pool;
}

std::vector<NodeSpec> trace_node_specs(const std::vector<TraceNode>& nodes) {
  std::vector<NodeSpec> out;
  out.reserve(nodes.size());
  for (const TraceNode& t : nodes) {
    NodeSpec n;
    n.name = t.name;
    n.pool = trace_pool(t);
    n.cpu = cpu_text(t.cpu_milli);
    n.memory = mib_text(t.memory_mib);
    n.gpus = t.gpus;
    if (t.gpus > 0) {
      n.gpu_product = t.model;
      // Undisclosed models (G1, G2, G3) have no known memory: no nvidia.com/gpu.memory label rather than a
      // guess.
      if (const auto* known = gpu::find_known_gpu(t.model)) n.gpu_memory_mib = known->memory_mib;
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::string gpu_fraction_text(int gpu_milli) {
  gpu_milli = std::clamp(gpu_milli, 0, 1000);
  if (gpu_milli == 1000) return "1";
  std::string digits = std::to_string(gpu_milli);
  digits.insert(0, 3 - digits.size(), '0');
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  return digits.empty() ? "0" : "0." + digits;
}

json trace_deployment(const TracePod& pod) {
  bool fraction = pod.num_gpu == 1 && pod.gpu_milli > 0 && pod.gpu_milli < 1000;
  json labels = {{"app", pod.name}};
  if (!pod.qos.empty()) labels["sim.kubex.ai/trace-qos"] = pod.qos;
  if (fraction) labels[api::keys::kKaiQueueLabel] = kTraceQueue;
  json requests = json::object(), limits = json::object();
  if (pod.cpu_milli > 0) requests["cpu"] = cpu_text(pod.cpu_milli);
  if (pod.memory_mib > 0) requests["memory"] = mib_text(pod.memory_mib);
  if (!fraction && pod.num_gpu > 0) limits[api::keys::kGpuResource] = std::to_string(pod.num_gpu);
  json resources = {{"requests", requests}};
  if (!limits.empty()) resources["limits"] = limits;
  json pod_spec = {{"containers", {{{"name", "main"}, {"image", kTraceImage}, {"resources", resources}}}}};
  json template_meta = {{"labels", labels}};
  if (fraction) {
    pod_spec["schedulerName"] = api::keys::kDefaultKaiScheduler;
    template_meta["annotations"] = {{api::keys::kGpuFraction, gpu_fraction_text(pod.gpu_milli)}};
  }
  // gpu_spec constrains where a GPU task may run (as the trace's own converter, only for GPU tasks).
  if (pod.num_gpu > 0 && !pod.gpu_spec.empty()) {
    json term = {{"matchExpressions",
                  {{{"key", api::keys::kGpuProduct}, {"operator", "In"}, {"values", pod.gpu_spec}}}}};
    pod_spec["affinity"] = {
        {"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", {term}}}}}}};
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"name", pod.name},
            {"namespace", kTraceNamespace},
            {"labels", labels},
            {"annotations", {{"sim.kubex.ai/trace-creation-time", std::to_string(pod.creation_time)}}}}},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"matchLabels", {{"app", pod.name}}}}},
            {"template", {{"metadata", template_meta}, {"spec", pod_spec}}}}}};
}

TraceWorkloads trace_workloads(std::vector<TracePod> pods, const std::string& phase) {
  TraceWorkloads w;
  w.pods_in_file = pods.size();
  std::erase_if(pods, [&](const TracePod& p) { return phase != "all" && p.phase != phase; });
  std::stable_sort(pods.begin(), pods.end(),
                   [](const TracePod& a, const TracePod& b) { return a.creation_time < b.creation_time; });
  w.objects.push_back(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kTraceNamespace}}}});
  w.objects.push_back(queue(kTraceParentQueue, ""));
  w.objects.push_back(queue(kTraceQueue, kTraceParentQueue));
  for (const TracePod& p : pods) w.objects.push_back(trace_deployment(p));
  w.deployments = pods.size();
  return w;
}

common::Result<Trace> load_trace(const TraceOptions& options) {
  if (options.phase.empty()) return common::fail("must be a pod_phase value or \"all\"", "--trace-phase");
  std::string nodes_path = trace_file_path(options, options.nodes_file);
  auto nodes_text = common::read_file(nodes_path);
  if (!nodes_text) return std::unexpected(nodes_text.error());
  auto nodes = parse_trace_nodes(nodes_path, *nodes_text);
  if (!nodes) return std::unexpected(nodes.error());
  if (nodes->empty()) return common::fail("lists no nodes", nodes_path);
  std::string pods_path = trace_file_path(options, options.pods_file);
  auto pods_text = common::read_file(pods_path);
  if (!pods_text) return std::unexpected(pods_text.error());
  auto pods = parse_trace_pods(pods_path, *pods_text);
  if (!pods) return std::unexpected(pods.error());
  Trace t;
  t.nodes = trace_node_specs(*nodes);
  t.workloads = trace_workloads(std::move(*pods), options.phase);
  return t;
}

common::Result<std::size_t> create_trace_objects(ApiServer& api, const std::vector<json>& objects) {
  StoreIo io(api);
  Client client(io, "system:kubex-sim-trace");
  std::size_t created = 0;
  for (const json& obj : objects) {
    std::string kind = obj.value("kind", "");
    std::string name = obj["metadata"].value("name", "");
    std::string collection = kind == "Namespace" ? core_path("namespaces", "")
                             : kind == "Queue"   ? group_path("scheduling.run.ai/v2", "queues", "")
                                                 : group_path("apps/v1", "deployments", kTraceNamespace);
    auto r = client.create(collection, obj);
    if (r.ok()) {
      ++created;
    } else if (r.status != 409) {
      return common::fail("creating " + kind + " " + name + ": " + r.body);
    }
  }
  return created;
}

}  // namespace kubex::sim::cluster
