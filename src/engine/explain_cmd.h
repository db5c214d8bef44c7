// `kubex explain pod <ns>/<name>` and `kubex explain <workload-kind> <ns>/<name>` (SPEC CLI-1): why kubex does
// what it does to one pod or workload, computed by the engine's own code on a read of the live cluster
// (never a write):
//  - the owner chain and workload (SEL-1), or the ADM-3 exit that leaves the pod alone, in one line;
//  - every matching policy in SEL-5 order, its validity (SEL-4) and the resources it wins (SEL-6, SEL-7);
//  - the governing strategy and mode (SEL-9), and per container and resource the current value, the desired
//    value with the policy and owner annotation it comes from, the value a pod created now gets after clamps
//    and gates (the admission decision itself), and each constraint reason with a sentence;
//  - for a reactive policy: reactive-state, the policy's last evaluation and, when Prometheus answers, the
//    samples of both signals now and which rule (REA-6, REA-7, REA-11) would fire (decide::reactive);
//  - for actuation: whether each pod is in sync (ACT-1) and every ACT-2/ACT-3 check that blocks its eviction
//    (decide::actuation), and the rollback phase (RBK-1).
// The cluster is read with the ENG-3 kubeconfig rules through the engine's informer caches, synced once.
// Exit: 0 explained (an unmanaged pod included), 1 not found or the cluster cannot be read, 2 bad usage.
#pragma once

#include <iosfwd>
#include <string>

namespace kubex::engine {

struct ExplainOptions {
  std::string kubeconfig, context;
  std::string kind;    // pod, deployment, statefulset, daemonset, job, cronjob, rollout, analysisrun, model, …
  std::string target;  // "<ns>/<name>", or "<name>" with `ns`
  std::string ns;      // -n
  std::string output = "table";  // table | json
  std::string global_config_name = "global-config";
  std::string policy_evaluation_name = "policy-evaluation";
  // Prometheus as the engine reaches it is often a cluster-internal URL: these override global-config's.
  std::string prometheus_url;
  std::string prometheus_bearer_token_file, prometheus_ca_file;
};

// The workload kind an `explain` argument names ("deploy" -> "Deployment"), "Pod" for pods, "" when unknown.
std::string explain_kind(const std::string& arg);

// Never throws.
int run_explain(const ExplainOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kubex::engine
