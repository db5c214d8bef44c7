#include "engine/plan_cmd.h"

#include <exception>
#include <iostream>
#include <iterator>
#include <sstream>
#include <nlohmann/json.hpp>

#include "api/kinds.h"
#include "api/parse.h"
#include "common/file_io.h"
#include "common/yaml.h"
#include "decide/packing/plan.h"
#include "engine/command_client.h"
#include "engine/plan_report.h"
#include "kube/client/client.h"
#include "observe/gpu_inventory.h"

namespace kubex::engine {
namespace {

using nlohmann::json;
namespace pk = decide::packing;

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr const char* kCommand = "kubex plan consolidation";

std::string api_error(const kube::ApiStatus& s) {
  return s.message.empty() ? s.reason + " (" + std::to_string(s.code) + ")" : s.message;
}

struct Source {
  json object;
  std::string source;  // "cluster" or the file name (with the document's line)
};

// The policies to plan, or an exit code after printing why not.
class Run {
 public:
  Run(const PlanOptions& o, std::istream& in, std::ostream& out, std::ostream& err)
      : o_(o), in_(in), out_(out), err_(err) {}

  int run() {
    std::vector<Source> sources;
    if (!o_.file.empty() && !read_file(sources)) return kExitFailed;
    auto client = command_client(o_.kubeconfig, o_.context);
    if (!client) return fail(client.error().str());
    std::vector<PolicyPlan> plans;
    int exit = collect(**client, std::move(sources), plans);
    if (exit != kExitOk && plans.empty()) return exit;
    if (o_.output == "json") {
      json doc = {{"apiVersion", "cli.kubex.ai/v1alpha1"}, {"kind", "ConsolidationPlan"}, {"policies", json::array()}};
      for (const auto& p : plans) doc["policies"].push_back(policy_plan_json(p));
      out_ << doc.dump(2) << "\n";
    } else if (plans.empty()) {
      out_ << "No GpuConsolidationPolicy in the cluster.\n";
    } else {
      for (std::size_t i = 0; i < plans.size(); ++i) {
        if (i) out_ << "\n";
        print_policy_plan(plans[i], out_);
      }
    }
    return exit;
  }

  // The plans of `sources` (plus the cluster's policies per --policy, or all of them without -f): kExitOk, or
  // kExitFailed after printing why (with `plans` empty when nothing could be planned).
  int collect(kube::Client& c, std::vector<Source> sources, std::vector<PolicyPlan>& plans) {
    const auto kind = api::Kind::kGpuConsolidationPolicy;
    if (!o_.policy.empty()) {
      auto got = c.get(api::object_path(kind, "", o_.policy));
      if (!got) {
        if (got.error().not_found()) return fail("GpuConsolidationPolicy \"" + o_.policy + "\" not found");
        return fail("cannot read GpuConsolidationPolicy \"" + o_.policy + "\": " + api_error(got.error()));
      }
      sources.push_back({std::move(*got), "cluster"});
    } else if (o_.file.empty()) {
      auto listed = c.list(api::collection_path(kind), {}, [&](json&& item) {
        sources.push_back({std::move(item), "cluster"});
      });
      if (!listed) return fail("cannot list GpuConsolidationPolicies: " + api_error(listed.error()));
    }

    std::string reservation_ns = api::GlobalConfigSpec{}.kai_reservation_namespace;
    reserve_ = pk::memory_reserve(api::GlobalConfigSpec{});
    auto gc = c.get(api::object_path(api::Kind::kGlobalConfiguration, "", o_.global_config_name));
    if (gc) {
      auto parsed = api::parse_global_config(*gc);
      reservation_ns = parsed.value.spec.kai_reservation_namespace;
      reserve_ = pk::memory_reserve(parsed.value.spec);  // CON-2a
    } else if (!gc.error().not_found()) {
      return fail("cannot read GlobalConfiguration \"" + o_.global_config_name + "\": " + api_error(gc.error()));
    }

    auto inventory = observe::read_gpu_inventory(c);
    if (!inventory) return fail("cannot read nodes, pods and PodDisruptionBudgets: " + api_error(inventory.error()));

    int exit = kExitOk;
    for (const auto& s : sources) {
      plans.push_back(plan_one(s, **inventory, reservation_ns));
      if (!plans.back().errors.empty()) exit = kExitFailed;
    }
    return exit;
  }

 private:
  int fail(const std::string& message) {
    err_ << kCommand << ": " << message << "\n";
    return kExitFailed;
  }

  // -f: every GpuConsolidationPolicy document of the file. False (after printing) when it cannot be read,
  // does not parse or holds none.
  bool read_file(std::vector<Source>& sources) {
    std::string text, name = o_.file;
    if (o_.file == "-") {
      name = "<stdin>";
      text.assign(std::istreambuf_iterator<char>(in_), std::istreambuf_iterator<char>());
    } else {
      auto read = common::read_file(o_.file);
      if (!read) {
        fail(read.error().str());
        return false;
      }
      text = std::move(*read);
    }
    std::vector<common::DocumentLines> lines;
    auto docs = common::yaml_to_json_documents(text, &lines);
    if (!docs) {
      fail(name + ": " + docs.error().str());
      return false;
    }
    for (std::size_t i = 0; i < docs->size(); ++i) {
      const json& d = (*docs)[i];
      if (!d.is_object() || d.value("kind", json()) != "GpuConsolidationPolicy") continue;
      sources.push_back({d, name + ":" + std::to_string(i < lines.size() ? lines[i].line : 0)});
    }
    if (sources.empty()) {
      fail(name + ": holds no GpuConsolidationPolicy");
      return false;
    }
    return true;
  }

  PolicyPlan plan_one(const Source& s, const observe::GpuInventory& inventory, const std::string& reservation_ns) {
    auto parsed = api::parse_consolidation_policy(s.object);
    PolicyPlan p;
    p.name = parsed.value.meta.name;
    p.source = s.source;
    p.threshold_percent = parsed.value.spec.utilization_threshold_percent;
    if (s.source == "cluster") {
      p.draining_node = parsed.value.status.draining_node;
      p.last_drained_node = parsed.value.status.last_drained_node;
      p.last_drain_time = parsed.value.status.last_drain_time;
    }
    if (!parsed.valid()) {  // VAL-1: the one validator's errors, no plan
      for (const auto& e : parsed.report.errors.items()) p.errors.push_back(e.str());
      p.invalid_reason = parsed.report.reason();
      if (s.source != "cluster")
        for (const auto& e : p.errors) err_ << s.source << ": GpuConsolidationPolicy/" << p.name << ": " << e << "\n";
      return p;
    }
    pk::Pool pool = inventory.pool(parsed.value.spec.node_selector, reservation_ns);
    if (pool.nodes.empty()) {  // CON-1
      p.empty_pool = true;
      return p;
    }
    pk::Options opts;
    opts.threshold_percent = p.threshold_percent;
    opts.policy = p.name;
    opts.reserve = reserve_;
    p.plan = pk::plan(pool, opts);
    p.sequence = pk::drain_sequence(pool, opts);
    return p;
  }

  const PlanOptions& o_;
  pk::MemoryReserve reserve_;  // CON-2a, from GlobalConfiguration
  std::istream& in_;
  std::ostream& out_;
  std::ostream& err_;
};

}  // namespace

common::Result<std::vector<PolicyPlan>> plan_cluster_policies(kube::Client& client,
                                                              const std::string& global_config_name) {
  PlanOptions o;
  o.global_config_name = global_config_name;
  std::istringstream in;
  std::ostringstream out, err;
  std::vector<PolicyPlan> plans;
  try {
    Run run(o, in, out, err);
    if (run.collect(client, {}, plans) != kExitOk && plans.empty()) {
      std::string e = err.str();
      const std::string prefix = std::string(kCommand) + ": ";
      if (e.rfind(prefix, 0) == 0) e = e.substr(prefix.size());
      while (!e.empty() && e.back() == '\n') e.pop_back();
      return common::fail(e);
    }
  } catch (const std::exception& e) {
    return common::fail(e.what());
  }
  return plans;
}

int run_plan_consolidation(const PlanOptions& options, std::istream& in, std::ostream& out, std::ostream& err) {
  try {
    return Run(options, in, out, err).run();
  } catch (const std::exception& e) {
    err << kCommand << ": " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace kubex::engine
