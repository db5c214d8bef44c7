// The peer-sized scale rig (issue 3): starts kubex-sim with bench/scale/peer.yaml, creates the workloads
// (11,500 Deployments, 11,500 StatefulSets, 2,000 CronJobs, 10 DaemonSets), waits until every pod the
// workloads ask for is Running and Ready, and reports time to settle and kubex-sim's memory and CPU.
// With --keep-running the populated simulator stays up (engine benchmarks reuse it).
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/file_io.h"
#include "common/x509.h"
#include "common/yaml.h"

extern char** environ;

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double secs_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct ProcStats {
  long rss_kib = 0, hwm_kib = 0;
  double cpu_seconds = 0;
};

ProcStats proc_stats(pid_t pid) {
  ProcStats s;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kib = std::atol(line.c_str() + 6);
    if (line.rfind("VmHWM:", 0) == 0) s.hwm_kib = std::atol(line.c_str() + 6);
  }
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto close = all.rfind(')');
  if (close != std::string::npos) {
    std::istringstream rest(all.substr(close + 2));
    std::string field;
    std::vector<std::string> f;
    while (rest >> field) f.push_back(field);
    if (f.size() > 13) {
      double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
      s.cpu_seconds = (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / ticks;
    }
  }
  return s;
}

struct Api {
  int port = 0;
  std::string ca, token;
  std::unique_ptr<httplib::SSLClient> client() const {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    auto store = kubex::common::make_store(ca);
    c->set_ca_cert_store(store->release());
    c->enable_server_certificate_verification(true);
    c->set_bearer_token_auth(token);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    c->set_read_timeout(300, 0);
    return c;
  }
};

json container(const std::string& image, bool gpu) {
  json c = {{"name", "app"},
            {"image", image},
            {"resources", {{"requests", {{"cpu", "10m"}, {"memory", "16Mi"}}}}}};
  if (gpu) c["resources"]["limits"] = {{"nvidia.com/gpu", 1}};
  return c;
}

json template_for(const std::string& app, bool gpu) {
  return {{"metadata", {{"labels", {{"app", app}}}}},
          {"spec", {{"containers", json::array({container("registry.example/" + app + ":1", gpu)})}}}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kubex-sim scale rig"};
  std::string config = "bench/scale/peer.yaml", sim_bin = "build/bin/kubex-sim", metrics_listen;
  int threads = 8;
  double timeout_s = 1800;
  bool keep_running = false;
  double scale = 1.0;
  app.add_option("--config", config, "Rig description (cluster + workloads)");
  app.add_option("--sim", sim_bin, "kubex-sim binary");
  app.add_option("--threads", threads, "Parallel creating clients");
  app.add_option("--timeout", timeout_s, "Seconds to wait for the cluster to settle");
  app.add_option("--scale", scale, "Multiply workload counts (e.g. 0.1 for a quick run)");
  app.add_flag("--keep-running", keep_running, "Leave the populated simulator running");
  app.add_option("--metrics-listen", metrics_listen,
                 "HOST:PORT of kubex-sim's GPU metrics exporter (default: none; bench/scale/everything_on.py sets one "
                 "for its Prometheus)");
  CLI11_PARSE(app, argc, argv);

  auto text = kubex::common::read_file(config);
  if (!text) {
    std::fprintf(stderr, "bench-scale: %s\n", text.error().str().c_str());
    return 2;
  }
  auto doc = kubex::common::yaml_to_json(*text);
  if (!doc) {
    std::fprintf(stderr, "bench-scale: %s\n", doc.error().str().c_str());
    return 2;
  }
  json w = doc->value("workloads", json::object());
  auto count = [&](const char* k, int def) { return static_cast<int>(w.value(k, def) * scale + 0.5); };
  int namespaces = std::max(1, count("namespaces", 100));
  int deployments = count("deployments", 0), statefulsets = count("statefulSets", 0), cronjobs = count("cronJobs", 0);
  int daemonsets = w.value("daemonSets", 0);
  int gpu_every = w.value("gpuEvery", 0);
  std::string schedule = w.value("cronSchedule", "*/10 * * * *");
  int nodes = 0;
  for (const auto& p : doc->value("nodePools", json::array())) nodes += p.value("count", 1);
  nodes = static_cast<int>(nodes);

  fs::path dir = fs::temp_directory_path() / ("kubex-scale-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string ready_file = (dir / "ready").string();
  std::string cmd = sim_bin + " serve --config " + config + " --data-dir " + (dir / "data").string() +
                    " --metrics-listen '" + metrics_listen + "' --watch-cache-size 200000 > " + ready_file + " 2> " + (dir / "sim.log").string();
  pid_t pid = 0;
  const char* sh_argv[] = {"/bin/sh", "-c", cmd.c_str(), nullptr};
  auto t_start = Clock::now();
  if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char* const*>(sh_argv), environ) != 0) {
    std::fprintf(stderr, "bench-scale: cannot start %s\n", sim_bin.c_str());
    return 1;
  }
  std::string ready;
  while (secs_since(t_start) < 60) {
    auto r = kubex::common::read_file(ready_file);
    if (r && r->find("kubex-sim ready") != std::string::npos) {
      ready = *r;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (ready.empty()) {
    std::fprintf(stderr, "bench-scale: kubex-sim did not start; see %s\n", (dir / "sim.log").c_str());
    kill(pid, SIGTERM);
    return 1;
  }
  double t_ready = secs_since(t_start);
  // The shell's child is kubex-sim; find it for /proc stats.
  pid_t sim_pid = pid;
  {
    std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
    pid_t c = 0;
    if (children >> c) sim_pid = c;
  }
  Api api;
  auto url_pos = ready.find("url=https://127.0.0.1:");
  api.port = std::atoi(ready.c_str() + url_pos + 22);
  api.ca = *kubex::common::read_file((dir / "data/ca.crt").string());
  api.token = *kubex::common::read_file((dir / "data/token").string());

  std::printf("## Scale rig: %d nodes, %d Deployments, %d StatefulSets, %d CronJobs, %d DaemonSets\n\n", nodes,
              deployments, statefulsets, cronjobs, daemonsets);
  std::printf("| step | result |\n|---|---|\n");
  std::printf("| kubex-sim up with %d nodes | %.1f s |\n", nodes, t_ready);

  // Workload objects, created by `threads` parallel clients.
  std::vector<std::pair<std::string, json>> objects;
  for (int n = 0; n < namespaces; ++n) {
    objects.push_back({"/api/v1/namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"},
                                              {"metadata", {{"name", "rig-" + std::to_string(n)}}}}});
  }
  std::size_t namespace_objects = objects.size();
  auto ns_of = [&](int i) { return "rig-" + std::to_string(i % namespaces); };
  for (int i = 0; i < deployments; ++i) {
    std::string name = "deploy-" + std::to_string(i);
    bool gpu = gpu_every > 0 && i % gpu_every == 0;
    json d = {{"apiVersion", "apps/v1"},
              {"kind", "Deployment"},
              {"metadata", {{"name", name}, {"labels", {{"app", name}}}}},
              {"spec", {{"replicas", 1}, {"selector", {{"matchLabels", {{"app", name}}}}}, {"template", template_for(name, gpu)}}}};
    if (gpu) d["metadata"]["labels"]["nvidia.com/gpu.present"] = "true";
    objects.push_back({"/apis/apps/v1/namespaces/" + ns_of(i) + "/deployments", d});
  }
  for (int i = 0; i < statefulsets; ++i) {
    std::string name = "sts-" + std::to_string(i);
    objects.push_back({"/apis/apps/v1/namespaces/" + ns_of(i) + "/statefulsets",
                       {{"apiVersion", "apps/v1"},
                        {"kind", "StatefulSet"},
                        {"metadata", {{"name", name}}},
                        {"spec", {{"replicas", 1}, {"serviceName", name}, {"selector", {{"matchLabels", {{"app", name}}}}},
                                  {"template", template_for(name, false)}}}}});
  }
  for (int i = 0; i < cronjobs; ++i) {
    std::string name = "cron-" + std::to_string(i);
    json t = template_for(name, false);
    t["spec"]["restartPolicy"] = "Never";
    objects.push_back({"/apis/batch/v1/namespaces/" + ns_of(i) + "/cronjobs",
                       {{"apiVersion", "batch/v1"},
                        {"kind", "CronJob"},
                        {"metadata", {{"name", name}}},
                        {"spec", {{"schedule", schedule}, {"jobTemplate", {{"spec", {{"template", t}}}}}}}}});
  }
  for (int i = 0; i < daemonsets; ++i) {
    std::string name = "ds-" + std::to_string(i);
    objects.push_back({"/apis/apps/v1/namespaces/" + ns_of(i) + "/daemonsets",
                       {{"apiVersion", "apps/v1"},
                        {"kind", "DaemonSet"},
                        {"metadata", {{"name", name}}},
                        {"spec", {{"selector", {{"matchLabels", {{"app", name}}}}}, {"template", template_for(name, false)}}}}});
  }
  auto t_create = Clock::now();
  std::atomic<std::size_t> next{0};
  std::atomic<int> failed{0};
  auto worker = [&](std::size_t end) {
    auto c = api.client();
    for (std::size_t i = next++; i < end; i = next++) {
      auto res = c->Post(objects[i].first, objects[i].second.dump(), "application/json");
      if (!res || (res->status != 201 && res->status != 409)) ++failed;
    }
  };
  worker(namespace_objects);  // namespaces first, serially
  next = namespace_objects;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back(worker, objects.size());
  for (auto& t : ts) t.join();
  double created_s = secs_since(t_create);
  std::printf("| create %zu workload objects (%d clients) | %.1f s, %d failed |\n", objects.size() - namespace_objects,
              threads, created_s, failed.load());

  // Settled: every pod the long-running workloads ask for is Running and Ready.
  long expected = deployments + statefulsets + static_cast<long>(daemonsets) * nodes;
  auto c = api.client();
  long ready_pods = 0, total_pods = 0;
  double settled = -1;
  ProcStats peak;
  while (secs_since(t_create) < timeout_s) {
    ready_pods = total_pods = 0;
    std::string cont;
    do {
      auto res = c->Get("/api/v1/pods?limit=2000" + (cont.empty() ? "" : "&continue=" + httplib::detail::encode_query_param(cont)));
      if (!res || res->status != 200) break;
      json page = json::parse(res->body, nullptr, false);
      if (page.is_discarded()) break;
      for (const auto& p : page["items"]) {
        if (p["metadata"].value("namespace", "").rfind("rig-", 0) != 0) continue;
        ++total_pods;
        bool is_ready = false;
        for (const auto& cond : p["status"].value("conditions", json::array())) {
          if (cond.value("type", "") == "Ready" && cond.value("status", "") == "True") is_ready = true;
        }
        if (is_ready && p["status"].value("phase", "") == "Running" && p["metadata"]["labels"].value("job-name", "").empty()) {
          ++ready_pods;
        }
      }
      cont = page["metadata"].value("continue", "");
    } while (!cont.empty());
    ProcStats now = proc_stats(sim_pid);
    peak.hwm_kib = std::max(peak.hwm_kib, now.hwm_kib);
    std::fprintf(stderr, "[%6.0f s] %ld/%ld long-running pods ready, %ld pods total, sim RSS %.0f MiB\n",
                 secs_since(t_create), ready_pods, expected, total_pods, now.rss_kib / 1024.0);
    if (ready_pods >= expected) {
      settled = secs_since(t_create);
      break;
    }
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
  ProcStats at_settle = proc_stats(sim_pid);
  if (settled < 0) {
    std::printf("| settle | NOT settled within %.0f s: %ld/%ld long-running pods ready |\n", timeout_s, ready_pods,
                expected);
  } else {
    std::printf("| time to settle (all %ld long-running pods Running+Ready, from the first create) | %.1f s |\n",
                expected, settled);
  }
  std::printf("| live pods at settle (incl. CronJob pods) | %ld |\n", total_pods);
  std::printf("| kubex-sim RSS at settle / peak | %.0f MiB / %.0f MiB |\n", at_settle.rss_kib / 1024.0,
              at_settle.hwm_kib / 1024.0);
  std::printf("| kubex-sim CPU time to settle | %.1f s |\n", at_settle.cpu_seconds);
  // Steady state: CPU over an idle minute.
  if (settled >= 0 && !keep_running) {
    double cpu0 = proc_stats(sim_pid).cpu_seconds;
    std::this_thread::sleep_for(std::chrono::seconds(60));
    double cpu1 = proc_stats(sim_pid).cpu_seconds;
    std::printf("| kubex-sim CPU while idle (60 s after settling) | %.2f cores |\n", (cpu1 - cpu0) / 60.0);
  }
  if (keep_running) {
    std::printf("\nkubex-sim keeps running (pid %d); kubeconfig: %s\n", sim_pid, (dir / "data/kubeconfig").c_str());
    return 0;
  }
  kill(sim_pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
  std::error_code ec;
  fs::remove_all(dir, ec);
  return settled < 0 ? 1 : 0;
}
