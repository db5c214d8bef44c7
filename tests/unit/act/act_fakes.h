// Fakes of act/'s named interfaces for controller tests (DESIGN §3: the controllers are tested whole, with
// the writes recorded instead of sent).
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "act/evictor.h"
#include "act/tainter.h"

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

// A Tainter over an in-memory map node -> consolidation taint value, recording every call. `conflicts` makes
// that many next calls answer kConflict without writing (a resourceVersion that moved, CON-7).
class FakeTainter final : public Tainter {
 public:
  struct Call {
    std::string op, node, policy;  // op: "add" | "remove"
  };

  TaintResult add(const std::string& node, const std::string& policy) override {
    std::lock_guard lk(mu_);
    calls_.push_back({"add", node, policy});
    if (conflicts > 0) {
      --conflicts;
      return {TaintResult::Outcome::kConflict, "", "Operation cannot be fulfilled: the object has been modified"};
    }
    auto it = taints_.find(node);
    if (it != taints_.end()) {
      return {it->second == policy ? TaintResult::Outcome::kUnchanged : TaintResult::Outcome::kHeld, it->second, ""};
    }
    taints_[node] = policy;
    return {TaintResult::Outcome::kApplied, "", ""};
  }
  TaintResult remove(const std::string& node, const std::string& policy) override {
    std::lock_guard lk(mu_);
    calls_.push_back({"remove", node, policy});
    if (conflicts > 0) {
      --conflicts;
      return {TaintResult::Outcome::kConflict, "", "Operation cannot be fulfilled: the object has been modified"};
    }
    auto it = taints_.find(node);
    if (it == taints_.end() || it->second != policy) return {TaintResult::Outcome::kUnchanged, "", ""};
    taints_.erase(it);
    return {TaintResult::Outcome::kApplied, "", ""};
  }

  // node -> policy of its consolidation taint.
  std::map<std::string, std::string> taints() const {
    std::lock_guard lk(mu_);
    return taints_;
  }
  void set(const std::string& node, const std::string& policy) {
    std::lock_guard lk(mu_);
    taints_[node] = policy;
  }
  std::vector<Call> calls() const {
    std::lock_guard lk(mu_);
    return calls_;
  }
  int adds() const {
    std::lock_guard lk(mu_);
    int n = 0;
    for (const auto& c : calls_) n += c.op == "add";
    return n;
  }

  int conflicts = 0;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> taints_;
  std::vector<Call> calls_;
};

}  // namespace kubex::act::test
