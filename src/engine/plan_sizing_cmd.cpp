#include "engine/plan_sizing_cmd.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "api/kinds.h"
#include "api/kubex_views.h"
#include "common/file_io.h"
#include "common/yaml.h"
#include "decide/policy/catalog.h"
#include "decide/policy/match.h"
#include "decide/sizing/policy_file.h"
#include "decide/sizing/replay.h"
#include "engine/command_client.h"
#include "engine/plan_sizing_report.h"
#include "engine/report_cmd.h"
#include "engine/synced_informers.h"
#include "kube/client/client.h"
#include "observe/caches.h"
#include "observe/catalog.h"
#include "observe/report_inputs.h"
#include "observe/sizing_history.h"
#include "observe/workloads.h"
#include "prom/client.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
namespace ds = decide::sizing;
namespace dp = decide::policy;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr const char* kCommand = "kubex plan sizing";

std::string api_error(const kube::ApiStatus& s) {
  return s.message.empty() ? s.reason + " (" + std::to_string(s.code) + ")" : s.message;
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
const json& meta(const json& doc) {
  static const json empty = json::object();
  auto it = doc.find("metadata");
  return it != doc.end() && it->is_object() ? *it : empty;
}

// "Kind/ns/name" of a document or a typed object (ns "" for cluster kinds).
std::string key_of(const std::string& kind, const std::string& ns, const std::string& name) {
  return kind + "/" + ns + "/" + name;
}
std::string doc_key(const json& d) { return key_of(str(d, "kind"), str(meta(d), "namespace"), str(meta(d), "name")); }

// One reactive policy to replay: its identity and the documents replay_policies reads.
struct Target {
  api::Kind kind = api::Kind::kClusterGpuReactivePolicy;
  std::string ns, name, source;
  std::vector<json> docs;
  std::string invalid;  // SEL-4 in the cluster: why it wins nothing (its strategy is missing or invalid)

  std::string ref() const {
    return std::string(api::info(kind).name) + "/" + (ns.empty() ? "" : ns + "/") + name;
  }
};

// The (Cluster)AutomationStrategy a policy document references: kind, namespace, name ("" name: none).
std::tuple<api::Kind, std::string, std::string> strategy_ref(const json& policy) {
  const json& spec = policy.value("spec", json::object());
  std::string name = spec.is_object() ? str(spec.value("automationStrategyRef", json::object()), "name") : "";
  const bool cluster = str(policy, "kind").rfind("Cluster", 0) == 0;
  return {cluster ? api::Kind::kClusterAutomationStrategy : api::Kind::kAutomationStrategy,
          cluster ? "" : str(meta(policy), "namespace"), name};
}

// Per-container GPUs as the user wrote them (RBK-1 `original`): the gpu-fraction for the fraction container, else
// the container's nvidia.com/gpu request, else its limit. 0 when the original does not say.
decide::Hundredths written_for(const decide::actuation::Original& o, const std::string& container, bool fraction) {
  if (fraction && o.gpu_fraction) {
    if (auto f = decide::parse_gpu_fraction(*o.gpu_fraction)) return *f;
  }
  auto it = o.containers.find(container);
  if (it == o.containers.end()) return 0;
  const auto& v = it->second.gpu_request ? it->second.gpu_request : it->second.gpu_limit;
  if (!v) return 0;
  auto q = common::Quantity::parse(*v);
  return q ? decide::from_whole(q->milli_value() / 1000) : 0;
}

// Why a linked policy is not valid (SEL-4): the validator's message, or its strategy.
std::string invalid_reason(const dp::LinkedPolicy& lp) {
  if (!lp.input.spec_valid) return lp.input.message;
  const std::string ref = lp.input.policy->common().strategy_ref;
  return lp.resolution == dp::Resolution::kStrategyNotFound
             ? "its strategy \"" + ref + "\" does not exist (SEL-4): it wins no workload"
             : "its strategy \"" + ref + "\" is not Valid (SEL-4): it wins no workload";
}

class Run {
 public:
  Run(const PlanSizingOptions& o, std::istream& in, std::ostream& out, std::ostream& err)
      : o_(o), in_(in), out_(out), err_(err) {}

  int run() {
    auto window = parse_since(o_.since);
    if (!window) {
      err_ << kCommand << ": --since \"" << o_.since << "\": " << window.error().str()
           << " (a duration such as 24h, 90m or 7d)\nRun '" << kCommand << " --help' for usage.\n";
      return kExitUsage;
    }
    std::error_code ec;
    const bool from_file = !o_.policy.empty() && (o_.policy == "-" || std::filesystem::exists(o_.policy, ec));
    std::vector<json> file_docs;
    if (from_file && !read_file(file_docs)) return kExitFailed;

    auto client = command_client(o_.kubeconfig, o_.context);
    if (!client) return fail(client.error().str());
    kube::Client& c = **client;
    CommandCaches view(*client, o_.global_config_name, o_.policy_evaluation_name);
    if (auto stuck = view.sync(); !stuck.empty()) return fail(stuck);
    caches_ = &view.caches;
    std::shared_ptr<const dp::Catalog> cat = view.catalog.catalog();

    std::vector<Target> targets;
    if (from_file) {
      for (const auto& d : file_docs) {
        auto k = api::kind_from_name(str(d, "kind"));
        if (!k || !api::is_reactive(*k)) continue;
        targets.push_back({*k, str(meta(d), "namespace"), str(meta(d), "name"), source_, file_docs, ""});
      }
      if (targets.empty()) return fail(source_ + ": holds no GpuReactivePolicy or ClusterGpuReactivePolicy");
      cat = with_file(*cat, file_docs);
      for (auto& t : targets) {
        for (const auto& lp : cat->policies()) {
          const api::Policy& p = *lp.input.policy;
          if (p.kind != t.kind || p.meta.ns != t.ns || p.meta.name != t.name || lp.valid) continue;
          t.invalid = invalid_reason(lp);
        }
      }
    } else {
      for (const auto& lp : cat->policies()) {
        const api::Policy& p = *lp.input.policy;
        if (!api::is_reactive(p.kind) || !wanted(p)) continue;
        Target t{p.kind, p.meta.ns, p.meta.name, "cluster", {}, ""};
        if (!lp.valid) t.invalid = invalid_reason(lp);
        targets.push_back(std::move(t));
      }
      if (!o_.policy.empty() && targets.empty()) {
        return fail("GpuReactivePolicy or ClusterGpuReactivePolicy \"" + o_.policy +
                    "\" not found (and no file of that name)");
      }
      if (!o_.policy.empty() && targets.size() > 1) {
        std::string refs;
        for (const auto& t : targets) refs += (refs.empty() ? "" : ", ") + t.ref();
        return fail("\"" + o_.policy + "\" names several reactive policies (" + refs +
                    "): give NAMESPACE/NAME for a GpuReactivePolicy");
      }
    }
    for (auto& t : targets) {
      if (int rc = read_documents(c, t); rc != kExitOk) return rc;
    }

    const api::GlobalConfigSpec& g = cat->global();
    prom::Options po;
    po.url = o_.prometheus_url.empty() ? g.prometheus_url : o_.prometheus_url;
    po.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(g.prometheus_request_timeout);
    po.bearer_token_file = o_.prometheus_bearer_token_file;
    po.ca_file = o_.prometheus_ca_file;
    auto querier = prom::connect(po);
    if (!querier) return fail("Prometheus " + po.url + ": " + querier.error().str());

    // REA-1: one cycle per gpuReactiveCheckInterval (1m by default, at least 1m): one point per cycle.
    step_ = std::max(std::chrono::seconds(60),
                     std::chrono::duration_cast<std::chrono::seconds>(g.gpu_reactive_check_interval));
    const auto workloads = observe::report_workloads(view.caches, {});
    const common::TimePoint end = common::RealClock::instance().now();
    const common::TimePoint start = end - *window;
    int exit = kExitOk;
    std::vector<SizingSection> sections;
    for (const auto& t : targets) {
      SizingSection s;
      s.ref = t.ref();
      s.name = t.name;
      s.source = t.source;
      auto rp = ds::replay_policies(t.docs, t.name);
      if (!rp) {
        s.errors.push_back(rp.error().str());
      } else if (!t.invalid.empty()) {
        s.errors.push_back(t.invalid);
      }
      if (!s.errors.empty()) {
        for (const auto& e : s.errors) err_ << kCommand << ": " << s.ref << ": " << e << "\n";
        exit = kExitFailed;
        sections.push_back(std::move(s));
        continue;
      }
      s.strategy = rp->strategy_name.empty() ? "" : strategy_kind(t) + "/" + rp->strategy_name;
      if (!replay(**querier, *cat, workloads, t, *rp, start, end, s)) return kExitFailed;
      sections.push_back(std::move(s));
    }

    if (o_.output == "json") {
      out_ << sizing_plan_json(sections, o_.since).dump(2) << "\n";
    } else if (sections.empty()) {
      out_ << "No GpuReactivePolicy or ClusterGpuReactivePolicy in the cluster.\n";
    } else {
      for (std::size_t i = 0; i < sections.size(); ++i) {
        if (i) out_ << "\n";
        print_sizing_plan(sections[i], o_.since, out_);
      }
    }
    return exit;
  }

 private:
  int fail(const std::string& message) {
    err_ << kCommand << ": " << message << "\n";
    return kExitFailed;
  }

  // --policy NAME: a ClusterGpuReactivePolicy or a GpuReactivePolicy of any namespace named NAME, or NS/NAME.
  bool wanted(const api::Policy& p) const {
    if (o_.policy.empty()) return true;
    if (auto slash = o_.policy.find('/'); slash != std::string::npos) {
      return p.meta.ns == o_.policy.substr(0, slash) && p.meta.name == o_.policy.substr(slash + 1);
    }
    return p.meta.name == o_.policy;
  }

  static std::string strategy_kind(const Target& t) {
    return api::is_cluster_policy(t.kind) ? "ClusterAutomationStrategy" : "AutomationStrategy";
  }

  bool read_file(std::vector<json>& docs) {
    std::string text;
    source_ = o_.policy;
    if (o_.policy == "-") {
      source_ = "<stdin>";
      text.assign(std::istreambuf_iterator<char>(in_), std::istreambuf_iterator<char>());
    } else {
      auto read = common::read_file(o_.policy);
      if (!read) {
        fail(read.error().str());
        return false;
      }
      text = std::move(*read);
    }
    auto parsed = common::yaml_to_json_documents(text);
    if (!parsed) {
      fail(source_ + ": " + parsed.error().str());
      return false;
    }
    for (auto& d : *parsed) {
      if (!d.is_object()) continue;
      // A namespaced document without a namespace lands in "default", as kubectl's default context would put it.
      auto k = api::kind_from_name(str(d, "kind"));
      if (k && api::info(*k).namespaced && str(meta(d), "namespace").empty() && d["metadata"].is_object()) {
        d["metadata"]["namespace"] = "default";
      }
      docs.push_back(std::move(d));
    }
    return true;
  }

  // The documents replay_policies reads for `t`: the policy itself (read from the cluster unless it came from the
  // file) and the strategy it references when the documents lack it and the cluster has it.
  int read_documents(kube::Client& c, Target& t) {
    if (t.docs.empty()) {
      auto got = c.get(api::object_path(t.kind, t.ns, t.name));
      if (!got) {
        if (got.error().not_found()) return fail(t.ref() + " not found");
        return fail("cannot read " + t.ref() + ": " + api_error(got.error()));
      }
      t.docs.push_back(std::move(*got));
    }
    const json* policy = nullptr;
    for (const auto& d : t.docs) {
      if (doc_key(d) == key_of(api::info(t.kind).name, t.ns, t.name)) policy = &d;
    }
    if (!policy) return kExitOk;
    auto [kind, ns, name] = strategy_ref(*policy);
    if (name.empty()) return kExitOk;
    const std::string want = key_of(api::info(kind).name, ns, name);
    for (const auto& d : t.docs) {
      if (doc_key(d) == want) return kExitOk;
    }
    auto got = c.get(api::object_path(kind, ns, name));
    if (got) {
      t.docs.push_back(std::move(*got));
    } else if (!got.error().not_found()) {
      return fail("cannot read " + std::string(api::info(kind).name) + " \"" + name + "\": " + api_error(got.error()));
    }
    return kExitOk;
  }

  // The cluster's catalog with the file's policies and strategies in place of the cluster's objects of the same
  // kind, namespace and name: what matching would see once the file is applied.
  static std::shared_ptr<const dp::Catalog> with_file(const dp::Catalog& cluster, const std::vector<json>& docs) {
    std::vector<dp::PolicyInput> policies;
    std::vector<dp::StrategyInput> strategies;
    std::set<std::string> replaced;
    for (const auto& d : docs) {
      auto k = api::kind_from_name(str(d, "kind"));
      if (!k || !(api::is_policy(*k) || api::is_strategy(*k))) continue;
      auto projected = api::project_kubex_object(*k, d);
      if (auto p = std::dynamic_pointer_cast<const api::PolicyObject>(projected)) {
        policies.push_back(dp::policy_input(p));
      } else if (auto s = std::dynamic_pointer_cast<const api::StrategyObject>(projected)) {
        strategies.push_back(dp::strategy_input(s));
      } else {
        continue;
      }
      replaced.insert(doc_key(d));
    }
    for (const auto& lp : cluster.policies()) {
      const api::Policy& p = *lp.input.policy;
      if (!replaced.count(key_of(api::info(p.kind).name, p.meta.ns, p.meta.name))) policies.push_back(lp.input);
    }
    for (const auto& si : cluster.strategies()) {
      const api::Strategy& s = *si.strategy;
      if (!replaced.count(key_of(api::info(s.kind).name, s.meta.ns, s.meta.name))) strategies.push_back(si);
    }
    return std::make_shared<dp::Catalog>(std::move(policies), std::move(strategies), cluster.global(),
                                         cluster.evaluation());
  }

  // The rows of `t`: every GPU container of the workloads it wins (SEL-7), replayed on its history. False (after
  // printing why) when Prometheus cannot be read.
  bool replay(prom::Querier& querier, const dp::Catalog& cat, const std::vector<observe::ReportWorkload>& workloads,
              const Target& t, const ds::ReplayPolicies& rp, common::TimePoint start, common::TimePoint end,
              SizingSection& s) {
    std::vector<observe::SizingSubject> subjects;
    for (const auto& w : workloads) {
      const dp::Match m = dp::match_policies(observe::decision_workload(*w.view), cat.candidates(), cat.evaluation(),
                                             cat.global().protected_namespace_patterns);
      if (!m.reactive_winner) continue;
      const api::Policy& winner = *m.policies[*m.reactive_winner].policy;
      if (winner.kind != t.kind || winner.meta.name != t.name || winner.meta.ns != t.ns) continue;
      const auto original = observe::written_original(view_caches(), *w.view);
      for (const auto& [container, a] : w.allocations) {
        if (a.gpu <= 0) continue;
        decide::Hundredths written = original ? written_for(*original, container, !a.whole_gpu) : 0;
        if (written <= 0) written = a.gpu;  // the original does not say: what the container holds now
        SizingRow row;
        row.ns = w.input.ns;
        row.kind = w.input.kind;
        row.name = w.input.name;
        row.container = container;
        row.as_written = written;
        s.rows.push_back(std::move(row));
        subjects.push_back({{w.input.kind, w.input.ns, w.input.name, a.whole_gpu}, container, a.gpu});
      }
    }
    if (subjects.empty()) return true;
    const observe::SizingRead read = observe::read_sizing_history(querier, rp.reactive, subjects, start, end, step_);
    if (!read.errors.empty()) {
      fail("cannot read the history of " + s.ref + " from Prometheus: " + read.errors.front());
      return false;
    }
    for (std::size_t i = 0; i < subjects.size(); ++i) {
      SizingRow& row = s.rows[i];
      auto it = read.samples.find(observe::sizing_key(subjects[i]));
      if (it == read.samples.end() || it->second.empty()) continue;  // "no history"
      // The container's name: the strategy's per-container bounds and a StaticPolicy's named entry apply to it.
      ds::ContainerSeries series{observe::sizing_key(subjects[i]), subjects[i].container, it->second};
      row.has_history = true;
      row.kubex = ds::tally(series, ds::replay_kubex(series, rp, row.as_written), row.as_written);
      row.oracle_hourly = ds::tally(series, ds::oracle_hourly(series, rp.strategy, row.as_written), row.as_written);
      row.static_peak = ds::tally(series, ds::static_peak(series, rp.strategy, row.as_written), row.as_written);
      row.p95_history = ds::tally(series, ds::p95_history(series, rp.strategy, row.as_written), row.as_written);
    }
    return true;
  }

  const observe::Caches& view_caches() const { return *caches_; }

  const PlanSizingOptions& o_;
  std::istream& in_;
  std::ostream& out_;
  std::ostream& err_;
  std::string source_;
  std::chrono::seconds step_{60};
  const observe::Caches* caches_ = nullptr;
};

}  // namespace

int run_plan_sizing(const PlanSizingOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  return run_quiet_command(kCommand, err, [&] { return Run(options, in, out, err).run(); });
}

}  // namespace kubex::engine
