#include "decide/admission/pod_mutation.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "api/keys.h"
#include "common/json_diff.h"
#include "decide/actuation/harm_guard.h"
#include "decide/admission/exits.h"
#include "decide/admission/gpu_plan.h"
#include "decide/admission/pause.h"
#include "decide/admission/resource_plan.h"
#include "decide/admission/rightsizing_info.h"
#include "decide/admission/vllm_args.h"
#include "decide/desired_annotations.h"
#include "decide/policy/match.h"
#include "decide/policy/static_owner.h"

namespace kubex::decide {

namespace {

using nlohmann::json;
namespace keys = api::keys;

bool is_object_or_absent(const json& parent, const char* key) {
  auto it = parent.find(key);
  return it == parent.end() || it->is_object() || it->is_null();
}

bool is_string_list_or_absent(const json& parent, const char* key) {
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return true;
  if (!it->is_array()) return false;
  for (const auto& e : *it) {
    if (!e.is_string()) return false;
  }
  return true;
}

bool container_well_formed(const json& c) {
  if (!c.is_object()) return false;
  if (!is_object_or_absent(c, "resources")) return false;
  if (auto r = c.find("resources"); r != c.end() && r->is_object()) {
    if (!is_object_or_absent(*r, "requests") || !is_object_or_absent(*r, "limits")) return false;
  }
  return is_string_list_or_absent(c, "command") && is_string_list_or_absent(c, "args");
}

// The shape every write below relies on; anything else is left alone (and never throws).
bool well_formed(const json& pod) {
  if (!pod.is_object() || !is_object_or_absent(pod, "metadata")) return false;
  if (auto m = pod.find("metadata"); m != pod.end() && m->is_object()) {
    if (!is_object_or_absent(*m, "annotations") || !is_object_or_absent(*m, "labels")) return false;
  }
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return false;
  for (const char* list : {"containers", "initContainers"}) {
    auto l = spec->find(list);
    if (l == spec->end() || l->is_null()) continue;
    if (!l->is_array()) return false;
    for (const auto& c : *l) {
      if (!container_well_formed(c)) return false;
    }
  }
  return true;
}

std::map<std::string, std::string> string_map(const json& pod, const char* field) {
  std::map<std::string, std::string> out;
  auto m = pod.find("metadata");
  if (m == pod.end() || !m->is_object()) return out;
  auto a = m->find(field);
  if (a == m->end() || !a->is_object()) return out;
  for (auto it = a->begin(); it != a->end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

json& metadata_map(json& pod, const char* field) {
  json& meta = pod["metadata"];
  if (!meta.is_object()) meta = json::object();
  json& m = meta[field];
  if (!m.is_object()) m = json::object();
  return m;
}

void erase_metadata_key(json& pod, const char* field, const std::string& key) {
  auto m = pod.find("metadata");
  if (m == pod.end() || !m->is_object()) return;
  auto a = m->find(field);
  if (a == m->end() || !a->is_object()) return;
  a->erase(key);
}

// Drops metadata maps this decision created and left empty, so the patch has no empty `add`.
void drop_created_empty_maps(json& pod, const json& original) {
  auto m = pod.find("metadata");
  if (m == pod.end() || !m->is_object()) return;
  const auto om = original.find("metadata");
  for (const char* field : {"annotations", "labels"}) {
    auto a = m->find(field);
    if (a == m->end() || !a->is_object() || !a->empty()) continue;
    const bool was_there = om != original.end() && om->is_object() && om->contains(field);
    if (!was_there) m->erase(field);
  }
  if (m->empty() && !original.contains("metadata")) pod.erase("metadata");
}

json& container_json(json& pod, const ContainerResources& c) {
  return pod["spec"][c.init ? "initContainers" : "containers"][c.index];
}

json& resource_list(json& container, const char* list) {
  json& res = container["resources"];
  if (!res.is_object()) res = json::object();
  json& l = res[list];
  if (!l.is_object()) l = json::object();
  return l;
}

void erase_gpu(json& container) {
  auto res = container.find("resources");
  if (res == container.end() || !res->is_object()) return;
  for (const char* list : {"requests", "limits"}) {
    auto l = res->find(list);
    if (l == res->end() || !l->is_object()) continue;
    l->erase(keys::kGpuResource);
    if (l->empty()) res->erase(list);
  }
}

void set_whole_gpu(json& container, std::int64_t n) {
  const std::string v = std::to_string(n);
  resource_list(container, "requests")[keys::kGpuResource] = v;
  resource_list(container, "limits")[keys::kGpuResource] = v;
}

std::vector<std::string> string_list(const json& container, const char* key) {
  std::vector<std::string> out;
  auto it = container.find(key);
  if (it == container.end() || !it->is_array()) return out;
  for (const auto& e : *it) out.push_back(e.get<std::string>());
  return out;
}

void write_string_list(json& container, const char* key, const std::vector<std::string>& values) {
  if (values.empty() && !container.contains(key)) return;
  container[key] = values;
}

std::string pod_name(const json& pod) {
  auto m = pod.find("metadata");
  if (m == pod.end() || !m->is_object()) return "";
  if (auto n = m->find("name");
      n != m->end() && n->is_string() && !n->get_ref<const std::string&>().empty()) {
    return n->get<std::string>();
  }
  if (auto g = m->find("generateName"); g != m->end() && g->is_string()) return g->get<std::string>();
  return "";
}

bool is_bookkeeping(const std::string& annotation) {
  return annotation == keys::kAutomationConstraints || annotation == keys::kPodRightsizingInfo ||
         is_desired_key(annotation);
}

// Annotations equal but for kubex's own bookkeeping ones.
bool annotations_equal_except_bookkeeping(const json* a, const json* b) {
  auto count = [](const json* m) {
    std::size_t n = 0;
    if (m && m->is_object()) {
      for (auto it = m->begin(); it != m->end(); ++it) n += is_bookkeeping(it.key()) ? 0 : 1;
    }
    return n;
  };
  if (count(a) != count(b)) return false;
  if (!a || !a->is_object()) return true;  // both have no other annotation
  for (auto it = a->begin(); it != a->end(); ++it) {
    if (is_bookkeeping(it.key())) continue;
    auto o = b->find(it.key());
    if (o == b->end() || *o != it.value()) return false;
  }
  return true;
}

const json* member_of(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// Whether two pods differ in more than kubex's bookkeeping annotations (automation-constraints, the mirrored
// desired-resource-*, pod-rightsizing-info): what tells MUTATED from UNCHANGED. Compares in place, no copies.
bool differs_beyond_bookkeeping(const json& a, const json& b) {
  if (!a.is_object() || !b.is_object()) return a != b;
  if (a.size() != b.size()) return true;
  for (auto it = a.begin(); it != a.end(); ++it) {
    auto o = b.find(it.key());
    if (o == b.end()) return true;
    if (it.key() != "metadata") {
      if (*o != it.value()) return true;
      continue;
    }
    const json& ma = it.value();
    const json& mb = *o;
    if (!ma.is_object() || !mb.is_object()) {
      if (ma != mb) return true;
      continue;
    }
    // metadata: everything but annotations compares as is; an annotations map that holds only bookkeeping
    // counts as absent.
    for (auto m = ma.begin(); m != ma.end(); ++m) {
      if (m.key() == "annotations") continue;
      auto n = mb.find(m.key());
      if (n == mb.end() || *n != m.value()) return true;
    }
    for (auto n = mb.begin(); n != mb.end(); ++n) {
      if (n.key() != "annotations" && !ma.contains(n.key())) return true;
    }
    if (!annotations_equal_except_bookkeeping(member_of(ma, "annotations"), member_of(mb, "annotations"))) {
      return true;
    }
  }
  return false;
}

class Decider {
 public:
  explicit Decider(const AdmissionInput& in) : in_(in) {}

  AdmissionDecision run();

 private:
  AdmissionDecision finish(AdmissionResult result);
  AdmissionDecision skip(const char* check) {
    out_.summary.failed_checks.push_back(check);
    return finish(AdmissionResult::kSkipped);
  }
  void apply_kai_extras(const api::StrategySpec& strategy);
  void apply_vllm(const api::StrategySpec& strategy, const GpuPlan& gpu, const PodResources& resources,
                  std::string_view sharing_mode);
  void mirror(const policy::Match& match, const policy::Desired& desired,
              const std::vector<policy::TargetContainer>& targets);
  // ACT-10: the harm-guard floors the owner's actuation-state holds for the pod's containers.
  std::map<std::string, Hundredths> harm_floors(const PodResources& resources) const {
    std::map<std::string, Hundredths> out;
    if (!in_.workload) return out;
    auto it = in_.workload->annotations.find(keys::kActuationState);
    if (it == in_.workload->annotations.end()) return out;
    for (const auto& c : resources.targets) {
      if (auto f = actuation::floor_of(it->second, c.name, in_.now)) out.emplace(c.name, *f);
    }
    return out;
  }

  const AdmissionInput& in_;
  const api::GlobalConfigSpec kDefaultGlobal_{};
  const api::PolicyEvaluation kDefaultEvaluation_{};
  const api::GlobalConfigSpec& global() const { return in_.global ? *in_.global : kDefaultGlobal_; }
  const json* original_ = nullptr;  // the input pod (the caller's; it outlives the decision)
  json pod_;
  AdmissionDecision out_;
};

AdmissionDecision Decider::finish(AdmissionResult result) {
  out_.result = result;
  out_.summary.result = result;
  out_.summary.applied_filters = out_.constraints.reasons();
  out_.summary.text = summary_text(out_.summary.changes, out_.summary.edits);
  static const json kNoPod;
  const json& original = original_ ? *original_ : kNoPod;
  if (pod_.is_object()) drop_created_empty_maps(pod_, original);
  out_.patch = std::make_shared<const json>(common::json_diff(original, pod_));
  if (well_formed(pod_)) out_.allocation = gpu_allocation(read_pod_resources(pod_));
  out_.pod = std::make_shared<const json>(std::move(pod_));
  return std::move(out_);
}

// Records an edit when it writes a value the pod did not have (OBS-4 changes[], ADM-16).
void record_edit(std::vector<Edit>& edits, EditTarget target, std::string container,
                 std::optional<std::string> from, const std::string& to) {
  if (from == to) return;
  edits.push_back({target, std::move(container), std::move(from), to});
}

std::optional<std::string> optional_string(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

void Decider::apply_kai_extras(const api::StrategySpec& strategy) {
  record_edit(out_.summary.edits, EditTarget::kScheduler, "", optional_string(pod_["spec"], "schedulerName"),
              global().kai_scheduler_name);
  pod_["spec"]["schedulerName"] = global().kai_scheduler_name;
  const auto pod_labels = string_map(pod_, "labels");
  const auto label = pod_labels.find(keys::kKaiQueueLabel);
  const bool pod_has_queue = label != pod_labels.end();
  const bool owner_has_queue = in_.workload->labels.count(keys::kKaiQueueLabel) > 0;
  const bool write =
      (!pod_has_queue && !owner_has_queue) || (pod_has_queue && strategy.set_queue_when_specified);
  if (write) {
    record_edit(out_.summary.edits, EditTarget::kQueue, "",
                pod_has_queue ? std::optional<std::string>(label->second) : std::nullopt, strategy.kai_queue);
    metadata_map(pod_, "labels")[keys::kKaiQueueLabel] = strategy.kai_queue;
  } else if (!pod_has_queue && strategy.set_queue_when_specified) {
    out_.constraints.add_pod(reason::kQueueOverriddenByOwner);
  }
}

void Decider::apply_vllm(const api::StrategySpec& strategy, const GpuPlan& gpu, const PodResources& resources,
                         std::string_view sharing_mode) {
  if (!strategy.has_vllm || !gpu.kai_mutated || !gpu.gpu_container) return;
  if (sharing_mode == api::kSharingDisabled) return;  // VLM-3: no fraction is ever written, no vLLM edit
  const ContainerResources& c = resources.targets[*gpu.gpu_container];
  json& cj = container_json(pod_, c);
  const std::vector<std::string> command = string_list(cj, "command"), args = string_list(cj, "args");
  const auto image_it = cj.find("image");
  const std::string image = image_it != cj.end() && image_it->is_string() ? image_it->get<std::string>() : "";
  if (!is_vllm_container(image, command, args, in_.workload->model_engine)) return;
  const std::optional<Hundredths> fraction =
      gpu.action == GpuAction::kSetWhole ? std::nullopt : std::optional<Hundredths>(gpu.fraction);
  const Hundredths value =
      vllm_memory_utilization(sharing_mode, strategy.vllm_buffer_percent, fraction);
  const VllmRewrite rw = rewrite_vllm_args(command, args, format_gpu(value));
  if (rw.not_rewritable) {
    out_.constraints.add(reason::kVllmArgsNotRewritable, {c.name, "", "", ""});
    return;
  }
  if (!rw.changed) return;
  out_.summary.edits.push_back(
      {EditTarget::kVllmGpuMemoryUtilization, c.name, rw.previous, format_gpu(value)});
  write_string_list(cj, "command", rw.command);
  write_string_list(cj, "args", rw.args);
}

void Decider::mirror(const policy::Match& match, const policy::Desired& desired,
                     const std::vector<policy::TargetContainer>& targets) {
  std::set<std::size_t> contributing;
  for (const auto& c : desired.containers) {
    for (const auto& slot : c.slots) {
      if (slot) contributing.insert(slot->policy);
    }
  }
  std::map<std::string, std::string> mirrored;
  const auto static_values = static_annotation_values(match, targets);
  for (std::size_t p : contributing) {
    const api::Kind kind = match.policies[p].policy->kind;
    if (api::is_static(kind)) {
      for (const std::string& key : {desired_requests_key(kind), desired_limits_key(kind)}) {
        if (auto it = static_values.find(key); it != static_values.end()) mirrored[key] = it->second;
      }
    } else {
      for (const std::string& key : {desired_requests_key(kind), desired_limits_key(kind)}) {
        if (auto it = in_.workload->annotations.find(key); it != in_.workload->annotations.end()) {
          mirrored[key] = it->second;
        }
      }
    }
  }
  json& annotations = metadata_map(pod_, "annotations");
  for (auto it = annotations.begin(); it != annotations.end();) {
    if (is_desired_key(it.key()) && !mirrored.count(it.key())) {
      it = annotations.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& [key, value] : mirrored) annotations[key] = value;
}

AdmissionDecision Decider::run() {
  out_.summary.phase = in_.phase;
  out_.summary.pass = pass_name(in_.pass);
  out_.summary.ns = in_.ns;
  out_.summary.dry_run = in_.dry_run;
  if (in_.workload != nullptr) out_.summary.owner = in_.workload->ref();
  if (in_.pod == nullptr) return skip("malformed-pod");
  original_ = in_.pod;
  pod_ = *original_;
  out_.summary.pod = pod_name(*original_);
  if (!well_formed(*original_)) return skip("malformed-pod");

  const auto pod_annotations = string_map(*original_, "annotations");
  const api::GlobalConfigSpec& global = this->global();
  // ADM-3 (3)-(5): the same function told the webhook whether to read the owner at all.
  if (const EarlyExit exit = early_exit(*original_, in_.ns, global); exit != EarlyExit::kNone) {
    if (exit == EarlyExit::kProbePod) {  // (3) a probe pod only gets the WHH-2 marker
      metadata_map(pod_, "annotations")[in_.pass == Pass::kEarly ? keys::kProbeEarly : keys::kProbeLate] =
          "ok";
    }
    return skip(exit_check(exit));
  }
  if (in_.owner_unknown) return skip("unknown-owner");  // (6)
  if (in_.workload == nullptr) return skip("no-workload");

  const policy::Workload& workload = *in_.workload;
  const api::PolicyEvaluation& evaluation = in_.evaluation ? *in_.evaluation : kDefaultEvaluation_;
  const policy::Match match =
      policy::match_policies(workload, in_.candidates, evaluation, global.protected_namespace_patterns);
  out_.stale_owner_annotations = match.stale_annotations;
  if (!match.managed) return skip(match.on_hold ? "policies-on-hold" : "not-managed");  // (7), RBK-4
  out_.strategy_conflict = match.strategy_conflict;

  const PodResources resources = read_pod_resources(*original_);
  const std::vector<policy::TargetContainer> targets = resources.target_containers();
  const policy::Desired desired = policy::collect_desired(match, workload, targets);
  out_.ignored_sources = desired.ignored_sources;
  for (const auto& c : desired.containers) {
    for (Slot slot : kAllSlots) {
      const auto& v = c.at(slot);
      if (!v) continue;
      std::string& refs = out_.summary.policies[slot_name(slot)];
      const std::string& ref = match.policies[v->policy].ref;
      if (refs.empty()) {
        refs = ref;
      } else if (("," + refs + ",").find("," + ref + ",") == std::string::npos) {
        refs += "," + ref;
      }
    }
  }
  const policy::MatchedPolicy& governing = *desired.governing_policy(match);
  const api::StrategySpec& strategy = governing.strategy->spec;
  out_.summary.strategy = governing.strategy_ref;
  out_.summary.mode = strategy.kai_mode() ? "kai" : "vanilla";

  // ADM-4.
  if (strategy.safety.enable_pause_until_annotation_check) {
    const PauseSources sources{&pod_annotations, &workload.annotations, &workload.template_annotations,
                               &in_.namespace_annotations};
    if (paused_by(sources, in_.now)) {
      out_.constraints.add_pod(reason::kPauseActive);
      metadata_map(pod_, "annotations")[keys::kAutomationConstraints] = out_.constraints.to_json();
      return skip(reason::kPauseActive);
    }
  }

  if (match.strategy_conflict) out_.constraints.add_pod(reason::kStrategyConflict);  // SEL-10

  // ADM-10.
  const ResourcePlan cpu_memory = plan_cpu_memory(resources, desired, match, strategy);
  out_.constraints.merge(cpu_memory.reasons);
  for (const QuantityUpdate& u : cpu_memory.updates) {
    json& cj = container_json(pod_, resources.targets[u.container]);
    resource_list(
        cj, usage_of(u.slot) == Usage::kLimit ? "limits" : "requests")[resource_name(resource_of(u.slot))] =
        u.value.canonical();
  }

  // ADM-5..9, 11, 12.
  const std::string_view sharing_mode = api::gpu_sharing_mode(global);
  if (strategy.kai_mode()) out_.summary.kai_mode = api::canonical_sharing_mode(sharing_mode);
  const GpuPlan gpu = plan_gpu(resources, desired, match, strategy, sharing_mode, harm_floors(resources));
  out_.constraints.merge(gpu.reasons);
  switch (gpu.action) {
    case GpuAction::kSetFraction: {
      const ContainerResources& c = resources.targets[*gpu.gpu_container];
      json& annotations = metadata_map(pod_, "annotations");
      annotations[keys::kGpuFraction] = format_gpu(gpu.fraction);
      for (const char* list : {"containers", "initContainers"}) {
        auto l = pod_["spec"].find(list);
        if (l == pod_["spec"].end() || !l->is_array()) continue;
        for (auto& cj : *l) erase_gpu(cj);
      }
      // ADM-12.
      if (c.init || c.index != 0) {
        annotations[keys::kGpuFractionContainerName] = c.name;
      } else if (auto it = annotations.find(keys::kGpuFractionContainerName);
                 it != annotations.end() && *it != c.name) {
        annotations.erase(it);
      }
      break;
    }
    case GpuAction::kSetWhole:
      set_whole_gpu(container_json(pod_, resources.targets[*gpu.gpu_container]), gpu.whole);
      erase_metadata_key(pod_, "annotations", keys::kGpuFraction);
      erase_metadata_key(pod_, "annotations", keys::kGpuFractionContainerName);
      break;
    case GpuAction::kVanillaWhole:
      for (const auto& [i, n] : gpu.vanilla) set_whole_gpu(container_json(pod_, resources.targets[i]), n);
      break;
    case GpuAction::kKeepFraction:
    case GpuAction::kUntouched:
      break;
  }
  switch (gpu.limit_action) {  // KAI-2
    case LimitAction::kSet:
      metadata_map(pod_, "annotations")[keys::kGpuFractionLimit] = format_gpu(gpu.limit);
      break;
    case LimitAction::kRemove:
      erase_metadata_key(pod_, "annotations", keys::kGpuFractionLimit);
      break;
    case LimitAction::kLeave:
      break;
  }
  if (gpu.kai_mutated) {
    apply_kai_extras(strategy);                          // ADM-13
    apply_vllm(strategy, gpu, resources, sharing_mode);  // VLM-2
  }

  out_.summary.changes = cpu_memory.changes;
  out_.summary.changes.insert(out_.summary.changes.end(), gpu.changes.begin(), gpu.changes.end());
  std::stable_sort(out_.summary.changes.begin(), out_.summary.changes.end(),
                   [&](const Change& a, const Change& b) {
                     return resources.find(a.container).value_or(0) < resources.find(b.container).value_or(0);
                   });

  // ADM-14: the constraints annotation belongs to admission: written when a reason exists, else removed.
  if (!out_.constraints.empty()) {
    metadata_map(pod_, "annotations")[keys::kAutomationConstraints] = out_.constraints.to_json();
  } else {
    erase_metadata_key(pod_, "annotations", keys::kAutomationConstraints);
  }
  if (pod_ != *original_) {
    mirror(match, desired, targets);
    if (!out_.summary.changes.empty() || !out_.summary.edits.empty()) {  // ADM-16
      json& annotations = metadata_map(pod_, "annotations");
      const std::string existing = pod_annotations.count(keys::kPodRightsizingInfo)
                                       ? pod_annotations.at(keys::kPodRightsizingInfo)
                                       : std::string();
      annotations[keys::kPodRightsizingInfo] =
          rightsizing_info_json(out_.summary.mode, out_.summary.strategy, out_.summary.changes,
                                out_.summary.edits, existing);
    }
  }
  return finish(differs_beyond_bookkeeping(pod_, *original_) ? AdmissionResult::kMutated
                                                              : AdmissionResult::kUnchanged);
}

}  // namespace

const char* pass_name(Pass p) {
  return p == Pass::kEarly ? "early" : "late";
}

bool AdmissionDecision::patched() const {
  return patch && patch->is_array() && !patch->empty();
}

AdmissionDecision decide_admission(const AdmissionInput& in) {
  try {
    return Decider(in).run();
  } catch (const std::exception& e) {
    // Errors are values: an unexpected shape fails open with no patch.
    AdmissionDecision out;
    out.summary.phase = in.phase;
    out.summary.pass = pass_name(in.pass);
    out.summary.ns = in.ns;
    out.summary.failed_checks.push_back(std::string("internal-error: ") + e.what());
    out.summary.text = summary_text({});
    out.patch = std::make_shared<const json>(json::array());
    out.pod = std::make_shared<const json>(in.pod ? *in.pod : json());
    return out;
  }
}

}  // namespace kubex::decide
