// VLM-2: vLLM rewriting at admission, for KAI-mutated pods whose governing strategy has spec.kai.vllm.
#include <gtest/gtest.h>

#include "../fixtures.h"
#include "decide/admission/pod_mutation.h"

using namespace kubex;
using namespace kubex::decide;
using namespace kubex::decide::test;

namespace {

struct Vllm {
  Scenario s;
  api::Strategy* st;
  explicit Vllm(const std::string& rec, int buffer = 10) {
    api::Strategy strategy = kai_strategy();
    strategy.spec.has_kai = true;
    strategy.spec.has_vllm = true;
    strategy.spec.vllm_buffer_percent = buffer;
    st = const_cast<api::Strategy*>(s.add_strategy(strategy));
    s.add_policy(policy_of(api::Kind::kGpuReactivePolicy, "r", "kai"), st);
    if (!rec.empty())
      s.workload.annotations["gpureactive.rightsizing.kubex.ai/desired-resource-requests"] = rec;
  }
};

json vllm_container(json args, json command = nullptr, json resources = json::object()) {
  json c = container("server", "vllm/vllm-openai:v0.6.3", std::move(resources));
  if (!command.is_null()) c["command"] = std::move(command);
  if (!args.is_null()) c["args"] = std::move(args);
  return c;
}

const json& server(const AdmissionDecision& d) {
  return d.pod->at("spec").at("containers").at(0);
}

}  // namespace

// VLM-2 / VLM-3 / VLM-4: the fraction pod's server gets fraction x (1 - b/100); the split form is rewritten.
TEST(AdmissionVllm, FractionWithoutHamiCore) {
  Vllm f(R"({"server":{"gpu":"0.5"}})");
  const json in = pod(json::array({vllm_container(
      json::array({"--model", "m", "--gpu-memory-utilization", "0.9"}), nullptr, whole_gpus(1))}));
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(server(d).at("args"),
            (json::array({"--model", "m", "--gpu-memory-utilization", "0.45"})));  // 0.5/10
  EXPECT_FALSE(server(d).contains("command"));
  EXPECT_FALSE(f.s.run(*d.pod).patched());  // ADM-2
  EXPECT_EQ(*f.s.run(*f.s.run(in, Pass::kEarly).pod).pod, *d.pod);
}

// VLM-3: HAMiCore gives 1 - b/100 whatever the fraction.
TEST(AdmissionVllm, HamiCore) {
  Vllm f(R"({"server":{"gpu":"0.25"}})");
  f.s.global.kai_memory_isolation = "HAMiCore";
  const json in =
      pod(json::array({vllm_container(json::array({"--model", "m"}))}), {{"gpu-fraction", "0.5"}});
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(server(d).at("args"),
            (json::array({"--model", "m", "--gpu-memory-utilization=0.9"})));  // appended
}

// VLM-3: whole GPUs give 1 - b/100.
TEST(AdmissionVllm, WholeGpus) {
  Vllm f(R"({"server":{"gpu":"1"}})", 5);
  const json in = pod(json::array({vllm_container(json::array({"--gpu-memory-utilization=0.5"}))}),
                      {{"gpu-fraction", "0.5"}});
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(server(d).at("resources"), whole_gpus(1));
  EXPECT_EQ(server(d).at("args"), (json::array({"--gpu-memory-utilization=0.95"})));
}

// VLM-2: this includes pods whose GPU value was unchanged or gated (fraction kept, KAI extras).
TEST(AdmissionVllm, GatedPodStillTuned) {
  Vllm f(R"({"server":{"gpu":"0.6"}})");
  f.st->spec.gpu_requests.upsize = false;
  const json in = pod(json::array({vllm_container(nullptr, json::array({"vllm", "serve", "m"}))}),
                      {{"gpu-fraction", "0.3"}});
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(d.pod->at("metadata").at("annotations").at("gpu-fraction"), "0.3");
  EXPECT_EQ(server(d).at("args"), (json::array({"--gpu-memory-utilization=0.27"})));  // 0.3/10
  EXPECT_TRUE(d.constraints.has("automation-strategy-disabled"));
}

// VLM-4 (4): a flag inside a `sh -c` script is not rewritten; the reason is recorded.
TEST(AdmissionVllm, NotRewritableInsideShell) {
  Vllm f(R"({"server":{"gpu":"0.5"}})");
  const json c =
      vllm_container(json::array({"vllm serve m --gpu-memory-utilization=0.9"}), json::array({"sh", "-c"}));
  const json in = pod(json::array({c}), {{"gpu-fraction", "0.25"}});
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(server(d).at("args"), c.at("args"));
  EXPECT_EQ(server(d).at("command"), c.at("command"));
  EXPECT_EQ(d.pod->at("metadata").at("annotations").at("rightsizing.kubex.ai/automation-constraints"),
            R"([{"reason":"vllm-args-not-rewritable","targets":[{"container":"server"}]}])");
  EXPECT_EQ(d.pod->at("metadata").at("annotations").at("gpu-fraction"), "0.5");  // the GPU still changes
  EXPECT_FALSE(f.s.run(*d.pod).patched());
}

// VLM-2: nothing happens without spec.kai.vllm, for non-vLLM containers, or when the pod is not KAI-mutated.
TEST(AdmissionVllm, OnlyWhenApplicable) {
  const json args = json::array({"--gpu-memory-utilization=0.9"});
  {
    Vllm f(R"({"server":{"gpu":"0.5"}})");
    f.st->spec.has_vllm = false;
    const AdmissionDecision d = f.s.run(pod(json::array({vllm_container(args)}), {{"gpu-fraction", "0.25"}}));
    EXPECT_EQ(server(d).at("args"), args);
  }
  {
    Vllm f(R"({"server":{"gpu":"0.5"}})");
    json c = vllm_container(args);
    c["image"] = "nvcr.io/nvidia/pytorch:24.01-py3";
    const AdmissionDecision d = f.s.run(pod(json::array({c}), {{"gpu-fraction", "0.25"}}));
    EXPECT_EQ(server(d).at("args"), args);  // VLM-1: not a vLLM container
  }
  {
    Vllm f("");  // whole-GPU pod with no recommendation: untouched, not KAI-mutated
    const AdmissionDecision d = f.s.run(pod(json::array({vllm_container(args, nullptr, whole_gpus(1))})));
    EXPECT_EQ(server(d).at("args"), args);
    EXPECT_TRUE(d.constraints.has("no-gpu-recommendation"));
  }
}

// VLM-1: a KubeAI Model with spec.engine VLLM marks its pods' GPU container as vLLM.
TEST(AdmissionVllm, KubeAiModelEngine) {
  Vllm f(R"({"server":{"gpu":"0.5"}})");
  f.s.workload.kind = "Model";
  f.s.workload.name = "opt";
  f.s.workload.model_engine = "VLLM";
  json c = vllm_container(json::array({"--model", "facebook/opt-125m"}));
  c["image"] = "ghcr.io/kubeai/model-server:v1";
  const AdmissionDecision d = f.s.run(pod(json::array({c}), {{"gpu-fraction", "0.25"}}));
  EXPECT_EQ(server(d).at("args"),
            (json::array({"--model", "facebook/opt-125m", "--gpu-memory-utilization=0.45"})));
  f.s.workload.model_engine = "OLlama";
  const AdmissionDecision other = f.s.run(pod(json::array({c}), {{"gpu-fraction", "0.25"}}));
  EXPECT_EQ(server(other).at("args"), c.at("args"));
}

// OBS-4, ADM-16: an existing KAI vLLM pod whose only edit is vLLM (fraction 0.5 kept, already on the KAI
// scheduler and in a queue) reports that edit: in `changes[]`, in the summary text and in
// pod-rightsizing-info. ADM-2: its own output gets no patch, and early then late equals one pass.
TEST(AdmissionVllm, ExistingKaiPodReportsTheVllmEdit) {
  Vllm f(R"({"server":{"gpu":"0.5"}})");
  const json args = json::array({"--model", "m", "--gpu-memory-utilization", "0.95"});
  json in =
      pod(json::array({vllm_container(args)}), {{"gpu-fraction", "0.5"}}, {{"kai.scheduler/queue", "team"}});
  in["spec"]["schedulerName"] = "kai-scheduler";
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(server(d).at("args"), (json::array({"--model", "m", "--gpu-memory-utilization", "0.45"})));
  EXPECT_EQ(d.result, AdmissionResult::kMutated);
  EXPECT_EQ(d.summary.text, "No rightsizing changes; vllm [server:0.45]");  // OBS-4
  EXPECT_TRUE(d.summary.changes.empty());
  EXPECT_EQ(d.summary.edits,
            (std::vector<Edit>{{EditTarget::kVllmGpuMemoryUtilization, "server", "0.95", "0.45"}}));
  const json fields = summary_fields(d.summary);
  EXPECT_EQ(fields.at("changes"),
            json::parse(R"([{"container":"server","from":"0.95",)"
                        R"("resource":"vllm-gpu-memory-utilization","to":"0.45","usage":"arg"}])"));
  EXPECT_EQ(d.pod->at("metadata").at("annotations").at("automation-webhook.kubex.ai/pod-rightsizing-info"),
            R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"server":)"
            R"({"vllmGpuMemoryUtilization":{"from":"0.95","to":"0.45"}}}})");  // ADM-16
  const AdmissionDecision again = f.s.run(*d.pod);
  EXPECT_FALSE(again.patched()) << again.patch->dump();  // ADM-2
  EXPECT_EQ(again.summary.text, "No rightsizing changes");
  EXPECT_EQ(*f.s.run(*f.s.run(in, Pass::kEarly).pod).pod, *d.pod);
}

// OBS-4, ADM-16: a whole-GPU vLLM pod converted to KAI lists every edit: the GPU, the scheduler, the queue
// (there was none: `from` null) and the appended flag (`from` null). The late pass after the early one
// keeps the early pass's annotation (ADM-2).
TEST(AdmissionVllm, ConvertedPodReportsEveryEdit) {
  Vllm f(R"({"server":{"gpu":"0.5"}})");
  const json in = pod(json::array({vllm_container(json::array({"--model", "m"}), nullptr, whole_gpus(1))}));
  const AdmissionDecision d = f.s.run(in);
  EXPECT_EQ(d.summary.text,
            "Applied rightsizing requests [server:[gpu=0.5]] limits [none]; "
            "kai [scheduler=kai-scheduler queue=kubex-unlimited-gpu-queue]; vllm [server:0.45]");
  const json changes = summary_fields(d.summary).at("changes");
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[1], json::parse(R"({"container":"","from":"default-scheduler","resource":"scheduler",)"
                                    R"("to":"kai-scheduler","usage":"pod"})"));
  EXPECT_EQ(changes[2], json::parse(R"({"container":"","from":null,"resource":"queue",)"
                                    R"("to":"kubex-unlimited-gpu-queue","usage":"pod"})"));
  EXPECT_EQ(changes[3],
            json::parse(R"({"container":"server","from":null,)"
                        R"("resource":"vllm-gpu-memory-utilization","to":"0.45","usage":"arg"})"));
  const std::string info = R"({"mode":"kai","strategy":"AutomationStrategy/kai","containers":{"server":{)"
                           R"("gpu":{"from":"1","to":"0.5","source":"GpuReactivePolicy/r"},)"
                           R"("vllmGpuMemoryUtilization":{"from":null,"to":"0.45"}}},)"
                           R"("kai":{"scheduler":{"from":"default-scheduler","to":"kai-scheduler"},)"
                           R"("queue":{"from":null,"to":"kubex-unlimited-gpu-queue"}}})";
  EXPECT_EQ(d.pod->at("metadata").at("annotations").at("automation-webhook.kubex.ai/pod-rightsizing-info"),
            info);
  const AdmissionDecision late = f.s.run(*f.s.run(in, Pass::kEarly).pod, Pass::kLate);
  EXPECT_EQ(*late.pod, *d.pod);  // ADM-2
  EXPECT_FALSE(late.patched());
}
