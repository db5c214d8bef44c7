#include "controllers/proactive_history.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "act/status_writer.h"
#include "api/keys.h"
#include "common/time_format.h"
#include "controllers/status_support.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "decide/proactive/owner_values.h"
#include "decide/status/policy_status.h"
#include "kube/runtime/metrics.h"
#include "observe/catalog_view.h"
#include "observe/gpu_history.h"
#include "observe/workloads.h"
#include "prom/client.h"

namespace kubex::controllers {

namespace {

constexpr common::Duration kFirstRetry = std::chrono::minutes(1);  // PRO-8: 1m, doubling, capped at the interval
constexpr common::Duration kMaxSleep = std::chrono::seconds(30);   // the loop looks at the schedules at least this often

const decide::policy::LinkedPolicy* find_policy(const decide::policy::Catalog& catalog, const ObjectId& id) {
  for (const auto& lp : catalog.policies()) {
    const api::Policy& p = *lp.input.policy;
    if (p.kind == id.kind && p.meta.ns == id.ns && p.meta.name == id.name) return &lp;
  }
  return nullptr;
}

std::string policy_key(const api::Policy& p) {
  return ObjectId{p.kind, p.meta.ns, p.meta.name}.key();
}

}  // namespace

HistoryEvaluations::HistoryEvaluations(HistoryEvaluationDeps deps, HistoryEvaluationOptions options,
                                       Callbacks callbacks)
    : deps_(std::move(deps)), options_(std::move(options)), callbacks_(std::move(callbacks)) {
  if (!options_.clock) options_.clock = &common::RealClock::instance();
  if (options_.metrics) {
    auto& f = options_.metrics->counter_family("kubex_prometheus_queries_total",
                                               "Prometheus queries sent by kubex, by phase and result.");
    queries_ok_ = &f.Add({{"phase", "proactive"}, {"result", "success"}});
    queries_failed_ = &f.Add({{"phase", "proactive"}, {"result", "error"}});
  }
}

HistoryEvaluations::~HistoryEvaluations() {
  stop();
}

void HistoryEvaluations::start() {
  stop();
  {
    std::lock_guard lk(mu_);
    stopping_ = false;
    // A new term (restart, new leader) evaluates every policy again before anything is written from history.
    schedules_.clear();
    results_.clear();
    first_matches_.clear();
  }
  thread_ = std::thread([this] { loop(); });
}

void HistoryEvaluations::stop() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HistoryEvaluations::wake() {
  cv_.notify_all();
}

void HistoryEvaluations::first_match(const std::string& policy, const std::string& workload) {
  {
    std::lock_guard lk(mu_);
    first_matches_[policy].insert(workload);
  }
  cv_.notify_all();
}

void HistoryEvaluations::recount() {
  {
    std::lock_guard lk(mu_);
    recount_ = true;
  }
  cv_.notify_all();
}

HistoryEvaluations::Lookup HistoryEvaluations::lookup(const std::string& policy, const std::string& workload) const {
  std::lock_guard lk(mu_);
  Lookup out;
  auto s = schedules_.find(policy);
  if (s == schedules_.end() || !s->second.evaluated) return out;
  out.seen = Seen::kAbsent;
  auto r = results_.find(policy);
  if (r == results_.end()) return out;
  auto w = r->second.find(workload);
  if (w == r->second.end()) return out;
  out.seen = Seen::kRead;
  out.history = w->second;
  return out;
}

void HistoryEvaluations::loop() {
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (stopping_) return;
    }
    run_due();
    std::unique_lock lk(mu_);
    if (stopping_) return;
    common::Duration sleep = kMaxSleep;
    const common::TimePoint now = options_.clock->now();
    for (const auto& [key, s] : schedules_) {
      sleep = std::min(sleep, std::max(common::Duration::zero(), s.next_due - now));
      // Requeued for the moment a workload's history covers PRO-2's span (a catch-up read), not polled.
      if (auto c = catch_up(s)) sleep = std::min(sleep, std::max(common::Duration::zero(), c->at - now));
    }
    if (!first_matches_.empty() || recount_) sleep = common::Duration::zero();
    // Woken early by wake(), first_match(), recount() and stop(): run_due() decides what is due.
    if (sleep > common::Duration::zero()) cv_.wait_for(lk, sleep);
  }
}

std::optional<decide::CatchUpRead> HistoryEvaluations::catch_up(const Schedule& s) {
  if (!s.evaluated) return std::nullopt;
  return decide::next_catch_up(s.covered_at, s.next_due, s.last_read);
}

std::vector<HistoryEvaluations::Work> HistoryEvaluations::due_work(common::TimePoint now) {
  auto catalog = deps_.catalog->catalog();
  const api::GlobalConfigSpec& g = catalog->global();
  const std::string settings = g.prometheus_url + " " +
                               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                  g.prometheus_request_timeout).count()) +
                               " " + std::to_string(g.recommendation_reload_interval.count()) + " " +
                               std::to_string(g.proactive_headroom_percent);
  std::vector<Work> out;
  std::set<std::string> live;
  std::lock_guard lk(mu_);
  for (const auto& lp : catalog->policies()) {
    const api::Policy& p = *lp.input.policy;
    if (!api::is_proactive(p.kind) || !lp.valid) continue;  // SEL-4: only valid policies recommend
    const std::string key = policy_key(p);
    live.insert(key);
    Schedule& s = schedules_[key];
    Work w{key, false, {}};
    if (s.generation != p.meta.generation || s.settings != settings || now >= s.next_due) {
      w.full = true;
      s.generation = p.meta.generation;
      s.settings = settings;
    } else {
      if (auto f = first_matches_.find(key); f != first_matches_.end()) w.workloads = std::move(f->second);
      // PRO-2: the workloads whose history now covers the span, in the same batched read as any first matches.
      if (auto c = catch_up(s); c && c->at <= now) w.workloads.insert(c->workloads.begin(), c->workloads.end());
    }
    first_matches_.erase(key);
    if (w.full || !w.workloads.empty()) out.push_back(std::move(w));
  }
  std::erase_if(schedules_, [&](const auto& e) { return !live.count(e.first); });
  std::erase_if(results_, [&](const auto& e) { return !live.count(e.first); });
  std::erase_if(first_matches_, [&](const auto& e) { return !live.count(e.first); });
  return out;
}

std::size_t HistoryEvaluations::run_due() {
  const std::vector<Work> work = due_work(options_.clock->now());
  for (const Work& w : work) evaluate(w);
  bool recount = false;
  {
    std::lock_guard lk(mu_);
    std::swap(recount, recount_);
  }
  if (recount && callbacks_.recommended) {  // the ConfigMap changed what the workloads hold: recommendedWorkloads follows
    std::vector<std::string> keys;
    {
      std::lock_guard lk(mu_);
      for (const auto& [key, s] : schedules_) {
        if (s.evaluated) keys.push_back(key);
      }
    }
    for (const auto& key : keys) {
      auto id = parse_object_key(key);
      if (!id) continue;
      act::StatusChange c;
      c.fields["recommendedWorkloads"] = callbacks_.recommended(key);
      auto r = deps_.status->write(id->path(), c, options_.clock->now());
      if (!r && !r.error().not_found()) log_.warn("cannot update the policy status", {{"policy", key}, {"error", r.error().str()}});
    }
  }
  return work.size();
}

void HistoryEvaluations::evaluate(const Work& work) {
  using Steady = std::chrono::steady_clock;
  const auto started = Steady::now();
  auto id = parse_object_key(work.policy);
  if (!id) return;
  auto catalog = deps_.catalog->catalog();
  const decide::policy::LinkedPolicy* lp = find_policy(*catalog, *id);
  if (!lp || !lp->valid) return;
  const api::Policy& policy = *lp->input.policy;
  const api::GlobalConfigSpec& g = catalog->global();
  const common::TimePoint now = options_.clock->now();
  const std::chrono::seconds lookback(std::int64_t{policy.proactive.max_analysis_age_days} * 86400);

  // The workloads this policy wins (SEL-7), or the first matches of a partial evaluation.
  std::map<std::string, WorkloadHistory> read;
  std::vector<observe::HistoryRequest> requests;
  std::map<std::string, std::string> history_keys;  // observe::history_key -> workload key
  std::map<std::string, std::optional<common::TimePoint>> pod_starts;  // workload key -> its oldest pod's start
  for (const auto& w : deps_.workloads->list()) {
    const std::string key = observe::workload_key(*w);
    if (!work.full && !work.workloads.count(key)) continue;
    decide::policy::Workload dw = observe::decision_workload(*w);
    decide::policy::Match m = decide::policy::match_policies(dw, catalog->candidates(), catalog->evaluation(),
                                                             g.protected_namespace_patterns);
    if (m.on_hold || !m.proactive_winner || m.policies[*m.proactive_winner].policy != &policy) continue;
    WorkloadHistory& h = read[key];
    h.allocations = deps_.subjects->allocations(*w);
    pod_starts[key] = deps_.subjects->oldest_start(*w);
    if (h.allocations.empty()) continue;  // PRO-4: nothing to read for a workload without a GPU
    observe::HistoryRequest r;
    r.workload = {dw.kind, dw.ns, dw.name, std::all_of(h.allocations.begin(), h.allocations.end(),
                                                       [](const auto& a) { return a.second.whole_gpu; })};
    r.lookback = lookback;
    r.memory_lookback = lookback;
    const common::IStr* rollback = w->annotation(api::keys::kRollbackState);
    if (auto t = rollback ? decide::last_allocation_transition(rollback->view()) : std::nullopt) {
      auto since = std::chrono::duration_cast<std::chrono::seconds>(now - *t);
      r.memory_lookback = std::clamp(since, std::chrono::seconds(60), lookback);  // PRO-2: Lm = min(L, now − t)
    }
    history_keys[observe::history_key(r.workload)] = key;
    requests.push_back(std::move(r));
  }

  std::optional<std::string> failure;
  std::size_t queries = 0, failed_queries = 0;
  double prometheus_seconds = 0;
  if (!requests.empty()) {
    const prom::Options po = prometheus_options(g, options_.bearer_token_file, options_.ca_file);
    common::Result<std::shared_ptr<prom::Querier>> querier =
        deps_.prometheus ? deps_.prometheus->connect(po) : common::fail("no Prometheus client");
    if (!querier) {
      failure = querier.error().str();
      queries = failed_queries = 1;  // no query could be sent: counted as one error, like the reactive recommender
    } else {
      auto t0 = Steady::now();
      observe::HistoryReadOptions ro;
      ro.retry_after = options_.retry_after;
      observe::HistoryReadResult result = observe::read_history(**querier, requests, now, ro);
      prometheus_seconds = std::chrono::duration<double>(Steady::now() - t0).count();
      queries = result.queries;
      failed_queries = result.failed_requests;
      if (!result.errors.empty()) failure = result.errors.front();
      for (auto& [hkey, containers] : result.workloads) {
        auto k = history_keys.find(hkey);
        if (k != history_keys.end()) read[k->second].containers = std::move(containers);
      }
      for (const auto& hkey : result.failed_workloads) {
        auto k = history_keys.find(hkey);
        if (k != history_keys.end()) read[k->second].failed = true;
      }
    }
    if (!querier) {
      for (const auto& [hkey, key] : history_keys) read[key].failed = true;
    }
  }
  if (queries_ok_) queries_ok_->Increment(static_cast<double>(queries - failed_queries));
  if (queries_failed_) queries_failed_->Increment(static_cast<double>(failed_queries));

  std::vector<std::string> covered;
  covered.reserve(read.size());
  for (const auto& [key, h] : read) covered.push_back(key);
  std::optional<decide::CatchUpRead> next_catch_up;
  {
    std::lock_guard lk(mu_);
    Schedule& s = schedules_[work.policy];
    auto& stored = results_[work.policy];
    // When each workload read now first has enough history (PRO-2): its catch-up read. A workload that failed keeps
    // its previous time; one no longer read (it left the policy) drops out.
    std::map<std::string, common::TimePoint> due;
    if (!work.full) due = s.covered_at;
    for (const auto& key : work.workloads) due.erase(key);
    for (const auto& [key, h] : read) {
      auto old = s.covered_at.find(key);
      if (h.failed) {
        if (old != s.covered_at.end()) due[key] = old->second;
        continue;
      }
      auto ps = pod_starts.find(key);
      if (auto t = decide::history_covered_at(h.containers, h.allocations, now,
                                              ps == pod_starts.end() ? std::nullopt : ps->second)) {
        due[key] = *t;
      } else {
        due.erase(key);
      }
    }
    if (work.full) {
      // A failed workload keeps what it had: its history could not be refreshed.
      for (auto& [key, h] : read) {
        if (h.failed) {
          auto old = stored.find(key);
          if (old != stored.end()) h.containers = old->second.containers;
        }
      }
      stored = std::move(read);
    } else {
      for (auto& [key, h] : read) stored[key] = std::move(h);
    }
    s.evaluated = true;
    if (work.full) {
      const common::Duration interval = g.recommendation_reload_interval;
      s.backoff = failure ? (s.backoff.count() ? std::min(s.backoff * 2, interval) : std::min(kFirstRetry, interval))
                          : common::Duration::zero();
      s.next_due = now + (failure ? s.backoff : interval);
    }
    s.covered_at = std::move(due);  // (read before `read` moves into the results)
    s.last_read = now;
    next_catch_up = catch_up(s);
  }

  // PRO-8: the policy says how its history reads went.
  act::StatusChange status;
  status.generation = policy.meta.generation;
  if (failure) {
    const bool configmap = callbacks_.has_config_map && callbacks_.has_config_map();
    status.set.push_back({"Ready", "False", decide::kReasonPrometheusQueryFailed,
                          configmap ? *failure : "no GPU history: " + *failure});
  } else {
    status.set.push_back({"Ready", "True", decide::kReasonReconciled, decide::kReadyMessage});
    status.fields["lastEvaluationTime"] = common::format_rfc3339(now);
  }
  // recommendedWorkloads runs the owner decision (decide::owner_values) for every workload the policy governs: its
  // time is the evaluation's decision time (docs/performance.md).
  const auto decide_start = Steady::now();
  if (callbacks_.recommended) status.fields["recommendedWorkloads"] = callbacks_.recommended(work.policy);
  const double decide_seconds = std::chrono::duration<double>(Steady::now() - decide_start).count();
  auto r = deps_.status->write(id->path(), status, now);
  if (!r && !r.error().not_found()) {
    log_.warn("cannot update the policy status", {{"policy", work.policy}, {"error", r.error().str()}});
  }
  if (failure) {
    log_.warn("prometheus query failed; proactive history values unchanged",
              {{"policy", work.policy}, {"error", *failure}});
  }
  log_.info("proactive history evaluation",
            {{"policy", work.policy},
             {"full", work.full},
             {"workloads", covered.size()},
             {"queried", requests.size()},
             {"queries", queries},
             {"ok", !failure.has_value()},
             {"prometheusSeconds", prometheus_seconds},
             {"decideSeconds", decide_seconds},
             {"evaluationSeconds", std::chrono::duration<double>(Steady::now() - started).count()}});
  if (next_catch_up) {
    log_.info("proactive history read scheduled",
              {{"policy", work.policy},
               {"at", common::format_rfc3339(next_catch_up->at)},
               {"inSeconds", std::chrono::duration_cast<std::chrono::seconds>(next_catch_up->at - now).count()},
               {"workloads", next_catch_up->workloads}});
  }
  if (callbacks_.evaluated) callbacks_.evaluated(work.policy, covered);
}

}  // namespace kubex::controllers
