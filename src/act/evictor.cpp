#include "act/evictor.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <nlohmann/json.hpp>

#include "kube/client/client.h"
#include "kube/runtime/metrics.h"

namespace kubex::act {

using nlohmann::json;
using Outcome = EvictionResult::Outcome;

const char* reason_label(EvictionReason reason) {
  switch (reason) {
    case EvictionReason::kResize: return "resize";
    case EvictionReason::kRollback: return "rollback";
    case EvictionReason::kConsolidation: return "consolidation";
  }
  return "resize";
}

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kEvicted: return "evicted";
    case Outcome::kGone: return "gone";
    case Outcome::kPdbBlocked: return "pdb_blocked";
    case Outcome::kError: return "error";
    case Outcome::kDryRun: return "dry_run";
  }
  return "error";
}

namespace {

// The policy/v1 Eviction of `pod`, with its uid as the delete precondition.
std::string eviction_body(const PodRef& pod) {
  json body = {{"apiVersion", "policy/v1"},
               {"kind", "Eviction"},
               {"metadata", {{"name", pod.name}, {"namespace", pod.ns}}}};
  if (!pod.uid.empty()) body["deleteOptions"] = {{"preconditions", {{"uid", pod.uid}}}};
  return body.dump();
}

// The answer to an eviction POST, classified (SPEC §1.8). A 2xx whose body is a Status with status Failure
// is classified by that Status's code: kube-apiserver answers "more than one PodDisruptionBudget" that way.
EvictionResult classify(int http_code, const std::string& body) {
  EvictionResult r;
  r.http_code = http_code;
  json j = json::parse(body, nullptr, false);
  bool status = j.is_object() && j.value("kind", "") == "Status";
  std::string message;
  bool throttled = false;  // a 429 that says when to come back and names no budget: the API server's throttling
  if (status) {
    if (j.contains("details") && j["details"].is_object()) {
      const json& ra = j["details"].value("retryAfterSeconds", json());
      throttled = ra.is_number_integer() && ra.get<int>() > 0;
    }
    if (j.contains("message") && j["message"].is_string()) message = j["message"].get<std::string>();
    if (http_code >= 200 && http_code < 300 && j.value("status", "") == "Failure") {
      int inner = j.contains("code") && j["code"].is_number_integer() ? j["code"].get<int>() : 0;
      r.http_code = inner >= 300 ? inner : 500;
    }
    const json* causes = j.contains("details") && j["details"].is_object() && j["details"].contains("causes")
                             ? &j["details"]["causes"]
                             : nullptr;
    if (causes && causes->is_array()) {
      for (const auto& c : *causes) {
        if (c.is_object() && c.value("reason", "") == "DisruptionBudget" && c.contains("message") &&
            c["message"].is_string()) {
          r.cause = c["message"].get<std::string>();
          break;
        }
      }
    }
  } else if (http_code >= 300) {
    message = body.substr(0, 500);
  }
  const int code = r.http_code;
  if (code >= 200 && code < 300) {
    r.outcome = Outcome::kEvicted;
    return r;
  }
  r.message = message.empty() ? "HTTP " + std::to_string(code) : message;
  if (code == 404) {
    r.outcome = Outcome::kGone;
  } else if (code == 409 && message.find("UID in precondition") != std::string::npos) {
    // The pod of that name is another one (kube-apiserver's and kubex-sim's wording): ours is gone.
    r.outcome = Outcome::kGone;
  } else if (code == 429 && (!throttled || !r.cause.empty())) {
    r.outcome = Outcome::kPdbBlocked;
  } else {
    r.outcome = Outcome::kError;
  }
  return r;
}

class ClientEvictor final : public Evictor {
 public:
  ClientEvictor(std::shared_ptr<kube::Client> client, kube::Metrics* metrics, bool dry_run,
                common::Logger log)
      : client_(std::move(client)), dry_run_(dry_run), log_(std::move(log)) {
    if (metrics) {
      family_ = &metrics->counter_family(
          "kubex_evictions_total",
          "Pod evictions requested through the Eviction API, by reason (resize, rollback, consolidation) and "
          "result (success: evicted or already gone; pdb_blocked: refused by a PodDisruptionBudget; error).");
    }
  }

  EvictionResult evict(const PodRef& pod, EvictionReason reason) override {
    json fields = {
        {"namespace", pod.ns}, {"pod", pod.name}, {"uid", pod.uid}, {"reason", reason_label(reason)}};
    if (dry_run_) {
      log_.info("dry run: would evict pod", fields);
      EvictionResult r;
      r.outcome = Outcome::kDryRun;
      return r;
    }
    std::string path = kube::resource_path("", "v1", "pods", pod.ns, pod.name, "eviction");
    auto raw = client_->request("POST", path, eviction_body(pod));
    EvictionResult r;
    if (!raw) {
      r.outcome = Outcome::kError;
      r.http_code = raw.error().code;
      r.message = raw.error().message;
    } else {
      r = classify(raw->code, raw->body);
    }
    count(reason, r.outcome);
    fields["result"] = outcome_name(r.outcome);
    if (r.http_code != 0) fields["code"] = r.http_code;
    if (!r.message.empty()) fields["message"] = r.message;
    if (!r.cause.empty()) fields["cause"] = r.cause;
    switch (r.outcome) {
      case Outcome::kEvicted: log_.info("evicted pod", fields); break;
      case Outcome::kGone: log_.info("pod to evict is already gone", fields); break;
      case Outcome::kPdbBlocked: log_.info("eviction refused by a PodDisruptionBudget", fields); break;
      default: log_.warn("eviction failed", fields); break;
    }
    return r;
  }

 private:
  void count(EvictionReason reason, Outcome outcome) {
    if (!family_) return;
    const char* result = outcome == Outcome::kPdbBlocked ? "pdb_blocked"
                         : (outcome == Outcome::kEvicted || outcome == Outcome::kGone) ? "success"
                                                                                         : "error";
    family_->Add({{"reason", reason_label(reason)}, {"result", result}}).Increment();
  }

  std::shared_ptr<kube::Client> client_;
  bool dry_run_;
  common::Logger log_;
  prometheus::Family<prometheus::Counter>* family_ = nullptr;
};

}  // namespace

std::shared_ptr<Evictor> client_evictor(std::shared_ptr<kube::Client> client, kube::Metrics* metrics,
                                        bool dry_run, common::Logger log) {
  return std::make_shared<ClientEvictor>(std::move(client), metrics, dry_run, std::move(log));
}

}  // namespace kubex::act
