#include "observe/owners.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "api/owner_kinds.h"
#include "common/blocking.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"
#include "kube/runtime/predicates.h"

namespace kubex::observe {

using nlohmann::json;

OwnerResolver::OwnerResolver(const Caches& caches, std::shared_ptr<kube::Client> client)
    : caches_(caches), client_(std::move(client)) {}

std::shared_ptr<const api::WorkloadView> OwnerResolver::fetch(
    const std::string& ns, const api::OwnerRef& ref, std::chrono::steady_clock::time_point deadline) const {
  auto matches = [&](const std::shared_ptr<const api::WorkloadView>& v) {
    return v && (ref.uid.empty() || v->uid == ref.uid);
  };
  if (auto inf = caches_.owner_informer(ref.kind)) {
    auto v = kube::as<api::WorkloadView>(inf->get(ns + "/" + ref.name.str()));
    if (matches(v)) return v;
  }
  const api::OwnerKind* kind = api::owner_kind(ref.kind.view());
  if (!kind || !client_) return nullptr;
  std::string plural(kind->plural);
  std::string av = ref.api_version;
  auto slash = av.find('/');
  std::string group = slash == std::string::npos ? "" : av.substr(0, slash);
  std::string version = slash == std::string::npos ? av : av.substr(slash + 1);
  std::string path = kube::resource_path(group, version, plural, ns, ref.name);
  const common::BlockingScope waiting;  // the webhook lends another serving thread meanwhile
  while (true) {
    auto r = client_->get(path);
    if (r) {
      auto v = api::project_workload(*r);
      if (matches(v)) return v;
    }
    if (std::chrono::steady_clock::now() >= deadline) return nullptr;
    // The informer may catch up meanwhile (an owner created a moment before its pod).
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (auto inf = caches_.owner_informer(ref.kind)) {
      auto v = kube::as<api::WorkloadView>(inf->get(ns + "/" + ref.name.str()));
      if (matches(v)) return v;
    }
  }
}

OwnerResolution OwnerResolver::resolve(const std::string& ns, const std::vector<api::OwnerRef>& owners,
                                       common::Duration retry_timeout) const {
  OwnerResolution out;
  const api::OwnerRef* ref = kube::controller_of(owners);
  if (!ref) return out;  // a bare pod: no workload
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(retry_timeout);
  auto get = [&](const api::OwnerRef& r) {
    auto v = fetch(ns, r, deadline);
    if (!v) {
      out.unknown = true;
      out.detail = r.kind.str() + "/" + r.name.str() + " not found";
    }
    return v;
  };
  const std::string& kind = ref->kind;
  if (kind == "StatefulSet" || kind == "DaemonSet" || kind == "Model" || kind == "StrimziPodSet") {
    out.view = get(*ref);
    return out;
  }
  if (kind == "ReplicaSet") {
    auto rs = get(*ref);
    if (!rs) return out;
    const api::OwnerRef* top = rs->controller();
    if (!top || (top->kind.view() != "Deployment" && top->kind.view() != "Rollout")) return out;
    out.view = get(*top);
    return out;
  }
  if (kind == "Job") {
    auto job = get(*ref);
    if (!job) return out;
    const api::OwnerRef* top = job->controller();
    if (top && (top->kind.view() == "CronJob" || top->kind.view() == "AnalysisRun")) {
      out.view = get(*top);
      return out;
    }
    if (top) return out;  // a Job owned by something else is not a recognised chain
    out.view = job;
    return out;
  }
  return out;  // any other chain resolves to no workload
}

}  // namespace kubex::observe
