#include "sim/demo/demo.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <algorithm>
#include <expected>
#include <filesystem>
#include <functional>
#include <optional>

#include "common/file_io.h"
#include "common/log.h"
#include "common/yaml.h"
#include "sim/apiserver/api_server.h"
#include "sim/cluster/instance.h"
#include "sim/cluster/runtime.h"
#include "sim/demo/child_process.h"
#include "sim/demo/demo_support.h"
#include "sim/demo/embedded.h"
#include "sim/demo/resizes.h"
#include "sim/demo/view.h"
#include "sim/gpu/gpu_model.h"

namespace kubex::sim::demo {

namespace {

constexpr const char* kEngineNamespace = "kubex";
constexpr const char* kStarterExample = "examples/kai-gpu-sharing.yaml";
constexpr const char* kDemoPolicies = "examples/demo/policies.yaml";
constexpr const char* kDemoWorkloads = "examples/demo/workloads.yaml";
constexpr const char* kCrdDir = "charts/kubex-crds/templates/";

class Demo {
 public:
  explicit Demo(const DemoOptions& o) : o_(o) {}
  int run();

 private:
  int fail(const std::string& step, const std::string& why, const std::string& log) {
    say("");
    say("kubex demo FAILED while " + step + ": " + why);
    if (!log.empty()) say("   see " + log);
    return 1;
  }
  // After a failed wait: everything stopped, then 130 when interrupted, else the failure report.
  int give_up(const std::string& step, const std::string& why, const std::string& log) {
    shutdown();
    return why == "interrupted" ? 130 : fail(step, why, log);
  }
  void shutdown();
  int gpus_in_cluster();
  // `nodes` (render_nodes), when given, is shown above the pods.
  void live_view(const std::vector<PodRow>& rows, std::string& last, bool tty, int gpus,
                 const std::string& nodes = "");

  // The steps of run(), in order; each returns the exit code when the demo ends there.
  std::optional<int> prepare();
  std::optional<int> start_cluster();
  std::optional<int> start_prometheus();
  std::optional<int> install_crds();
  std::optional<int> start_engine();
  std::optional<int> apply_examples();
  std::optional<int> watch_workloads();
  std::optional<int> watch_resize();
  bool resize_applied();
  std::optional<int> watch_consolidation();
  int kubex_report(const std::vector<std::string>& args, const std::string& out_path);

  // What an act's live view shows besides the pods.
  struct View {
    bool eviction_notes = false;  // "^ replacing: ..." under each pod the engine is evicting
    bool nodes = false;           // the GPU nodes above the pods
  };
  // Says after each redraw whether the act's goal holds now; an error ends the demo (`step` failed).
  using Tick = std::function<std::expected<bool, std::string>()>;
  // The live-view loop of every act: once a second it reads the pods into rows_, redraws, then asks `tick`.
  // The act is over once `tick` has held for `hold` in a row (`done` = true), or at the timeout (`done` =
  // false). Returns the exit code when the demo ends here: the engine exited, Ctrl-C, or `tick` failed.
  std::optional<int> watch(const std::string& step, std::chrono::seconds hold, View view, const Tick& tick,
                           bool& done);
  int finish();

  DemoOptions o_;
  Interrupts intr_;
  std::string dir_, sim_log_, engine_log_, prom_log_;
  std::string kubex_, prometheus_binary_;
  std::unique_ptr<cluster::Instance> sim_;
  std::unique_ptr<Applier> apply_;
  ChildProcess prometheus_, engine_;
  int gpus_ = 0;
  int prom_port_ = 0, metrics_port_ = 0, health_port_ = 0;
  std::size_t expected_pods_ = 0;
  std::vector<WrittenWorkload> written_;
  std::vector<PodRow> rows_;
  bool settled_ = false;
  bool resized_ = false;
  std::string resized_to_;  // the fraction the reactive policy gave chat-vllm
  bool consolidated_ = false;
  std::string drained_node_;  // the consolidation policy's status.lastDrainedNode
  int nodes_before_ = 0, nodes_after_ = 0;  // GPU nodes holding running GPU pods, before and after act 3
};

void Demo::shutdown() {
  if (engine_.running()) engine_.stop();
  if (prometheus_.running()) prometheus_.stop();
  if (sim_) sim_->stop();
}

int Demo::gpus_in_cluster() {
  Applier a(sim_->api());
  int total = 0;
  json nodes = a.get(cluster::core_path("nodes", ""));
  for (const auto& n : nodes.value("items", json::array())) {
    const json& alloc = n["status"].value("allocatable", json::object());
    if (alloc.contains("nvidia.com/gpu") && alloc["nvidia.com/gpu"].is_string()) {
      total += std::atoi(alloc["nvidia.com/gpu"].get<std::string>().c_str());
    }
  }
  return total;
}

void Demo::live_view(const std::vector<PodRow>& rows, std::string& last, bool tty, int gpus,
                     const std::string& nodes) {
  std::string table = (nodes.empty() ? "" : "GPU nodes:\n" + nodes) + render_rows(rows);
  std::string summary = render_summary(rows, gpus);
  if (tty) {
    std::printf("\033[H\033[J== kubex demo: live view (Ctrl-C to stop) ==\n%s\n\n%s", summary.c_str(),
                table.c_str());
    std::fflush(stdout);
  } else if (table != last) {
    say("-- " + summary);
    std::printf("%s", table.c_str());
    std::fflush(stdout);
  }
  last = table;
}

int Demo::run() {
  using Step = std::optional<int> (Demo::*)();
  for (Step step : {&Demo::prepare, &Demo::start_cluster, &Demo::start_prometheus, &Demo::install_crds,
                    &Demo::start_engine, &Demo::apply_examples, &Demo::watch_workloads, &Demo::watch_resize,
                    &Demo::watch_consolidation}) {
    if (auto code = (this->*step)()) return *code;
  }
  return finish();
}

// Work dir, logs and the binaries the demo runs.
std::optional<int> Demo::prepare() {
  if (o_.work_dir.empty()) {
    char tmpl[] = "/tmp/kubex-demo-XXXXXX";
    if (!::mkdtemp(tmpl)) return fail("creating a work directory", "mkdtemp failed", "");
    dir_ = tmpl;
  } else {
    dir_ = o_.work_dir;
    std::filesystem::create_directories(dir_);
  }
  sim_log_ = dir_ + "/kubex-sim.log";
  engine_log_ = dir_ + "/kubex-engine.log";
  prom_log_ = dir_ + "/prometheus.log";
  std::FILE* sim_log_file = std::fopen(sim_log_.c_str(), "a");
  if (sim_log_file) common::set_log_output(sim_log_file);
  kubex_ = o_.kubex_binary.empty() ? self_dir() + "/kubex" : o_.kubex_binary;
  prometheus_binary_ = find_program(o_.prometheus_binary);
  if (access(kubex_.c_str(), X_OK) != 0) return fail("starting", "no kubex binary at " + kubex_, "");
  if (prometheus_binary_.empty())
    return fail("starting", "no prometheus binary (scripts/install-deps.sh installs it)", "");

  say("== kubex demo: GPU sharing with KAI on a simulated cluster ==");
  say("   work directory: " + dir_);
  say("   logs: " + sim_log_ + "\n         " + engine_log_ + "\n         " + prom_log_);
  return std::nullopt;
}

// 1. The simulated cluster.
std::optional<int> Demo::start_cluster() {
  cluster::InstanceOptions io;
  io.kubeconfig = dir_ + "/kubeconfig";
  io.cluster.kubelet.start_delay = milliseconds(500);
  io.cluster.kubelet.ready_delay = milliseconds(500);
  // Pods take a few seconds to stop, as real ones do: the live view shows the replaced pods and why.
  io.cluster.kubelet.stop_delay = seconds(3);
  auto sim = cluster::Instance::start(io, gpu::make_gpu_model);
  if (!sim) return fail("starting kubex-sim", sim.error().str(), sim_log_);
  sim_ = std::move(*sim);
  apply_ = std::make_unique<Applier>(sim_->api());
  gpus_ = gpus_in_cluster();
  say("1. kubex-sim is up at " + sim_->url() + ": 4 nodes, " + std::to_string(gpus_) +
      " GPUs (3 nodes with 2 Tesla-T4 each, 1 CPU node)");
  return std::nullopt;
}

// 2. Prometheus scraping the simulated GPU exporter.
std::optional<int> Demo::start_prometheus() {
  prom_port_ = free_port();
  metrics_port_ = free_port();
  health_port_ = free_port();
  std::string metrics_target = sim_->metrics_url().substr(7);  // host:port/metrics
  metrics_target = metrics_target.substr(0, metrics_target.find('/'));
  std::string prom_cfg =
      "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
      "scrape_configs:\n"
      "  - job_name: kubex-sim-gpu\n    static_configs: [{targets: ['" +
      metrics_target +
      "']}]\n"
      "  - job_name: kubex-engine\n    static_configs: [{targets: ['127.0.0.1:" +
      std::to_string(metrics_port_) + "']}]\n";
  if (auto w = common::write_file_atomic(dir_ + "/prometheus.yml", prom_cfg, 0644); !w) {
    return fail("configuring Prometheus", w.error().str(), "");
  }
  if (auto r = prometheus_.start({prometheus_binary_, "--config.file=" + dir_ + "/prometheus.yml",
                                  "--storage.tsdb.path=" + dir_ + "/prometheus-data",
                                  "--web.listen-address=127.0.0.1:" + std::to_string(prom_port_)},
                                 prom_log_);
      !r) {
    return fail("starting Prometheus", r.error().str(), prom_log_);
  }
  std::string why = wait_until(intr_, "Prometheus", seconds(30), [&] {
    int status = 0;
    http_get(prom_port_, "/-/ready", &status);
    return status == 200 ? "" : "Prometheus is not ready";
  });
  if (!why.empty()) return give_up("starting Prometheus", why, prom_log_);
  say("2. Prometheus scrapes the GPU exporter every second: http://127.0.0.1:" + std::to_string(prom_port_));
  return std::nullopt;
}

// 3. The CRDs, the engine's namespace and its GlobalConfiguration (what the Helm charts install).
std::optional<int> Demo::install_crds() {
  Applier& apply = *apply_;
  int crds = 0;
  for (const auto& f : embedded_files()) {
    if (f.path.rfind(kCrdDir, 0) != 0) continue;
    if (auto r = apply.apply_yaml(f.path, f.content); !r)
      return fail("installing the CRDs", r.error().str(), "");
    ++crds;
  }
  if (crds == 0) return fail("installing the CRDs", "none compiled into this kubex-sim", "");
  json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kEngineNamespace}}}};
  if (auto r = apply.apply(ns); !r) return fail("creating the engine namespace", r.error().str(), "");
  json global = {{"apiVersion", "rightsizing.kubex.ai/v1alpha1"},
                 {"kind", "GlobalConfiguration"},
                 {"metadata", {{"name", "global-config"}}},
                 {"spec",
                  {{"prometheus", {{"url", "http://127.0.0.1:" + std::to_string(prom_port_)}}},
                   {"webhookHealth", {{"transitionCheckInterval", "2s"}, {"successThreshold", 1}}}}}};
  if (auto r = apply.apply(global); !r) return fail("creating global-config", r.error().str(), "");
  say("3. installed " + std::to_string(crds) +
      " rightsizing.kubex.ai CRDs and global-config (Prometheus at port " + std::to_string(prom_port_) + ")");
  return std::nullopt;
}

// 4. The engine: webhooks (early and late), KAI queues, controllers.
std::optional<int> Demo::start_engine() {
  Applier& apply = *apply_;
  std::vector<std::string> args = {kubex_,
                                   "engine",
                                   "--kubeconfig",
                                   sim_->kubeconfig(),
                                   "--namespace",
                                   kEngineNamespace,
                                   "--webhook-bind-address",
                                   "127.0.0.1:0",
                                   "--self-signed-webhook",
                                   "--register-webhooks",
                                   "--early-webhook-enabled",
                                   "--kai-queues",
                                   // The demo's reactive policy looks every 10 s (1m at the engine's default).
                                   "--reactive-check-interval",
                                   "10s",
                                   "--metrics-bind-address",
                                   "127.0.0.1:" + std::to_string(metrics_port_),
                                   "--health-probe-bind-address",
                                   "127.0.0.1:" + std::to_string(health_port_)};
  if (auto r = engine_.start(args, engine_log_); !r)
    return fail("starting kubex engine", r.error().str(), engine_log_);
  std::string why = wait_until(
      intr_, "kubex engine (webhooks registered, KAI queues, webhook health probe)", seconds(60),
      [&]() -> std::string {
        int status = 0;
        http_get(health_port_, "/readyz", &status);
        if (status != 200) return "the engine is not ready (/readyz)";
        for (const char* cfg :
             {"000-kubex-mutating-webhook-configuration", "zzz-kubex-mutating-webhook-configuration"}) {
          if (apply
                  .get(cluster::group_path("admissionregistration.k8s.io/v1", "mutatingwebhookconfigurations",
                                           "", cfg))
                  .is_null()) {
            return std::string("MutatingWebhookConfiguration ") + cfg + " is not registered";
          }
        }
        if (apply.get(cluster::group_path("scheduling.run.ai/v2", "queues", "", "kubex-unlimited-gpu-queue"))
                .is_null()) {
          return "Queue kubex-unlimited-gpu-queue does not exist";
        }
        json gc = apply.get(cluster::group_path("rightsizing.kubex.ai/v1alpha1", "globalconfigurations", "",
                                                "global-config"));
        const json* healthy = condition(gc, "PodAdmissionWebhookHealthy");
        if (!healthy || healthy->value("status", "") != "True")
          return "PodAdmissionWebhookHealthy is not True";
        return "";
      },
      &engine_);
  if (!why.empty()) return give_up("starting kubex engine", why, engine_log_);
  say("4. kubex engine is running: early (000-) and late (zzz-) pod webhooks registered, KAI queues "
      "created,");
  say("   PodAdmissionWebhookHealthy=True");
  return std::nullopt;
}

// 5. The guide's starter example and the demo's policies; once kubex reports them resolved (it has them in
// its caches), the workloads: a pod is sized when it is created.
std::optional<int> Demo::apply_examples() {
  Applier& apply = *apply_;
  double requested_before = 0;
  int step = 5;
  std::vector<std::pair<std::string, std::string>> policies;  // (plural, name) of the rightsizing policies
  for (const char* path : {kStarterExample, kDemoPolicies, kDemoWorkloads}) {
    const std::string* text = embedded(path);
    if (!text) {
      shutdown();
      return fail("applying the examples", std::string(path) + " is not compiled into this kubex-sim", "");
    }
    if (path == std::string(kDemoWorkloads)) {
      std::string why = wait_until(
          intr_, "kubex to resolve the policies", seconds(60),
          [&]() -> std::string {
            for (const auto& [plural, name] : policies) {
              json p = apply.get(cluster::group_path("rightsizing.kubex.ai/v1alpha1", plural, "", name));
              const json* c = condition(p, "AutomationStrategyResolved");
              if (!c || c->value("status", "") != "True") return plural + "/" + name + " is not resolved yet";
            }
            return "";
          },
          &engine_);
      if (!why.empty()) return give_up("waiting for the policies", why, engine_log_);
    }
    if (auto r = apply.apply_yaml(path, *text); !r) {
      shutdown();
      return fail("applying " + std::string(path), r.error().str(), engine_log_);
    }
    auto docs = common::yaml_to_json_documents(*text);
    for (const auto& d : docs ? *docs : std::vector<json>{}) {
      if (!d.is_object()) continue;
      std::string kind = d.value("kind", "");
      if (kind.find("Policy") != std::string::npos &&
          d.value("apiVersion", "").rfind("rightsizing.kubex.ai/", 0) == 0) {
        std::string plural = kind;
        for (auto& ch : plural) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        policies.emplace_back(plural.substr(0, plural.size() - 1) + "ies", d["metadata"].value("name", ""));
      }
      if (auto w = written_workload(d)) {
        requested_before += w->gpus();
        expected_pods_ += static_cast<std::size_t>(w->replicas);
        written_.push_back(*w);
      }
    }
    say(std::to_string(step++) + ". applied " + path);
  }
  say("   the workloads ask for " + format_gpus(requested_before) + " GPUs as written");
  say("");
  return std::nullopt;
}

std::optional<int> Demo::watch(const std::string& step, std::chrono::seconds hold, View view, const Tick& tick,
                                bool& done) {
  done = false;
  const bool tty = isatty(STDOUT_FILENO);
  std::string last;
  const auto deadline = Clock::now() + o_.timeout;
  auto held_since = Clock::time_point::max();
  while (Clock::now() < deadline) {
    if (!engine_.running()) {
      shutdown();
      return fail(step, "kubex engine exited (code " + std::to_string(engine_.exit_code()) + ")", engine_log_);
    }
    rows_ = pod_rows(apply_->get(cluster::core_path("pods", "")), "kai-resource-reservation");
    if (view.eviction_notes) attach_notes(rows_, eviction_notes(apply_->get(cluster::core_path("events", ""))));
    live_view(rows_, last, tty, gpus_,
              view.nodes ? render_nodes(apply_->get(cluster::core_path("nodes", "")), rows_) : "");
    auto holds = tick();
    if (!holds) return give_up(step, holds.error(), "");
    if (!*holds) {
      held_since = Clock::time_point::max();
    } else if (held_since == Clock::time_point::max()) {
      held_since = Clock::now();
    }
    if (*holds && Clock::now() - held_since >= hold) {
      done = true;
      return std::nullopt;
    }
    if (!intr_.sleep(milliseconds(1000))) {
      shutdown();
      say("\ninterrupted; everything stopped");
      return 130;
    }
  }
  return std::nullopt;
}

// Act 1: live view until every GPU pod runs (and stays so for a few seconds), or the timeout.
std::optional<int> Demo::watch_workloads() {
  return watch("running the workloads", seconds(3), View{}, [this]() -> std::expected<bool, std::string> {
    std::size_t running = 0, pending = 0;
    for (const auto& r : rows_) {
      if (r.status == "Running") ++running;
      if (r.status != "Running" && r.status != "Terminating") ++pending;
    }
    return running >= expected_pods_ && pending == 0;
  }, settled_);
}

// Act 2, the loop: chat-vllm's demand steps up (its usage pattern), the demo's reactive policy raises its GPU
// fraction, and the engine replaces its pods one at a time; the live view says why each pod is being replaced.
std::optional<int> Demo::watch_resize() {
  if (!settled_) return std::nullopt;
  say("");
  say("Act 2: chat-vllm's GPU demand steps up from 25 % to 45 % of a GPU (usage pattern steps(25, 45@10s));");
  say("   the reactive policy demo-reactive raises its fraction and kubex replaces its pods one at a time");
  return watch("resizing chat-vllm", seconds(5), View{.eviction_notes = true},
               [this]() -> std::expected<bool, std::string> { return resize_applied(); }, resized_);
}

// chat-vllm carries a reactive recommendation above its static 0.4, and every one of its pods runs with it.
bool Demo::resize_applied() {
  json d = apply_->get(cluster::group_path("apps/v1", "deployments", "ml-inference") + "/chat-vllm");
  const json ann = d.contains("metadata") ? d["metadata"].value("annotations", json::object()) : json::object();
  auto it = ann.find("cwgpureactive.rightsizing.kubex.ai/desired-resource-requests");
  if (it == ann.end() || !it->is_string()) return false;
  json desired = json::parse(it->get<std::string>(), nullptr, false);
  if (!desired.is_object() || !desired.contains("vllm") || !desired["vllm"].contains("gpu")) return false;
  std::string gpu = desired["vllm"]["gpu"].is_string() ? desired["vllm"]["gpu"].get<std::string>() : "";
  int running = 0;
  for (const auto& r : rows_) {
    if (r.owner != "Deployment/chat-vllm") continue;
    if (r.status != "Running" || format_gpus(r.gpus) != gpu) return false;
    ++running;
  }
  resized_to_ = gpu;
  return running == 2 && gpu != "0.4";
}

// Act 3, consolidation: traffic drops and chat-vllm scales in to one replica, which leaves a T4 node under-used;
// the guide's GpuConsolidationPolicy (examples/gpu-consolidation.yaml, requeueAfter shortened to 10s) taints it and
// evicts its GPU pods, which KAI packs onto the other node: one GPU node fewer in use.
std::optional<int> Demo::watch_consolidation() {
  if (!resized_) return std::nullopt;
  Applier& apply = *apply_;
  say("");
  say("Act 3: traffic drops and chat-vllm scales in to one replica; the guide's GpuConsolidationPolicy (75 %, every");
  say("   10 s here) drains an under-used T4 node once every pod on it fits on another node");
  const std::string deploy = cluster::group_path("apps/v1", "deployments", "ml-inference") + "/chat-vllm";
  json d = apply.get(deploy);
  if (d.is_object() && d.contains("spec")) {
    d["spec"]["replicas"] = 1;
    d["metadata"].erase("resourceVersion");  // Applier::apply creates first, then updates at the current version
    if (auto r = apply.apply(d); !r) return give_up("scaling chat-vllm in", r.error().str(), "");
  }
  const std::string* text = embedded("examples/gpu-consolidation.yaml");
  if (!text) return give_up("applying the consolidation policy", "it is not compiled into this kubex-sim", "");
  auto docs = common::yaml_to_json_documents(*text);
  if (!docs || docs->empty()) return give_up("applying the consolidation policy", "it holds no object", "");
  json policy = (*docs)[0];
  policy["spec"]["requeueAfter"] = "10s";
  const std::string policy_path =
      cluster::group_path("rightsizing.kubex.ai/v1alpha1", "gpuconsolidationpolicies", "") + "/" +
      policy["metadata"].value("name", "");
  bool applied = false;
  // Once the scale-in has settled the policy is applied; the act ends when it has drained a node and the pods run.
  auto drained = [&]() -> std::expected<bool, std::string> {
    bool settled = std::all_of(rows_.begin(), rows_.end(), [](const PodRow& r) { return r.status == "Running"; });
    if (!applied && settled && rows_.size() + 1 == expected_pods_) {
      nodes_before_ = gpu_nodes_in_use(rows_);
      if (auto r = apply.apply(policy); !r) {
        return std::unexpected("applying the consolidation policy: " + r.error().str());
      }
      applied = true;
    }
    json st = applied ? apply.get(policy_path).value("status", json::object()) : json::object();
    drained_node_ = st.value("lastDrainedNode", "");
    return applied && settled && !drained_node_.empty() && st.value("drainingNode", "").empty();
  };
  auto code = watch("consolidating", seconds(5), View{.eviction_notes = true, .nodes = true}, drained, consolidated_);
  if (consolidated_) nodes_after_ = gpu_nodes_in_use(rows_);
  return code;
}

// Runs `kubex report` on the demo's cluster with `args`, its output in `out_path`; the exit code, or -1 when it
// could not start or did not finish within two minutes.
int Demo::kubex_report(const std::vector<std::string>& args, const std::string& out_path) {
  std::filesystem::remove(out_path);
  std::vector<std::string> argv = {kubex_, "report", "--kubeconfig", sim_->kubeconfig(), "--prometheus-url",
                                   "http://127.0.0.1:" + std::to_string(prom_port_)};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildProcess report;
  if (!report.start(argv, out_path)) return -1;
  for (int i = 0; i < 1200 && report.running(); ++i) {
    if (!intr_.sleep(milliseconds(100))) break;
  }
  if (report.running()) {
    report.stop();
    return -1;
  }
  return report.exit_code();
}

// The report is `kubex report` itself (RPT-1: GPUs as written — each template as its user wrote it, times the
// replicas running now — against held, the resizes applied by eviction), printed and written as report.html next to
// the logs; then what the demo itself watched: the resize, the evictions and the drain. With --keep-running the
// cluster stays up until Ctrl-C.
int Demo::finish() {
  say("");
  say("== kubex demo report ==");
  const std::string text = dir_ + "/report.txt", html = dir_ + "/report.html";
  const int code = kubex_report({}, text);
  auto printed = common::read_file(text);
  if (code == 0 && printed) {
    std::printf("%s", printed->c_str());
  } else {
    say("(kubex report failed with exit code " + std::to_string(code) + "; see " + text + ")");
  }
  const int html_code = kubex_report({"-o", "html", "--output-file", html}, dir_ + "/report-html.log");
  say("");
  if (!settled_)
    say("(the workloads had not all settled within " + std::to_string(o_.timeout.count()) + " s)");
  Applier& apply = *apply_;
  json events = apply.get(cluster::core_path("events", ""));
  std::printf("%s", render_evictions(eviction_counts(http_get(metrics_port_, "/metrics")), pdb_refusals(events)).c_str());
  if (resized_) say("chat-vllm was resized to " + resized_to_ + " of a GPU per pod, one pod at a time");
  if (consolidated_) {
    say("Consolidation: nodes drained: 1 (" + drained_node_ + "); GPU nodes in use: " + std::to_string(nodes_before_) +
        " -> " + std::to_string(nodes_after_));
  } else if (resized_) {
    say("(no node had been drained within " + std::to_string(o_.timeout.count()) + " s)");
  }
  if (settled_ && !resized_)
    say("(chat-vllm's pods had not all been resized within " + std::to_string(o_.timeout.count()) + " s)");
  say("");
  if (html_code == 0) {
    say("report: " + html + " (open it in a browser; `kubex report -o html` writes it for any cluster)");
  } else {
    say("(kubex report -o html failed with exit code " + std::to_string(html_code) + "; see " + dir_ +
        "/report-html.log)");
  }
  say("");
  say("logs: " + sim_log_ + ", " + engine_log_ + ", " + prom_log_);
  if (o_.keep_running) {
    say("");
    say("The cluster keeps running. Explore it with kubectl:");
    say("  export KUBECONFIG=" + sim_->kubeconfig());
    say("  kubectl get pods -A -L kai.scheduler/queue,runai-gpu-group");
    say("  kubectl get clusterautomationstrategies,clusterstaticpolicies,globalconfigurations");
    say("Prometheus: http://127.0.0.1:" + std::to_string(prom_port_) + "   (Ctrl-C stops everything)");
    intr_.wait();
  }
  shutdown();
  return settled_ && resized_ && consolidated_ && code == 0 && html_code == 0 ? 0 : 1;
}

}  // namespace

int run_demo(const DemoOptions& options) {
  std::signal(SIGPIPE, SIG_IGN);
  Demo demo(options);
  return demo.run();
}

}  // namespace kubex::sim::demo
