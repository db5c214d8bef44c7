#include "sim/cluster/workload_model.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/quantity.h"

namespace kubex::sim::cluster {

using nlohmann::json;

namespace {

constexpr std::int64_t kSurge = 1;  // KubeAI's default model rollout surge

common::Result<std::string> multiply(const std::string& quantity, std::int64_t count,
                                     const std::string& what) {
  auto q = common::Quantity::parse(quantity);
  if (!q) return common::fail("invalid " + what + " quantity \"" + quantity + "\" in the resource profile");
  return common::Quantity::from_nanos(q->nano_value() * count, q->format()).canonical();
}

std::string strip_scheme(const std::string& url, const std::string& scheme) {
  return url.rfind(scheme, 0) == 0 ? url.substr(scheme.size()) : url;
}

json http_probe(const char* path, int period, int failure_threshold, int timeout) {
  return {{"httpGet", {{"path", path}, {"port", "http"}}},
          {"periodSeconds", period},
          {"failureThreshold", failure_threshold},
          {"timeoutSeconds", timeout},
          {"successThreshold", 1}};
}

}  // namespace

std::int64_t model_replicas(const json& model) {
  const json& spec = json_object_at(model, "spec");
  if (json_at(spec, "replicas").is_number_integer())
    return std::max<std::int64_t>(json_int(spec, "replicas", 1), 0);
  std::int64_t min = json_int(spec, "minReplicas", 0);
  return min > 0 ? min : 1;
}

common::Result<json> model_pod(const json& model, const ClusterConfig& config) {
  const json& spec = json_object_at(model, "spec");
  const std::string name = json_str(json_object_at(model, "metadata"), "name");
  const std::string engine = json_str(spec, "engine", "VLLM");
  const std::string url = json_str(spec, "url");

  // Resources: NAME:COUNT of a configured profile.
  json requests = json::object(), limits = json::object();
  bool gpu = false;
  if (std::string profile = json_str(spec, "resourceProfile"); !profile.empty()) {
    auto colon = profile.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return common::fail(
          "invalid resource profile: \"" + profile + "\", should match <name>:<multiple>, example: L4:2",
          "spec.resourceProfile");
    }
    std::string pname = profile.substr(0, colon), count_text = profile.substr(colon + 1);
    std::int64_t count = 0;
    if (count_text.empty() || count_text.size() > 6 ||
        !std::all_of(count_text.begin(), count_text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return common::fail("invalid multiple in resource profile: \"" + count_text + "\"",
                          "spec.resourceProfile");
    }
    count = std::stoll(count_text);
    auto it = config.model_profiles.find(pname);
    if (it == config.model_profiles.end()) {
      return common::fail("resource profile not found: \"" + pname + "\"", "spec.resourceProfile");
    }
    const ModelProfile& p = it->second;
    for (auto [key, value] : {std::pair{"cpu", p.cpu}, std::pair{"memory", p.memory}}) {
      if (value.empty()) continue;
      auto q = multiply(value, count, key);
      if (!q) return common::fail(q.error().message, "spec.resourceProfile");
      requests[key] = *q;
      limits[key] = *q;
    }
    if (p.gpus > 0 && count > 0) {
      gpu = true;
      requests[api::keys::kGpuResource] = std::to_string(p.gpus * count);
      limits[api::keys::kGpuResource] = std::to_string(p.gpus * count);
    }
  }

  json env = json::array();
  json args = json::array();
  json container = {{"name", "server"}};
  if (engine == "OLlama") {
    container["image"] = kOllamaImage;
    env.push_back({{"name", "OLLAMA_HOST"}, {"value", "0.0.0.0:8000"}});
    env.push_back({{"name", "OLLAMA_KEEP_ALIVE"}, {"value", "999999h"}});
    container["readinessProbe"] = http_probe("/", 10, 3, 2);
  } else {
    // VLLM (and the other engines, which kubex-sim serves with the vLLM image too).
    container["image"] = config.vllm_image;
    container["command"] = {"python3", "-m", "vllm.entrypoints.openai.api_server"};
    std::string model_flag = strip_scheme(url, "hf://");
    if (url.rfind("pvc://", 0) == 0) model_flag = "/model";
    args.push_back("--model=" + model_flag);
    args.push_back("--served-model-name=" + name);
    env.push_back({{"name", "VLLM_ALLOW_RUNTIME_LORA_UPDATING"}, {"value", "True"}});
    container["startupProbe"] = http_probe("/health", 2, 5400, 2);
    container["readinessProbe"] = http_probe("/health", 10, 3, 2);
  }
  for (const auto& a : json_array_at(spec, "args")) {
    if (a.is_string()) args.push_back(a);
  }
  for (const auto& [k, v] : json_string_map(spec, "env"))
    env.push_back({{"name", k}, {"value", v}});  // sorted
  if (!args.empty()) container["args"] = args;
  container["env"] = env;
  container["ports"] = json::array({{{"containerPort", 8000}, {"protocol", "TCP"}, {"name", "http"}}});
  if (!requests.empty()) container["resources"] = {{"requests", requests}, {"limits", limits}};
  container["volumeMounts"] = json::array({{{"name", "dshm"}, {"mountPath", "/dev/shm"}}});

  json pod_spec = {{"containers", json::array({container})},
                   {"volumes", json::array({{{"name", "dshm"}, {"emptyDir", {{"medium", "Memory"}}}}})}};
  if (gpu) {
    pod_spec["tolerations"] =
        json::array({{{"key", api::keys::kGpuResource}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  }
  const std::string hash = short_hash(pod_spec);
  json labels = {{"app.kubernetes.io/managed-by", "kubeai"}, {kModelLabel, name}, {kModelPodHashLabel, hash}};
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"labels", labels}, {"annotations", {{"model-pod-port", "8000"}}}}},
              {"spec", pod_spec}};
}

namespace {

class ModelController final : public WorkloadController {
 public:
  explicit ModelController(WorkloadEnv& env) : WorkloadController(env, "kubeai-model-controller", 1) {
    watch_primary("kubeai.org/models", uids_);
    watch_children("/pods", uids_);
  }

 protected:
  Requeue reconcile(const std::string& key) override;

 private:
  UidIndex uids_;
};

ModelController::Requeue ModelController::reconcile(const std::string& key) {
  auto obj = env_.read("kubeai.org/models", key);
  if (!obj) return std::nullopt;
  const ObjectMetaView meta = parse_meta(*obj);
  if (meta.uid.empty()) return std::nullopt;
  const json& cur = json_object_at(*obj, "status");
  const ObjectRef ref{"kubeai.org/v1", "Model", meta.ns, meta.name, meta.uid};
  Requeue requeue;

  auto pending = env_.expectations.pending(meta.uid);
  auto pods = env_.owned_pods(meta.uid);
  std::vector<std::shared_ptr<const SimPod>> live, finished;
  std::set<std::string> seen;
  for (const auto& p : pods) {
    seen.insert(p->name);
    if (p->deleting || pending.deletes.count(p->uid)) continue;
    (p->terminal() ? finished : live).push_back(p);
  }
  std::int64_t in_flight = 0;
  for (const auto& name : pending.creates) in_flight += seen.count(name) ? 0 : 1;

  auto desired_pod = model_pod(*obj, ctx_.config());
  if (!desired_pod) {
    env_.event(ref, "Warning", "InvalidResourceProfile", desired_pod.error().str(),
               "kubeai-model-controller");
  } else if (!meta.deleting) {
    const std::string hash = (*desired_pod)["metadata"]["labels"][kModelPodHashLabel];
    json pod = *desired_pod;
    pod["metadata"]["generateName"] = "model-" + meta.name + "-" + hash + "-";
    pod["metadata"]["namespace"] = meta.ns;
    pod["metadata"]["ownerReferences"] =
        json::array({controller_ref("kubeai.org/v1", "Model", meta.name, meta.uid)});

    // KubeAI's pod plan: deletion order puts not-ready, unscheduled, out-of-date and younger pods first.
    auto hash_of = [](const SimPod& p) {
      auto it = p.labels.find(kModelPodHashLabel);
      return it == p.labels.end() ? std::string() : it->second;
    };
    std::stable_sort(live.begin(), live.end(), [&](const auto& a, const auto& b) {
      if (a->ready != b->ready) return !a->ready;
      bool sa = !a->node.empty(), sb = !b->node.empty();
      if (sa != sb) return !sa;
      bool oa = hash_of(*a) != hash, ob = hash_of(*b) != hash;
      if (oa != ob) return oa;
      return a->created > b->created;
    });
    std::vector<const SimPod*> out_of_date;
    std::int64_t ready_all = 0;
    for (const auto& p : live) {
      if (p->ready) ++ready_all;
      if (hash_of(*p) != hash) out_of_date.push_back(p.get());
    }
    std::int64_t desired = model_replicas(*obj) + (out_of_date.empty() ? 0 : kSurge);
    std::int64_t observed = static_cast<std::int64_t>(live.size()) + in_flight;
    std::vector<const SimPod*> to_delete;
    std::int64_t to_create = 0;
    if (observed < desired) to_create = desired - observed;
    for (std::int64_t i = 0;
         observed > desired && i < observed - desired && i < static_cast<std::int64_t>(live.size()); ++i) {
      to_delete.push_back(live[static_cast<std::size_t>(i)].get());
    }
    std::int64_t recreated = 0;
    for (const SimPod* p : out_of_date) {
      if (std::find(to_delete.begin(), to_delete.end(), p) != to_delete.end()) continue;
      bool recreate = !p->ready || ready_all == desired;
      if (!recreate) continue;
      to_delete.push_back(p);
      if (recreated < static_cast<std::int64_t>(out_of_date.size()) - kSurge) {
        ++to_create;
        ++recreated;
      }
      if (p->ready) break;  // ready out-of-date pods go one at a time
    }
    for (const auto& p : finished) to_delete.push_back(p.get());
    for (const SimPod* p : to_delete) {
      if (auto r = env_.delete_pod(meta.uid, *p); !r) requeue = std::chrono::milliseconds(5000);
    }
    for (std::int64_t i = 0; i < to_create; ++i) {
      if (auto r = env_.create_pod(meta.uid, pod); !r) {
        env_.event(ref, "Warning", "FailedCreate", "Error creating pod: " + r.error().message,
                   "kubeai-model-controller");
        requeue = std::chrono::milliseconds(5000);
        break;
      }
    }
  }

  std::int64_t all = 0, ready = 0;
  for (const auto& p : live) {
    ++all;
    if (p->ready) ++ready;
  }
  json status = cur.is_object() ? cur : json::object();
  status["replicas"] = {{"all", all}, {"ready", ready}};
  if (auto w = env_.write_status(group_path("kubeai.org/v1", "models", meta.ns, meta.name), cur, status);
      !w) {
    if (!requeue) requeue = std::chrono::milliseconds(1000);
  }
  return requeue;
}

}  // namespace

std::unique_ptr<Subsystem> make_model_controller(WorkloadEnv& env) {
  return std::make_unique<ModelController>(env);
}

}  // namespace kubex::sim::cluster
