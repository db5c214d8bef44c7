// The workload controllers end to end inside one process: the real API server pipeline, the ClusterContext
// caches and feeds, a FakeClock, and no scheduler or kubelet (pods are moved through their phases by the
// test).
#include <gtest/gtest.h>

#include "sim/cluster/workload_common.h"
#include "sim/cluster/workload_cronjob.h"
#include "workload_harness.h"

namespace kubex::sim::cluster {
namespace {

using nlohmann::json;
using testing::Harness;

const std::string kNs = "default";

json pod_template(const std::string& app, const std::string& image = "busybox:1.36") {
  return {{"metadata", {{"labels", {{"app", app}}}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", image}}}}}}};
}

json deployment(const std::string& name, int replicas, json strategy = nullptr) {
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"replicas", replicas},
              {"selector", {{"matchLabels", {{"app", name}}}}},
              {"template", pod_template(name)}}}};
  if (!strategy.is_null()) d["spec"]["strategy"] = strategy;
  return d;
}

std::string deployments() {
  return group_path("apps/v1", "deployments", kNs);
}
std::string replicasets() {
  return group_path("apps/v1", "replicasets", kNs);
}
std::string pods() {
  return core_path("pods", kNs);
}

// Marks every pod of `selector` that is not yet ready as Running and Ready (the kubelet's job).
void ready_all(const Harness& h, const std::string& selector) {
  for (const auto& p : h.list(pods(), selector)) {
    if (p["metadata"].contains("deletionTimestamp")) continue;
    if (p["status"].value("phase", "") == "Running") continue;
    // Like the kubelet, tolerate a pod the controllers deleted between the LIST and this status write.
    std::string name = p["metadata"]["name"];
    auto r = h.client().merge_patch(
        core_path("pods", kNs, name) + "/status",
        {{"status", {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
    EXPECT_TRUE(r.ok() || r.status == 404) << name << ": " << r.body;
  }
}

std::size_t live_pods(const Harness& h, const std::string& selector) {
  std::size_t n = 0;
  for (const auto& p : h.list(pods(), selector)) n += p["metadata"].contains("deletionTimestamp") ? 0 : 1;
  return n;
}

TEST(WorkloadControllers, DeploymentCreatesReplicaSetAndPodsWithOwners) {
  Harness h;
  json d = h.create(deployments(), deployment("web", 3));
  ASSERT_TRUE(
      Harness::eventually([&] { return h.list(replicasets()).size() == 1 && live_pods(h, "app=web") == 3; }));
  json rs = h.list(replicasets())[0];
  std::string hash = rs["metadata"]["labels"][kPodTemplateHashLabel];
  EXPECT_EQ(rs["metadata"]["name"], "web-" + hash);
  EXPECT_EQ(rs["spec"]["selector"]["matchLabels"][kPodTemplateHashLabel], hash);
  EXPECT_EQ(rs["metadata"]["annotations"][kRevisionAnnotation], "1");
  const json& owner = rs["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Deployment");
  EXPECT_EQ(owner["uid"], d["metadata"]["uid"]);
  EXPECT_TRUE(owner["controller"].get<bool>() && owner["blockOwnerDeletion"].get<bool>());
  for (const auto& p : h.list(pods(), "app=web")) {
    EXPECT_EQ(p["metadata"]["ownerReferences"][0]["uid"], rs["metadata"]["uid"]);
    EXPECT_EQ(p["metadata"]["labels"][kPodTemplateHashLabel], hash);
    EXPECT_EQ(p["metadata"]["name"].get<std::string>().rfind("web-" + hash + "-", 0), 0u);
  }
  // Status: nothing ready yet, so not Available; all ready -> Available and the rollout complete.
  ASSERT_TRUE(Harness::eventually([&] {
    json s = h.get(deployments() + "/web")["status"];
    return s.value("updatedReplicas", 0) == 3 && s.value("observedGeneration", 0) == 1;
  }));
  EXPECT_EQ(h.get(deployments() + "/web")["metadata"]["annotations"][kRevisionAnnotation], "1");
  ready_all(h, "app=web");
  ASSERT_TRUE(Harness::eventually([&] {
    json s = h.get(deployments() + "/web")["status"];
    const json* avail = find_condition(s["conditions"], "Available");
    const json* prog = find_condition(s["conditions"], "Progressing");
    return s.value("availableReplicas", 0) == 3 && avail && (*avail)["status"] == "True" && prog &&
           (*prog)["reason"] == "NewReplicaSetAvailable";
  })) << h.get(deployments() + "/web")["status"].dump();
}

TEST(WorkloadControllers, ScalingAndPodReplacement) {
  Harness h;
  h.create(deployments(), deployment("api", 2));
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=api") == 2; }));
  h.patch(deployments() + "/api", {{"spec", {{"replicas", 5}}}});
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=api") == 5; }));
  // One pod ready: scaling down removes the not-ready ones first.
  std::string keep = h.list(pods(), "app=api")[0]["metadata"]["name"];
  h.make_ready(kNs, keep);
  h.patch(deployments() + "/api", {{"spec", {{"replicas", 1}}}});
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=api") == 1; }));
  EXPECT_EQ(h.list(pods(), "app=api")[0]["metadata"]["name"], keep);
  // A deleted pod is replaced; a Failed one too (and is not counted).
  ASSERT_TRUE(h.client().remove(core_path("pods", kNs, keep)).ok());
  ASSERT_TRUE(Harness::eventually([&] {
    auto items = h.list(pods(), "app=api");
    return items.size() == 1 && items[0]["metadata"]["name"] != keep;
  }));
  std::string second = h.list(pods(), "app=api")[0]["metadata"]["name"];
  h.set_phase(kNs, second, "Failed");
  ASSERT_TRUE(Harness::eventually([&] {
    std::size_t pending = 0;
    for (const auto& p : h.list(pods(), "app=api")) pending += p["status"]["phase"] == "Pending" ? 1 : 0;
    return pending == 1;
  }));
  EXPECT_EQ(h.list(pods(), "app=api").size(), 2u);  // the Failed pod stays until garbage collected
}

TEST(WorkloadControllers, RollingUpdateHonoursSurgeAndUnavailable) {
  Harness h;
  json strategy = {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 1}, {"maxUnavailable", 0}}}};
  h.create(deployments(), deployment("roll", 3, strategy));
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=roll") == 3; }));
  ready_all(h, "app=roll");
  std::string old_rs = h.list(replicasets())[0]["metadata"]["name"];
  h.patch(deployments() + "/roll", {{"spec", {{"template", pod_template("roll", "busybox:1.37")}}}});
  // maxSurge 1, maxUnavailable 0: one new pod, old set untouched until it is ready.
  ASSERT_TRUE(Harness::eventually(
      [&] { return h.list(replicasets()).size() == 2 && live_pods(h, "app=roll") == 4; }));
  ASSERT_TRUE(h.settled());
  EXPECT_EQ(live_pods(h, "app=roll"), 4u) << "never more than replicas + maxSurge";
  EXPECT_EQ(h.get(replicasets() + "/" + old_rs)["spec"]["replicas"], 3);
  // Drive the rollout like a kubelet would: ready every new pod, and watch the bound all along. The bound is the
  // deployment controller's, as in Kubernetes: the ReplicaSets' spec.replicas add up to at most replicas + maxSurge.
  // Pods may lag it for an instant (a ReplicaSet scaled down has not deleted its pod yet while the new one has
  // created its own), as they may in a real cluster; once settled, the pods match it (above).
  auto rs_total = [&] {
    std::int64_t n = 0;
    for (const auto& rs : h.list(replicasets())) n += rs["spec"].value("replicas", 0);
    return n;
  };
  ASSERT_TRUE(Harness::eventually(
      [&] {
        ready_all(h, "app=roll");
        EXPECT_LE(rs_total(), 4);
        json s = h.get(deployments() + "/roll")["status"];
        return h.get(replicasets() + "/" + old_rs)["spec"]["replicas"] == 0 &&
               s.value("updatedReplicas", 0) == 3 && s.value("availableReplicas", 0) == 3 &&
               live_pods(h, "app=roll") == 3;
      },
      std::chrono::seconds(30)));
  json d = h.get(deployments() + "/roll");
  EXPECT_EQ(d["metadata"]["annotations"][kRevisionAnnotation], "2");
  // Rolling back to the first template reuses the old ReplicaSet with a new revision.
  h.patch(deployments() + "/roll", {{"spec", {{"template", pod_template("roll")}}}});
  ASSERT_TRUE(Harness::eventually(
      [&] {
        ready_all(h, "app=roll");
        json rs = h.get(replicasets() + "/" + old_rs);
        return rs["spec"]["replicas"] == 3 && rs["metadata"]["annotations"][kRevisionAnnotation] == "3";
      },
      std::chrono::seconds(30)));
  EXPECT_EQ(h.list(replicasets()).size(), 2u);
}

TEST(WorkloadControllers, RecreateStopsOldPodsFirstAndHistoryIsPruned) {
  Harness h;
  json d = deployment("rec", 2, {{"type", "Recreate"}});
  d["spec"]["revisionHistoryLimit"] = 1;
  h.create(deployments(), d);
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=rec") == 2; }));
  for (const char* image : {"busybox:2", "busybox:3", "busybox:4"}) {
    h.patch(deployments() + "/rec", {{"spec", {{"template", pod_template("rec", image)}}}});
    ASSERT_TRUE(Harness::eventually([&] {
      ready_all(h, "app=rec");
      auto items = h.list(pods(), "app=rec");
      if (items.size() != 2) return false;
      for (const auto& p : items) {
        if (p["spec"]["containers"][0]["image"] != image) return false;
      }
      return true;
    })) << image;
  }
  // Current + revisionHistoryLimit old ReplicaSets remain.
  ASSERT_TRUE(Harness::eventually([&] {
    ready_all(h, "app=rec");
    return h.list(replicasets()).size() == 2;
  })) << h.list(replicasets()).size();
}

TEST(WorkloadControllers, StatefulSetOrderedReadyAndStableNames) {
  Harness h;
  h.create(group_path("apps/v1", "statefulsets", kNs), {{"apiVersion", "apps/v1"},
                                                        {"kind", "StatefulSet"},
                                                        {"metadata", {{"name", "db"}}},
                                                        {"spec",
                                                         {{"replicas", 3},
                                                          {"serviceName", "db"},
                                                          {"selector", {{"matchLabels", {{"app", "db"}}}}},
                                                          {"template", pod_template("db")}}}});
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=db") == 1; }));
  ASSERT_TRUE(h.settled());
  ASSERT_EQ(live_pods(h, "app=db"), 1u) << "db-1 must wait for db-0 to be Running and Ready";
  json p0 = h.get(core_path("pods", kNs, "db-0"));
  EXPECT_EQ(p0["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"], "db-0");
  EXPECT_EQ(p0["metadata"]["labels"]["apps.kubernetes.io/pod-index"], "0");
  EXPECT_EQ(p0["spec"]["hostname"], "db-0");
  EXPECT_EQ(p0["spec"]["subdomain"], "db");
  h.make_ready(kNs, "db-0");
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=db") == 2; }));
  h.make_ready(kNs, "db-1");
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=db") == 3; }));
  h.make_ready(kNs, "db-2");
  // A deleted pod comes back under the same name.
  std::string uid = h.get(core_path("pods", kNs, "db-1"))["metadata"]["uid"];
  ASSERT_TRUE(h.client().remove(core_path("pods", kNs, "db-1")).ok());
  ASSERT_TRUE(Harness::eventually([&] {
    json p = h.get(core_path("pods", kNs, "db-1"));
    return p.is_object() && p["metadata"]["uid"] != uid;
  }));
  h.make_ready(kNs, "db-1");
  ASSERT_TRUE(Harness::eventually([&] {
    json s = h.get(group_path("apps/v1", "statefulsets", kNs, "db"))["status"];
    return s.value("readyReplicas", 0) == 3 &&
           s.value("currentRevision", "") == s.value("updateRevision", "x");
  }));
  // Scale down removes the highest ordinal.
  h.patch(group_path("apps/v1", "statefulsets", kNs, "db"), {{"spec", {{"replicas", 2}}}});
  ASSERT_TRUE(Harness::eventually([&] { return !h.get(core_path("pods", kNs, "db-2")).is_object(); }));
  EXPECT_TRUE(h.get(core_path("pods", kNs, "db-0")).is_object());
}

TEST(WorkloadControllers, JobRunsToCompletionAndBackoffFails) {
  Harness h;
  auto job = [](const std::string& name, int completions, int backoff) {
    json t = pod_template(name);
    t["spec"]["restartPolicy"] = "Never";
    return json{
        {"apiVersion", "batch/v1"},
        {"kind", "Job"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"completions", completions}, {"parallelism", 1}, {"backoffLimit", backoff}, {"template", t}}}};
  };
  std::string jobs = group_path("batch/v1", "jobs", kNs);
  json created = h.create(jobs, job("once", 2, 6));
  std::string uid = created["metadata"]["uid"];
  ASSERT_TRUE(Harness::eventually([&] { return h.list(pods(), "job-name=once").size() == 1; }));
  json p = h.list(pods(), "job-name=once")[0];
  EXPECT_EQ(p["metadata"]["labels"]["batch.kubernetes.io/controller-uid"], uid);
  EXPECT_EQ(p["metadata"]["labels"]["controller-uid"], uid);
  EXPECT_EQ(p["metadata"]["labels"]["batch.kubernetes.io/job-name"], "once");
  h.set_phase(kNs, p["metadata"]["name"], "Succeeded");
  ASSERT_TRUE(Harness::eventually([&] { return h.list(pods(), "job-name=once").size() == 2; }));
  for (const auto& q : h.list(pods(), "job-name=once")) {
    if (q["status"]["phase"] == "Pending") h.set_phase(kNs, q["metadata"]["name"], "Succeeded");
  }
  ASSERT_TRUE(Harness::eventually([&] {
    json s = h.get(jobs + "/once")["status"];
    const json* c = find_condition(s["conditions"], "Complete");
    return c && (*c)["status"] == "True" && s.value("succeeded", 0) == 2 && s.contains("completionTime") &&
           find_condition(s["conditions"], "SuccessCriteriaMet");
  })) << h.get(jobs + "/once")["status"].dump();

  h.create(jobs, job("flaky", 1, 1));
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(Harness::eventually([&] {
      for (const auto& q : h.list(pods(), "job-name=flaky")) {
        if (q["status"]["phase"] == "Pending") return true;
      }
      return false;
    }));
    for (const auto& q : h.list(pods(), "job-name=flaky")) {
      if (q["status"]["phase"] == "Pending") h.set_phase(kNs, q["metadata"]["name"], "Failed");
    }
  }
  ASSERT_TRUE(Harness::eventually([&] {
    json s = h.get(jobs + "/flaky")["status"];
    const json* c = find_condition(s["conditions"], "Failed");
    return c && (*c)["reason"] == "BackoffLimitExceeded";
  }));
  EXPECT_EQ(h.list(pods(), "job-name=flaky").size(), 2u) << "no pod after the backoff limit";
}

TEST(WorkloadControllers, CronJobFollowsTheInjectedClock) {
  Harness h;
  using namespace std::chrono;
  h.clock.set(common::TimePoint{sys_days{year{2026} / 3 / 15}} + hours(10) + seconds(5));
  std::string cronjobs = group_path("batch/v1", "cronjobs", kNs), jobs = group_path("batch/v1", "jobs", kNs);
  json t = pod_template("tick");
  t["spec"]["restartPolicy"] = "OnFailure";
  h.create(
      cronjobs,
      {{"apiVersion", "batch/v1"},
       {"kind", "CronJob"},
       {"metadata", {{"name", "tick"}}},
       {"spec",
        {{"schedule", "*/5 * * * *"},
         {"concurrencyPolicy", "Forbid"},
         {"jobTemplate", {{"metadata", {{"labels", {{"from", "tick"}}}}}, {"spec", {{"template", t}}}}}}}});
  auto touch = [&](int n) {  // enqueue the CronJob (the real-time requeue would wait for the real minute)
    h.patch(cronjobs + "/tick", {{"metadata", {{"annotations", {{"touch", std::to_string(n)}}}}}});
  };
  ASSERT_TRUE(h.settled());
  EXPECT_TRUE(h.list(jobs).empty()) << "nothing due before 10:05";
  h.clock.set(common::TimePoint{sys_days{year{2026} / 3 / 15}} + hours(10) + minutes(5) + seconds(1));
  touch(1);
  std::string first = cronjob_job_name("tick", sys_days{year{2026} / 3 / 15} + hours(10) + minutes(5));
  ASSERT_TRUE(Harness::eventually([&] { return h.list(jobs).size() == 1; }));
  json job = h.list(jobs)[0];
  EXPECT_EQ(job["metadata"]["name"], first);
  EXPECT_EQ(job["metadata"]["labels"]["from"], "tick");
  EXPECT_EQ(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
  ASSERT_TRUE(Harness::eventually([&] {
    json s = h.get(cronjobs + "/tick")["status"];
    return s.value("lastScheduleTime", "") == "2026-03-15T10:05:00Z" && s["active"].size() == 1;
  }));
  // Forbid: the next run is skipped while the first is active; hours of missed runs start only the latest.
  h.clock.set(common::TimePoint{sys_days{year{2026} / 3 / 15}} + hours(10) + minutes(11));
  touch(2);
  ASSERT_TRUE(h.settled());
  EXPECT_EQ(h.list(jobs).size(), 1u);
  auto complete = [&](const std::string& job, const char* at) {
    h.patch(jobs + "/" + job + "/status",
            {{"status", {{"conditions", {{{"type", "Complete"}, {"status", "True"}}}}, {"completionTime", at}}}});
  };
  // The run Forbid held back starts as soon as the active Job finishes (still within its schedule period).
  complete(first, "2026-03-15T10:06:00Z");
  std::string held = cronjob_job_name("tick", sys_days{year{2026} / 3 / 15} + hours(10) + minutes(10));
  ASSERT_TRUE(Harness::eventually([&] { return h.get(jobs + "/" + held).is_object(); }));
  // Hours later, all the missed runs start a single Job, for the most recent time.
  h.clock.set(common::TimePoint{sys_days{year{2026} / 3 / 15}} + hours(13) + minutes(2));
  complete(held, "2026-03-15T10:12:00Z");
  std::string latest = cronjob_job_name("tick", sys_days{year{2026} / 3 / 15} + hours(13));
  ASSERT_TRUE(Harness::eventually([&] { return h.get(jobs + "/" + latest).is_object(); }))
      << h.get(cronjobs + "/tick").dump();
  ASSERT_TRUE(h.settled());
  EXPECT_EQ(h.list(jobs).size(), 3u) << "one job for any number of missed runs";
  ASSERT_TRUE(Harness::eventually([&] {
    json s = h.get(cronjobs + "/tick")["status"];
    return s.value("lastSuccessfulTime", "") == "2026-03-15T10:12:00Z" && s["active"].size() == 1 &&
           s["active"][0]["name"] == latest && s.value("lastScheduleTime", "") == "2026-03-15T13:00:00Z";
  }));
}

TEST(WorkloadControllers, DaemonSetRunsOnEligibleNodesPinnedByAffinity) {
  Harness h;
  for (auto [name, tainted] : {std::pair{"n1", false}, std::pair{"n2", true}, std::pair{"n3", false}}) {
    json node = {
        {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", {{"pool", "a"}}}}}};
    if (tainted) node["spec"]["taints"] = {{{"key", "dedicated"}, {"value", "x"}, {"effect", "NoSchedule"}}};
    h.create(core_path("nodes", ""), node);
  }
  h.create(
      group_path("apps/v1", "daemonsets", kNs),
      {{"apiVersion", "apps/v1"},
       {"kind", "DaemonSet"},
       {"metadata", {{"name", "agent"}}},
       {"spec", {{"selector", {{"matchLabels", {{"app", "agent"}}}}}, {"template", pod_template("agent")}}}});
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=agent") == 2; }));
  std::set<std::string> nodes;
  for (const auto& p : h.list(pods(), "app=agent")) {
    const json& term = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                        ["nodeSelectorTerms"][0]["matchFields"][0];
    EXPECT_EQ(term["key"], "metadata.name");
    nodes.insert(term["values"][0].get<std::string>());
    EXPECT_FALSE(p["spec"].contains("nodeName")) << "left to the scheduler";
  }
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n3"}));
  ASSERT_TRUE(Harness::eventually([&] {
    json s = h.get(group_path("apps/v1", "daemonsets", kNs, "agent"))["status"];
    return s.value("desiredNumberScheduled", 0) == 2 && s.value("currentNumberScheduled", 0) == 2;
  }));
  // A node losing its taint gets a pod; a new node too.
  h.patch(core_path("nodes", "", "n2"), {{"spec", {{"taints", nullptr}}}});
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "app=agent") == 3; }));
}

TEST(WorkloadControllers, ModelPodsOwnedByTheModel) {
  Harness h;
  std::string models = group_path("kubeai.org/v1", "models", kNs);
  json m = h.create(models, {{"apiVersion", "kubeai.org/v1"},
                             {"kind", "Model"},
                             {"metadata", {{"name", "llama"}}},
                             {"spec",
                              {{"url", "hf://meta-llama/Llama-3.1-8B"},
                               {"engine", "VLLM"},
                               {"resourceProfile", "nvidia-gpu-t4:1"},
                               {"minReplicas", 2},
                               {"args", {"--max-model-len=2048"}}}}});
  ASSERT_TRUE(Harness::eventually([&] { return live_pods(h, "model=llama") == 2; }));
  for (const auto& p : h.list(pods(), "model=llama")) {
    EXPECT_EQ(p["metadata"]["ownerReferences"][0]["kind"], "Model");
    EXPECT_EQ(p["metadata"]["ownerReferences"][0]["uid"], m["metadata"]["uid"]);
    std::string hash = p["metadata"]["labels"]["pod-hash"];
    EXPECT_EQ(p["metadata"]["name"].get<std::string>().size(),
              std::string("model-llama-").size() + 10 + 1 + 5);
    EXPECT_EQ(p["metadata"]["name"].get<std::string>().rfind("model-llama-" + hash + "-", 0), 0u);
    EXPECT_EQ(p["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1");
  }
  ASSERT_TRUE(Harness::eventually([&] {
    return h.get(models + "/llama")["status"]["replicas"] == json({{"all", 2}, {"ready", 0}});
  }));
  // A spec change rolls the pods to a new hash (pending pods are replaced at once).
  std::string old_hash = h.list(pods(), "model=llama")[0]["metadata"]["labels"]["pod-hash"];
  h.patch(models + "/llama", {{"spec", {{"args", {"--max-model-len=4096"}}}}});
  ASSERT_TRUE(Harness::eventually([&] {
    auto items = h.list(pods(), "model=llama");
    std::size_t fresh = 0;
    for (const auto& p : items) {
      if (!p["metadata"].contains("deletionTimestamp") && p["metadata"]["labels"]["pod-hash"] != old_hash)
        ++fresh;
    }
    return fresh == 2 && live_pods(h, "model=llama") == 2;
  }));
}

}  // namespace
}  // namespace kubex::sim::cluster
