#include "act/tainter.h"

#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "kube/client/client.h"

namespace kubex::act {

using nlohmann::json;
using Outcome = TaintResult::Outcome;

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kApplied: return "applied";
    case Outcome::kUnchanged: return "unchanged";
    case Outcome::kHeld: return "held";
    case Outcome::kConflict: return "conflict";
    case Outcome::kNotFound: return "not_found";
    case Outcome::kError: return "error";
  }
  return "error";
}

namespace {

TaintResult failed(const kube::ApiStatus& e) {
  TaintResult r;
  r.outcome = e.not_found() ? Outcome::kNotFound : e.conflict() ? Outcome::kConflict : Outcome::kError;
  r.message = e.str();
  return r;
}

bool is_consolidation(const json& t) {
  return t.is_object() && t.value("key", "") == api::keys::kConsolidatingTaint;
}

class ClientTainter final : public Tainter {
 public:
  ClientTainter(std::shared_ptr<kube::Client> client, common::Logger log)
      : client_(std::move(client)), log_(std::move(log)) {}

  TaintResult add(const std::string& node, const std::string& policy) override {
    const std::string path = kube::resource_path("", "v1", "nodes", "", node);
    auto cur = client_->get(path);
    if (!cur) return failed(cur.error());
    json obj = std::move(*cur);
    if (!obj.contains("spec") || !obj["spec"].is_object()) obj["spec"] = json::object();
    json& taints = obj["spec"]["taints"];
    if (!taints.is_array()) taints = json::array();
    for (const auto& t : taints) {
      if (!is_consolidation(t)) continue;
      TaintResult r;
      r.holder = t.value("value", "");
      r.outcome = r.holder == policy ? Outcome::kUnchanged : Outcome::kHeld;
      return r;
    }
    taints.push_back({{"key", api::keys::kConsolidatingTaint}, {"value", policy}, {"effect", "NoSchedule"}});
    return write(path, obj, node, policy, "tainted node for consolidation");
  }

  TaintResult remove(const std::string& node, const std::string& policy) override {
    const std::string path = kube::resource_path("", "v1", "nodes", "", node);
    TaintResult last;
    // A removal is retried at once on conflict (a bounded few times): leaving the taint is the worse outcome,
    // and each attempt is still guarded by the resourceVersion it read.
    for (int attempt = 0; attempt < 3; ++attempt) {
      auto cur = client_->get(path);
      if (!cur) return failed(cur.error());
      json obj = std::move(*cur);
      if (!obj.contains("spec") || !obj["spec"].is_object() || !obj["spec"].contains("taints") ||
          !obj["spec"]["taints"].is_array()) {
        return {Outcome::kUnchanged, "", ""};
      }
      json kept = json::array();
      bool found = false;
      for (auto& t : obj["spec"]["taints"]) {
        if (is_consolidation(t) && t.value("value", "") == policy) {
          found = true;
          continue;
        }
        kept.push_back(std::move(t));
      }
      if (!found) return {Outcome::kUnchanged, "", ""};
      if (kept.empty()) {
        obj["spec"].erase("taints");
      } else {
        obj["spec"]["taints"] = std::move(kept);
      }
      last = write(path, obj, node, policy, "removed the consolidation taint");
      if (last.outcome != Outcome::kConflict) return last;
    }
    return last;
  }

 private:
  // A JSON merge patch of spec.taints carrying the read metadata.resourceVersion: the API server refuses it with
  // 409 when the node changed since (optimistic concurrency, like an update), and the verb is `patch`, the
  // one HLM-2's RBAC grants on nodes.
  TaintResult write(const std::string& path, const json& obj, const std::string& node, const std::string& policy,
                    const char* what) {
    json patch = {{"metadata", {{"resourceVersion", obj["metadata"].value("resourceVersion", "")}}},
                  {"spec", {{"taints", obj["spec"].contains("taints") ? obj["spec"]["taints"] : json(nullptr)}}}};
    auto res = client_->patch(path, kube::PatchKind::kMerge, patch);
    json fields = {{"node", node}, {"policy", policy}};
    if (!res) {
      TaintResult r = failed(res.error());
      fields["result"] = outcome_name(r.outcome);
      fields["error"] = r.message;
      log_.warn("node taint update failed", fields);
      return r;
    }
    log_.info(what, fields);
    return {Outcome::kApplied, "", ""};
  }

  std::shared_ptr<kube::Client> client_;
  common::Logger log_;
};

}  // namespace

std::shared_ptr<Tainter> client_tainter(std::shared_ptr<kube::Client> client, common::Logger log) {
  return std::make_shared<ClientTainter>(std::move(client), std::move(log));
}

}  // namespace kubex::act
