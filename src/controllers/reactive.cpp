#include "controllers/reactive.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <algorithm>

#include "act/owner_annotations.h"
#include "act/status_writer.h"
#include "api/kinds.h"
#include "common/time_format.h"
#include "controllers/status_support.h"
#include "decide/admission/summary.h"
#include "decide/admission/fraction_limit.h"
#include "decide/desired_annotations.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "decide/reactive/per_pod.h"
#include "decide/reactive/reactive.h"
#include "decide/status/policy_status.h"
#include "kube/runtime/metrics.h"
#include "observe/catalog_view.h"
#include "observe/workloads.h"
#include "prom/client.h"

namespace kubex::controllers {

namespace {

class ClientConnector final : public PrometheusConnector {
 public:
  common::Result<std::shared_ptr<prom::Querier>> connect(const prom::Options& o) override {
    std::lock_guard lk(mu_);
    if (client_ && same(client_->options(), o)) return client_;
    auto c = prom::connect(o);
    if (!c) return std::unexpected(c.error());
    client_ = std::shared_ptr<prom::Querier>(std::move(*c));
    return client_;
  }

 private:
  static bool same(const prom::Options& a, const prom::Options& b) {
    return a.url == b.url && a.timeout == b.timeout && a.bearer_token_file == b.bearer_token_file &&
           a.ca_file == b.ca_file;
  }
  std::mutex mu_;
  std::shared_ptr<prom::Querier> client_;
};

kube::ControllerOptions controller_options(const ReactiveOptions& o) {
  kube::ControllerOptions c;
  c.metrics = o.metrics;
  c.clock = o.clock;
  return c;
}

const common::Clock& clock_of(const ReactiveOptions& o) {
  return o.clock ? *o.clock : common::RealClock::instance();
}

bool is_reactive_key(std::string_view k) {
  for (api::Kind kind : {api::Kind::kGpuReactivePolicy, api::Kind::kClusterGpuReactivePolicy}) {
    if (k == decide::desired_requests_key(kind) || k == decide::desired_limits_key(kind) ||
        k == decide::reactive_state_key(kind)) {
      return true;
    }
  }
  return false;
}

const decide::policy::LinkedPolicy* find_policy(const decide::policy::Catalog& catalog, const ObjectId& id) {
  for (const auto& lp : catalog.policies()) {
    const api::Policy& p = *lp.input.policy;
    if (p.kind == id.kind && p.meta.ns == id.ns && p.meta.name == id.name) return &lp;
  }
  return nullptr;
}

std::string annotation_or_empty(const api::WorkloadView& w, const std::string& key) {
  const common::IStr* v = w.annotation(key);
  return v ? v->str() : std::string();
}

// OBS-4 for one workload of a cycle.
decide::Summary summary_of(const api::WorkloadView& w, const decide::policy::MatchedPolicy& winner,
                           const decide::reactive::Outcome& out, const decide::reactive::Input& in, bool dry_run) {
  // `from`: the previous recommendation, else the selected pod's current allocation.
  std::map<std::string, std::string> before;
  for (const auto& [c, v] : in.existing) before[c] = decide::format_gpu(v);
  for (const auto& p : in.pods) {
    if (p.name != out.selected_pod) continue;
    for (const auto& c : p.containers) before.emplace(c.name, decide::format_gpu(c.allocation));
  }
  decide::Summary s;
  s.phase = "reactive";
  s.ns = w.ns.str();
  s.pod = out.selected_pod;
  s.owner = w.kind.str() + "/" + w.name;
  s.policies["requests.gpu"] = winner.ref;
  s.strategy = winner.strategy_ref;
  if (winner.strategy) s.mode = winner.strategy->spec.kai_mode() ? "kai" : "vanilla";
  s.result_text = decide::reactive::result_name(out.result);
  s.applied_filters = out.applied_filters;
  s.dry_run = dry_run;
  if (out.result == decide::reactive::Result::kRecommended) {
    std::map<std::string, std::string> after;
    for (const auto& [c, v] : out.requests) after[c] = decide::format_gpu(v);
    s.changes = decide::recommendation_changes(before, after, winner.ref);
  }
  if (out.limits_changed) {  // REA-12: the recorded peak, as the summary's gpu-limit
    std::map<std::string, std::string> limits_before, limits_after;
    for (const auto& [c, v] : in.existing_limits) limits_before[c] = decide::format_gpu(v);
    for (const auto& [c, v] : out.limits) limits_after[c] = decide::format_gpu(v);
    for (decide::Change ch : decide::recommendation_changes(limits_before, limits_after, winner.ref)) {
      ch.usage = decide::Usage::kLimit;
      s.changes.push_back(std::move(ch));
    }
    s.policies["limits.gpu"] = winner.ref;
  }
  s.text = decide::summary_text(s.changes);
  return s;
}

std::vector<decide::reactive::PodRef> refs_of(const std::vector<observe::WorkloadPods>& pods) {
  std::vector<decide::reactive::PodRef> refs;
  for (const auto& w : pods) {
    for (const auto& p : w.pods) refs.push_back({w.ns, &p});
  }
  return refs;
}

// TEL-4: when some pods sharing a GPU have the same upsize samples, one more batched query reads whether their
// compute series moved (decide/reactive/per_pod.h); counted with the cycle's queries.
void read_spread_of_suspects(prom::Querier& prometheus, const api::ReactiveSpec& spec,
                             std::vector<observe::WorkloadPods>& pods, observe::SignalRead& read) {
  if (read.error) return;
  const decide::reactive::PodKeys suspects = decide::reactive::suspects(refs_of(pods));
  if (suspects.empty()) return;
  observe::SignalRead more = observe::read_compute_spread(prometheus, spec, pods, suspects);
  read.succeeded += more.succeeded;
  read.failed += more.failed;
  read.non_finite += more.non_finite;
  read.error = more.error;
}

// TEL-4: the pods whose samples are copies of their GPU's series leave the cycle (no recommendation from them);
// `excluded[i]` says whether workload i lost any.
decide::reactive::NotPerPod leave_out_copied_samples(std::vector<observe::WorkloadPods>& pods,
                                                     std::vector<bool>& excluded) {
  decide::reactive::NotPerPod found = decide::reactive::not_per_pod(refs_of(pods));
  excluded.assign(pods.size(), false);
  if (!found.any()) return found;
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const std::size_t before = pods[i].pods.size();
    std::erase_if(pods[i].pods, [&](const decide::reactive::PodInput& p) {
      return found.pods.contains({pods[i].ns, p.name});
    });
    excluded[i] = pods[i].pods.size() != before;
  }
  return found;
}

// Ready=False/MetricsNotPerPod's message: the metric(s), an example pair and what to do.
std::string not_per_pod_message(const api::ReactiveSpec& spec, const decide::reactive::NotPerPod& found) {
  const std::string& compute = spec.compute.prometheus.metric;
  const std::string& memory = spec.memory.prometheus.metric;
  std::string m = compute == memory ? "metric \"" + compute + "\" gives"
                                    : "metrics \"" + compute + "\" and \"" + memory + "\" give";
  m += " pods " + found.first + " and " + found.second +
       " on one GPU the same series (the device's value copied onto each pod, as DCGM's per-pod mode does); no "
       "recommendation for " + std::to_string(found.pods.size()) +
       " pods sharing a GPU: use kubex gpu-exporter or another per-process source";
  return m;
}

}  // namespace

std::unique_ptr<PrometheusConnector> prometheus_connector() {
  return std::make_unique<ClientConnector>();
}

prom::Options prometheus_options(const api::GlobalConfigSpec& global, const std::string& bearer_token_file,
                                 const std::string& ca_file) {
  prom::Options po;
  po.url = global.prometheus_url;
  po.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(global.prometheus_request_timeout);
  po.bearer_token_file = bearer_token_file;
  po.ca_file = ca_file;
  return po;
}

ReactiveRecommender::ReactiveRecommender(ReactiveDeps deps, ReactiveOptions options)
    : deps_(std::move(deps)),
      options_(std::move(options)),
      controller_(
          kName, [this](const std::string& key) { return reconcile(key); }, controller_options(options_)),
      recommendations_total_(options_.metrics) {
  if (options_.metrics) {
    auto& f = options_.metrics->counter_family("kubex_prometheus_queries_total",
                                               "Prometheus queries sent by kubex, by phase and result.");
    queries_ok_ = &f.Add({{"phase", "reactive"}, {"result", "success"}});
    queries_failed_ = &f.Add({{"phase", "reactive"}, {"result", "error"}});
  }
}

ReactiveRecommender::~ReactiveRecommender() {
  stop();
}

void ReactiveRecommender::start() {
  controller_.start();
  controller_.enqueue(kAll);
}

void ReactiveRecommender::stop() {
  controller_.stop();
}

kube::ReconcileOutcome ReactiveRecommender::reconcile(const std::string& key) {
  if (key != kAll) return cycle(key);
  auto catalog = deps_.catalog->catalog();
  std::vector<std::string> live;
  for (const auto& lp : catalog->policies()) {
    if (!api::is_reactive(lp.input.policy->kind)) continue;
    ObjectId id{lp.input.policy->kind, lp.input.policy->meta.ns, lp.input.policy->meta.name};
    live.push_back(id.key());
    controller_.enqueue(id.key());
  }
  std::lock_guard lk(mu_);
  std::erase_if(schedules_, [&](const auto& e) {
    return std::find(live.begin(), live.end(), e.first) == live.end();
  });
  return kube::ReconcileResult{};
}

kube::ReconcileOutcome ReactiveRecommender::cycle(const std::string& key) {
  auto id = parse_object_key(key);
  if (!id || !api::is_reactive(id->kind)) return kube::ReconcileResult{};
  auto catalog = deps_.catalog->catalog();
  const decide::policy::LinkedPolicy* lp = find_policy(*catalog, *id);
  if (!lp || !lp->valid) return kube::ReconcileResult{};  // SEL-4: only valid policies recommend
  const api::Policy& policy = *lp->input.policy;
  const api::ReactiveSpec& spec = policy.reactive;
  const api::GlobalConfigSpec& global = catalog->global();
  const common::TimePoint now = clock_of(options_).now();
  const common::Duration interval = options_.check_interval.value_or(global.gpu_reactive_check_interval);

  const prom::Options po = prometheus_options(global, options_.bearer_token_file, options_.ca_file);
  const std::string settings = po.url + " " + std::to_string(po.timeout.count()) + " " +
                               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(interval).count());
  {
    // REA-1: one cycle per interval; a spec or settings change runs one at once.
    std::lock_guard lk(mu_);
    Schedule& s = schedules_[key];
    if (s.generation == policy.meta.generation && s.settings == settings && now < s.next_due) {
      return kube::ReconcileResult{false, s.next_due - now};
    }
    s.generation = policy.meta.generation;
    s.settings = settings;
    s.next_due = now + interval;
  }
  const kube::ReconcileResult again{false, interval};
  const auto cycle_start = std::chrono::steady_clock::now();

  // The workloads this policy wins (SEL-7) and their eligible pods (REA-2).
  struct Won {
    std::shared_ptr<const api::WorkloadView> w;
    decide::policy::Match match;
  };
  std::vector<Won> won;
  std::vector<observe::WorkloadPods> pods;
  for (auto& w : deps_.pods->workloads()) {
    decide::policy::Match m = decide::policy::match_policies(
        observe::decision_workload(*w), catalog->candidates(), catalog->evaluation(),
        global.protected_namespace_patterns);
    if (m.on_hold || !m.reactive_winner || m.policies[*m.reactive_winner].policy != &policy) continue;
    pods.push_back(deps_.pods->eligible(*w, spec.min_pod_metrics_age, now));
    won.push_back({std::move(w), std::move(m)});
  }

  // What the cycle cost, for its log line (docs/performance.md reads it).
  using Steady = std::chrono::steady_clock;
  auto seconds_since = [](Steady::time_point t) { return std::chrono::duration<double>(Steady::now() - t).count(); };
  std::size_t eligible = 0, queries = 0, written_count = 0;
  for (const auto& p : pods) eligible += p.pods.size();
  double prometheus_seconds = 0, decide_seconds = 0;

  std::optional<common::Error> failure;
  if (!won.empty()) {
    auto querier = deps_.prometheus->connect(po);
    if (!querier) {
      failure = querier.error();  // bad settings (URL, CA file): no query could be sent, counted as one error
      ++queries;
      if (queries_failed_) queries_failed_->Increment();
    } else {
      auto t0 = Steady::now();
      observe::SignalRead read = observe::read_signals(**querier, spec, pods);
      read_spread_of_suspects(**querier, spec, pods, read);
      prometheus_seconds = seconds_since(t0);
      queries = read.succeeded + read.failed;
      if (queries_ok_) queries_ok_->Increment(static_cast<double>(read.succeeded));
      if (queries_failed_) queries_failed_->Increment(static_cast<double>(read.failed));
      failure = read.error;
    }
  }

  decide::reactive::NotPerPod not_per_pod;
  act::StatusChange status;
  status.generation = policy.meta.generation;
  status.fields["lastEvaluationTime"] = common::format_rfc3339(now);
  if (failure) {
    // REA-10: no annotation changes; the policy says why until a cycle succeeds.
    log_.warn("prometheus query failed; reactive recommendations unchanged",
              {{"policy", key}, {"error", failure->str()}});
    status.set.push_back({"Ready", "False", "PrometheusQueryFailed", failure->str()});
  } else {
    // TEL-4: copied samples leave the cycle; the policy says so until they stop.
    std::vector<bool> excluded;
    not_per_pod = leave_out_copied_samples(pods, excluded);
    if (not_per_pod.any()) {
      status.set.push_back(
          {"Ready", "False", decide::kReasonMetricsNotPerPod, not_per_pod_message(spec, not_per_pod)});
    } else {
      status.set.push_back({"Ready", "True", decide::kReasonReconciled, decide::kReadyMessage});
    }
    const std::string requests_key = decide::desired_requests_key(policy.kind);
    const std::string state_key = decide::reactive_state_key(policy.kind);
    const std::string limits_key = decide::desired_limits_key(policy.kind);
    const std::string_view sharing_mode = api::gpu_sharing_mode(global);
    const decide::policy::MatchedPolicy* winner = nullptr;
    for (std::size_t i = 0; i < won.size(); ++i) {
      const api::WorkloadView& w = *won[i].w;
      winner = &won[i].match.policies[*won[i].match.reactive_winner];
      decide::reactive::Input in;
      in.spec = &spec;
      in.pods = std::move(pods[i].pods);
      in.now = now;
      if (auto e = decide::reactive::parse_requests(annotation_or_empty(w, requests_key)); e) in.existing = *e;
      if (auto st = decide::reactive::parse_state(annotation_or_empty(w, state_key)); st) in.state = *st;
      // REA-12: the memory peak feeds the KAI-2 burst limit where it applies to the workload.
      in.record_peak = winner->strategy && decide::fraction_limit_applies(sharing_mode, winner->strategy->spec);
      if (in.record_peak) {
        if (auto e = decide::reactive::parse_requests(annotation_or_empty(w, limits_key)); e) in.existing_limits = *e;
      }
      auto t0 = Steady::now();
      decide::reactive::Outcome out = decide::reactive::decide(in);
      decide_seconds += seconds_since(t0);

      std::map<std::string, std::string> set;
      std::vector<std::string> remove;
      if (out.result == decide::reactive::Result::kRecommended) {
        set[requests_key] = decide::reactive::format_requests(out.requests);
      }
      if (out.state_changed) set[state_key] = decide::reactive::format_state(out.state);
      if (out.limits_changed) set[limits_key] = decide::reactive::format_requests(out.limits);
      for (auto it = set.begin(); it != set.end();) {  // nothing to write when the owner already says so
        it = annotation_or_empty(w, it->first) == it->second ? set.erase(it) : std::next(it);
      }
      for (const auto& k : won[i].match.stale_annotations) {  // SEL-7: the other reactive prefix
        if (is_reactive_key(k) && w.annotation(k)) remove.push_back(k);
      }
      decide::Summary summary = summary_of(w, *winner, out, in, options_.dry_run);
      if (excluded[i]) {  // OBS-4: some of its pods were left out (TEL-4)
        summary.applied_filters.push_back("metricsNotPerPod");
        std::sort(summary.applied_filters.begin(), summary.applied_filters.end());
      }
      summaries_.write(log_, summary);  // OBS-4: one line per workload per cycle, at info when it is news
      auto written = deps_.annotations->write(w, set, remove, "reactive recommendations");
      if (!written) {
        log_.warn("cannot write reactive recommendations", {{"owner", observe::workload_key(w)},
                                                            {"error", written.error()}});
        continue;
      }
      if (*written == act::OwnerWrite::kWritten) {
        ++written_count;
        recommendations_total_.written(w, set);  // OBS-5
      }
    }
  }
  auto r = deps_.status->write(id->path(), status, now);
  if (!r && !r.error().not_found()) {
    log_.warn("cannot update the policy status", {{"policy", key}, {"error", r.error().str()}});
  }
  log_.info("reactive cycle", {{"policy", key},
                               {"workloads", won.size()},
                               {"eligiblePods", eligible},
                               {"queries", queries},
                               {"ok", !failure.has_value()},
                               {"podsNotPerPod", not_per_pod.pods.size()},
                               {"ownersWritten", written_count},
                               {"prometheusSeconds", prometheus_seconds},
                               {"decideSeconds", decide_seconds},
                               {"cycleSeconds", seconds_since(cycle_start)}});
  return again;
}

}  // namespace kubex::controllers
