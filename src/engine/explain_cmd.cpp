#include "engine/explain_cmd.h"

#include <cctype>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "api/owner_kinds.h"
#include "api/views.h"
#include "common/log.h"
#include "decide/admission/exits.h"
#include "decide/policy/catalog.h"
#include "engine/command_client.h"
#include "engine/explain_build.h"
#include "engine/explain_report.h"
#include "engine/synced_informers.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"
#include "observe/caches.h"
#include "observe/catalog.h"
#include "observe/owners.h"
#include "observe/workloads.h"

namespace kubex::engine {
namespace {

using nlohmann::json;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr const char* kCommand = "kubex explain";

std::string api_error(const kube::ApiStatus& s) {
  return s.message.empty() ? s.reason + " (" + std::to_string(s.code) + ")" : s.message;
}

// The REST path of a pod or an owner kind (SEL-1) object.
std::string object_path(const std::string& kind, const std::string& ns, const std::string& name) {
  if (kind == "Pod") return "/api/v1/namespaces/" + ns + "/pods/" + name;
  const api::OwnerKind* k = api::owner_kind(kind);
  const std::string av(k->api_version);
  const auto slash = av.find('/');
  return kube::resource_path(slash == std::string::npos ? "" : av.substr(0, slash),
                             slash == std::string::npos ? av : av.substr(slash + 1), std::string(k->plural), ns, name);
}

std::string ref_text(const std::string& kind, const std::string& name) {
  return kind + "/" + name;
}

class Run {
 public:
  Run(const ExplainOptions& o, std::ostream& out, std::ostream& err) : o_(o), out_(out), err_(err) {}

  int run() {
    const std::string kind = explain_kind(o_.kind);
    if (kind.empty()) {
      err_ << kCommand << ": unknown kind \"" << o_.kind
           << "\" (pod, deployment, statefulset, daemonset, replicaset, job, cronjob, rollout, analysisrun, model, "
              "strimzipodset)\nRun 'kubex explain --help' for usage.\n";
      return kExitUsage;
    }
    std::string ns = o_.ns, name = o_.target;
    if (auto slash = o_.target.find('/'); slash != std::string::npos) {
      ns = o_.target.substr(0, slash);
      name = o_.target.substr(slash + 1);
    }
    if (ns.empty() || name.empty() || name.find('/') != std::string::npos) {
      err_ << kCommand << ": the object must be given as <namespace>/<name> (or <name> with -n)\n"
           << "Run 'kubex explain --help' for usage.\n";
      return kExitUsage;
    }
    auto client = command_client(o_.kubeconfig, o_.context);
    if (!client) return fail(client.error().str());
    kube::Client& c = **client;

    Explanation e;
    e.kind = kind;
    e.ns = ns;
    e.name = name;
    // The object first, with one GET: a missing object or an unreachable cluster is said at once. A pod is
    // kept whole (the caches keep a projection).
    std::optional<json> pod;
    const std::string what = (kind == "Pod" ? std::string("pod") : kind) + " " + ns + "/" + name;
    auto got = c.get(object_path(kind, ns, name));
    if (!got) {
      if (got.error().not_found()) return fail(what + " not found");
      return fail("cannot read " + what + ": " + api_error(got.error()));
    }
    if (kind == "Pod") pod = std::move(*got);

    CommandCaches view(*client, o_.global_config_name, o_.policy_evaluation_name);
    if (auto stuck = view.sync(); !stuck.empty()) return fail(stuck);
    const observe::Caches& caches = view.caches;
    const observe::CatalogCache& catalog = view.catalog;

    const ExplainContext ctx{caches, catalog, c, o_, common::RealClock::instance().now()};
    std::shared_ptr<const api::WorkloadView> workload;
    if (pod) {
      // ADM-3 (3)-(5) come before the owner (6).
      if (auto exit = decide::early_exit(*pod, ns, catalog.catalog()->global()); exit != decide::EarlyExit::kNone) {
        e.owner_chain.push_back(ref_text("Pod", name));
        e.not_managed = explain_reason(decide::exit_check(exit));
        return print(e);
      }
      if (!explain_pod_owner(ctx, *pod, e, workload)) return print(e);
    } else {
      auto inf = caches.owner_informer(kind);
      auto view = inf ? kube::as<api::WorkloadView>(inf->get(ns + "/" + name)) : nullptr;
      if (!view) return fail(kind + " " + ns + "/" + name + " not found");
      e.owner_chain = chain_of(caches, view);
      workload = top_workload(caches, view);
      if (!workload) {
        e.not_managed = explain_reason("no-workload");
        return print(e);
      }
    }
    e.workload = ref_text(workload->kind.str(), workload->name);
    // What a pod created now starts from: the template, or for owners without one the explained pod (or one
    // of the workload's live pods).
    std::optional<json> new_pod = observe::pod_template_of(caches, *workload);
    if (pod && (workload->template_json.empty() || !new_pod)) new_pod = *pod;
    if (!new_pod) {
      e.notes.push_back("the workload has no pod template and no pod yet: nothing to decide on");
      return print(e);
    }
    explain_admission(ctx, *workload, *new_pod, pod ? &*pod : nullptr, e);
    if (e.not_managed) return print(e);
    explain_proactive(ctx, *workload, e);
    explain_reactive(ctx, *workload, e);
    explain_actuation(ctx, *workload, pod ? name : "", e);
    e.rollback = explain_rollback(*workload);
    return print(e);
  }

 private:
  int fail(const std::string& message) {
    err_ << kCommand << ": " << message << "\n";
    return kExitFailed;
  }

  int print(const Explanation& e) {
    if (o_.output == "json") {
      out_ << explanation_json(e).dump(2) << "\n";
    } else {
      print_explanation(e, out_);
    }
    return kExitOk;
  }

  // "Kind/name" of `view` and its controller owners up the caches, target first.
  static std::vector<std::string> chain_of(const observe::Caches& caches, std::shared_ptr<const api::WorkloadView> v) {
    std::vector<std::string> chain;
    for (int depth = 0; v && depth < 4; ++depth) {
      chain.push_back(ref_text(v->kind.str(), v->name));
      const api::OwnerRef* up = v->controller();
      if (!up) break;
      auto inf = caches.owner_informer(up->kind.str());
      auto next = inf ? kube::as<api::WorkloadView>(inf->get(v->ns.str() + "/" + up->name.str())) : nullptr;
      if (!next) chain.push_back(ref_text(up->kind.str(), up->name.str()) + " (not found)");
      v = next;
    }
    return chain;
  }

  // SEL-1 for a workload-kind target: itself when it is a workload, else its owner when that one is (a
  // ReplicaSet's Deployment, a Job's CronJob); nullptr otherwise.
  static std::shared_ptr<const api::WorkloadView> top_workload(const observe::Caches& caches,
                                                               std::shared_ptr<const api::WorkloadView> v) {
    for (int depth = 0; v && depth < 2; ++depth) {
      if (auto w = observe::find_workload(caches, observe::workload_key(*v)); w) return w;
      const api::OwnerRef* up = v->controller();
      if (!up) return nullptr;
      auto inf = caches.owner_informer(up->kind.str());
      v = inf ? kube::as<api::WorkloadView>(inf->get(v->ns.str() + "/" + up->name.str())) : nullptr;
    }
    return nullptr;
  }

  // SEL-1/SEL-2 for a pod, as admission resolves it. False (with e.not_managed) when there is no workload.
  bool explain_pod_owner(const ExplainContext& ctx, const json& pod, Explanation& e,
                         std::shared_ptr<const api::WorkloadView>& workload) {
    e.owner_chain.push_back(ref_text("Pod", e.name));
    std::vector<api::OwnerRef> refs;
    if (pod.contains("metadata") && pod["metadata"].is_object()) refs = api::owners_of(pod["metadata"]);
    for (const auto& r : refs) {
      if (!r.controller) continue;
      auto inf = ctx.caches.owner_informer(r.kind.str());
      auto v = inf ? kube::as<api::WorkloadView>(inf->get(e.ns + "/" + r.name.str())) : nullptr;
      if (v) {
        for (auto& link : chain_of(ctx.caches, v)) e.owner_chain.push_back(std::move(link));
      } else {
        e.owner_chain.push_back(ref_text(r.kind.str(), r.name.str()));
      }
    }
    observe::OwnerResolver owners(ctx.caches, nullptr);  // the caches are synced: no API retries
    observe::OwnerResolution res = owners.resolve(e.ns, refs, std::chrono::seconds(0));
    if (res.unknown) {
      e.not_managed = explain_reason("unknown-owner");
      e.not_managed->sentence += " (" + res.detail + ")";
      return false;
    }
    if (!res.view) {
      e.not_managed = explain_reason("no-workload");
      return false;
    }
    workload = res.view;
    return true;
  }

  const ExplainOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
};

}  // namespace

std::string explain_kind(const std::string& arg) {
  static const std::map<std::string, std::string> kinds = {
      {"pod", "Pod"},
      {"po", "Pod"},
      {"deployment", "Deployment"},
      {"deploy", "Deployment"},
      {"statefulset", "StatefulSet"},
      {"sts", "StatefulSet"},
      {"daemonset", "DaemonSet"},
      {"ds", "DaemonSet"},
      {"replicaset", "ReplicaSet"},
      {"rs", "ReplicaSet"},
      {"job", "Job"},
      {"cronjob", "CronJob"},
      {"cj", "CronJob"},
      {"rollout", "Rollout"},
      {"ro", "Rollout"},
      {"analysisrun", "AnalysisRun"},
      {"model", "Model"},
      {"strimzipodset", "StrimziPodSet"},
      {"sps", "StrimziPodSet"},
  };
  std::string k;
  for (char ch : arg) k += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (auto it = kinds.find(k); it != kinds.end()) return it->second;
  if (!k.empty() && k.back() == 's') {  // plurals: pods, deployments, …
    if (auto it = kinds.find(k.substr(0, k.size() - 1)); it != kinds.end()) return it->second;
  }
  return "";
}

int run_explain(const ExplainOptions& options, std::ostream& out, std::ostream& err) {
  return run_quiet_command(kCommand, err, [&] { return Run(options, out, err).run(); });
}

}  // namespace kubex::engine
