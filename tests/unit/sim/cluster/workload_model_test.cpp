// KubeAI Model server pods (KubeAI's model controller: vLLM/Ollama pod spec, resource profiles, pod hash).
#include "sim/cluster/workload_model.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kubex::sim::cluster {
namespace {

using nlohmann::json;

json model(json spec, const std::string& name = "llama") {
  return {{"apiVersion", "kubeai.org/v1"},
          {"kind", "Model"},
          {"metadata", {{"name", name}, {"namespace", "ai"}}},
          {"spec", std::move(spec)}};
}

TEST(ModelPod, VllmServerContainer) {
  ClusterConfig cfg = ClusterConfig::defaults();
  auto pod = model_pod(model({{"url", "hf://meta-llama/Llama-3.1-8B"},
                              {"engine", "VLLM"},
                              {"resourceProfile", "nvidia-gpu-t4:2"},
                              {"args", {"--max-model-len=4096", "--gpu-memory-utilization=0.9"}},
                              {"env", {{"B", "2"}, {"A", "1"}}}}),
                       cfg);
  ASSERT_TRUE(pod) << pod.error().str();
  const json& c = (*pod)["spec"]["containers"][0];
  EXPECT_EQ(c["name"], "server");
  EXPECT_EQ(c["image"], cfg.vllm_image);
  EXPECT_EQ(c["args"], json({"--model=meta-llama/Llama-3.1-8B", "--served-model-name=llama",
                             "--max-model-len=4096", "--gpu-memory-utilization=0.9"}));
  // Engine env first, then spec.env sorted by name.
  EXPECT_EQ(c["env"], json::parse(R"([{"name":"VLLM_ALLOW_RUNTIME_LORA_UPDATING","value":"True"},
                                      {"name":"A","value":"1"},{"name":"B","value":"2"}])"));
  // nvidia-gpu-t4 is 1 GPU, 4 CPU, 16Gi per unit; COUNT 2 doubles all of it, in requests and limits.
  EXPECT_EQ(c["resources"]["requests"], json({{"nvidia.com/gpu", "2"}, {"cpu", "8"}, {"memory", "32Gi"}}));
  EXPECT_EQ(c["resources"]["limits"], c["resources"]["requests"]);
  EXPECT_EQ(c["ports"][0]["containerPort"], 8000);
  EXPECT_EQ((*pod)["spec"]["tolerations"][0]["key"], "nvidia.com/gpu");
  const json& labels = (*pod)["metadata"]["labels"];
  EXPECT_EQ(labels["app.kubernetes.io/managed-by"], "kubeai");
  EXPECT_EQ(labels["model"], "llama");
  EXPECT_EQ(labels["pod-hash"].get<std::string>().size(), 10u);
}

TEST(ModelPod, HashFollowsTheSpec) {
  ClusterConfig cfg = ClusterConfig::defaults();
  json spec = {{"url", "hf://org/m"}, {"engine", "VLLM"}, {"resourceProfile", "nvidia-gpu-t4:1"}};
  auto hash = [&](const json& s) { return (*model_pod(model(s), cfg))["metadata"]["labels"]["pod-hash"]; };
  auto base = hash(spec);
  EXPECT_EQ(hash(spec), base);
  json replicas = spec;
  replicas["replicas"] = 5;
  replicas["minReplicas"] = 2;
  EXPECT_EQ(hash(replicas), base) << "scaling must not roll pods";
  for (auto [key, value] :
       {std::pair{"args", json({"--x"})}, std::pair{"resourceProfile", json("nvidia-gpu-t4:2")},
        std::pair{"url", json("hf://org/other")}, std::pair{"env", json({{"K", "v"}})}}) {
    json changed = spec;
    changed[key] = value;
    EXPECT_NE(hash(changed), base) << key;
  }
}

TEST(ModelPod, OllamaAndCpuProfiles) {
  ClusterConfig cfg = ClusterConfig::defaults();
  auto pod = model_pod(
      model({{"url", "ollama://qwen2:0.5b"}, {"engine", "OLlama"}, {"resourceProfile", "cpu:1"}}), cfg);
  ASSERT_TRUE(pod);
  const json& c = (*pod)["spec"]["containers"][0];
  EXPECT_EQ(c["image"], kOllamaImage);
  EXPECT_FALSE(c.contains("args"));
  EXPECT_EQ(c["env"][0], json({{"name", "OLLAMA_HOST"}, {"value", "0.0.0.0:8000"}}));
  EXPECT_EQ(c["resources"]["requests"],
            json({{"cpu", "2"}, {"memory", "4Gi"}}));  // no GPU in the cpu profile
  EXPECT_FALSE((*pod)["spec"].contains("tolerations"));
}

TEST(ModelPod, BadProfilesAreErrorsWithTheField) {
  ClusterConfig cfg = ClusterConfig::defaults();
  for (const char* profile : {"nvidia-gpu-t4", "nvidia-gpu-t4:x", ":2", "nope:1", "nvidia-gpu-t4:-1"}) {
    auto pod = model_pod(model({{"url", "hf://a/b"}, {"engine", "VLLM"}, {"resourceProfile", profile}}), cfg);
    ASSERT_FALSE(pod) << profile;
    EXPECT_EQ(pod.error().path, "spec.resourceProfile") << profile;
  }
  auto missing =
      model_pod(model({{"url", "hf://a/b"}, {"engine", "VLLM"}, {"resourceProfile", "nope:1"}}), cfg);
  EXPECT_EQ(missing.error().message, "resource profile not found: \"nope\"");
  // Odd shapes never throw.
  EXPECT_TRUE(model_pod(json::object(), cfg));
  EXPECT_TRUE(model_pod(model({{"args", {1, "--ok"}}, {"env", {{"N", 3}}}}), cfg));
}

TEST(ModelReplicas, Table) {
  EXPECT_EQ(model_replicas(model({{"replicas", 3}})), 3);
  EXPECT_EQ(model_replicas(model({{"replicas", 0}, {"minReplicas", 2}})), 0);  // explicit replicas win
  EXPECT_EQ(model_replicas(model({{"minReplicas", 2}})), 2);
  EXPECT_EQ(model_replicas(model({{"minReplicas", 0}})), 1);  // no scale-from-zero in kubex-sim
  EXPECT_EQ(model_replicas(model(json::object())), 1);
  EXPECT_EQ(model_replicas(model({{"replicas", "3"}})), 1);
}

}  // namespace
}  // namespace kubex::sim::cluster
