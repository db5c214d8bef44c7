// Fakes of act/'s named interfaces for controller tests (DESIGN §3: the controllers are tested whole, with
// the writes recorded instead of sent).
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "act/evictor.h"

namespace kubex::act::test {

// An Evictor with scripted answers per pod ("ns/name"), recording every call. A pod's script is consumed in
// order and its last answer repeats; a pod without a script gets `fallback` (kEvicted unless changed). With
// `dry_run` every call answers kDryRun, as client_evictor does under --dry-run (ACT-8).
class FakeEvictor final : public Evictor {
 public:
  struct Call {
    PodRef pod;
    EvictionReason reason;
  };

  static EvictionResult evicted() { return {EvictionResult::Outcome::kEvicted, "", "", 201}; }
  static EvictionResult gone() {
    return {EvictionResult::Outcome::kGone, "pods \"x\" not found", "", 404};
  }
  static EvictionResult pdb_blocked(
      std::string cause = "The disruption budget pdb needs 3 healthy pods and has 3 currently") {
    return {EvictionResult::Outcome::kPdbBlocked,
            "Cannot evict pod as it would violate the pod's disruption budget.", std::move(cause), 429};
  }
  static EvictionResult error(int code = 500, std::string message = "Internal error") {
    return {EvictionResult::Outcome::kError, std::move(message), "", code};
  }

  // Answers for `ns`/`name`, in order (the last repeats).
  void script(const std::string& ns, const std::string& name, std::vector<EvictionResult> answers) {
    std::lock_guard lk(mu_);
    scripts_[ns + "/" + name] = std::deque<EvictionResult>(answers.begin(), answers.end());
  }

  EvictionResult evict(const PodRef& pod, EvictionReason reason) override {
    std::lock_guard lk(mu_);
    calls_.push_back({pod, reason});
    if (dry_run) return {EvictionResult::Outcome::kDryRun, "", "", 0};
    auto it = scripts_.find(pod.ns + "/" + pod.name);
    if (it == scripts_.end() || it->second.empty()) return fallback;
    EvictionResult r = it->second.front();
    if (it->second.size() > 1) it->second.pop_front();
    return r;
  }

  std::vector<Call> calls() const {
    std::lock_guard lk(mu_);
    return calls_;
  }
  // "ns/name" of every call, in order.
  std::vector<std::string> called_keys() const {
    std::lock_guard lk(mu_);
    std::vector<std::string> out;
    for (const auto& c : calls_) out.push_back(c.pod.ns + "/" + c.pod.name);
    return out;
  }
  void clear_calls() {
    std::lock_guard lk(mu_);
    calls_.clear();
  }

  EvictionResult fallback = evicted();
  bool dry_run = false;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::deque<EvictionResult>> scripts_;
  std::vector<Call> calls_;
};

}  // namespace kubex::act::test
