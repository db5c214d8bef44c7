// Fakes for the actuation and rollback controllers: the workload and its pods as observe::ActuationFacts
// reads them, and the pod annotation writer; plus a Ready KAI pod of the workload.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "act/pod_annotations.h"
#include "common/clock.h"
#include "decide/actuation/actuation.h"
#include "observe/actuation.h"

namespace kubex::controllers::test {

using nlohmann::json;
using namespace std::chrono_literals;
namespace da = decide::actuation;

inline const std::string kKey = "Deployment/ml/infer";

class FakeActuationFacts final : public observe::ActuationFacts {
 public:
  std::vector<std::shared_ptr<const api::WorkloadView>> workloads() const override { return {workload}; }
  // The workload with spec.replicas = `replicas`, or (by default) as many as the unfinished pods of pod_list: ACT-3
  // counts a replica with no pod as in flight, so a test's pods are the whole workload unless it says otherwise.
  std::shared_ptr<const api::WorkloadView> find(const std::string& key) const override {
    if (key != kKey || !workload) return nullptr;
    auto w = std::make_shared<api::WorkloadView>(*workload);
    if (replicas) {
      w->replicas = *replicas;
    } else {
      std::int64_t n = 0;
      for (const auto& p : pod_list) n += !p.finished();
      w->replicas = n;
    }
    return w;
  }
  std::optional<json> pod_template(const api::WorkloadView&) const override { return tmpl; }
  std::optional<json> original(const api::WorkloadView&) const override { return tmpl; }
  std::vector<da::PodFacts> pods(const api::WorkloadView&) const override { return pod_list; }
  std::map<std::string, std::string> namespace_annotations(const std::string&) const override { return {}; }
  std::string workload_key_of(const api::PodView&) const override { return kKey; }
  // ACT-2a: `pool` when a test gives one; otherwise one Ready node with 8 GPUs holding every pod of pod_list, so
  // that an upsize fits.
  decide::packing::Pool gpu_pool(const std::string&) const override {
    ++pool_reads;
    if (!pool.nodes.empty()) return pool;
    decide::packing::Pool roomy;
    decide::packing::PoolNode n;
    n.name = "node-1";
    n.gpu_capacity = 8;
    n.ready = true;
    roomy.nodes.push_back(n);
    for (const auto& p : pod_list) {
      decide::packing::PoolPod pp;
      pp.ns = "ml";
      pp.name = p.name;
      pp.node = n.name;
      for (const auto& g : p.live) (g.fraction ? pp.fraction : pp.whole_gpus) += g.fraction ? g.value : g.value / 100;
      roomy.pods.push_back(pp);
    }
    return roomy;
  }

  std::shared_ptr<const api::WorkloadView> workload;
  json tmpl;
  std::vector<da::PodFacts> pod_list;
  std::optional<std::int64_t> replicas;  // spec.replicas; nullopt: the unfinished pods of pod_list
  decide::packing::Pool pool;  // ACT-2a: empty unless a test gives one
  mutable int pool_reads = 0;
};

class FakePodAnnotations final : public act::PodAnnotationWriter {
 public:
  kube::KResult<void> write(const std::string& ns, const std::string& pod,
                            const std::map<std::string, std::optional<std::string>>& set) override {
    for (const auto& [k, v] : set) writes.push_back({ns + "/" + pod, k, v.value_or("<removed>")});
    return {};
  }
  std::vector<std::vector<std::string>> writes;
};

// A KAI pod of the workload at `fraction`, Ready for a minute.
inline da::PodFacts pod(const std::string& name, decide::Hundredths fraction, common::TimePoint now) {
  da::PodFacts p;
  p.name = name;
  p.uid = "uid-" + name;
  p.phase = "Running";
  p.created = now - 10min;
  p.ready = true;
  p.ready_since = now - 1min;
  p.live = {{"app", fraction, true}};
  return p;
}

}  // namespace kubex::controllers::test
