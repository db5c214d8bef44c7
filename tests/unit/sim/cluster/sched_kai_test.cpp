// The KAI emulation's queue resolution (ADM-13: KAI reads kai.scheduler/queue from the pod's top owner first,
// then from the pod, then `project`, then default-queue, as its podgrouper does; SIM-9).
#include "sim/cluster/sched_kai.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

using namespace kubex::sim::cluster::sched;
using nlohmann::json;

namespace {

json ref(const std::string& api_version, const std::string& kind, const std::string& name,
         bool controller = true) {
  return {{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", name + "-uid"},
          {"controller", controller}};
}

json object(const std::string& name, const json& labels, const json& refs = json::array()) {
  json meta = {{"name", name}, {"namespace", "ml"}, {"uid", name + "-uid"}, {"labels", labels}};
  if (!refs.empty()) meta["ownerReferences"] = refs;
  return {{"metadata", meta}};
}

// A fake API: objects by "apiVersion/kind/ns/name".
struct FakeApi {
  std::map<std::string, json> objects;
  std::vector<std::string> asked;
  void put(const std::string& api_version, const std::string& kind, const json& obj) {
    objects[api_version + "/" + kind + "/ml/" + obj["metadata"]["name"].get<std::string>()] = obj;
  }
  OwnerLookup lookup() {
    return [this](const std::string& api_version, const std::string& kind, const std::string& ns,
                  const std::string& name, json& out) {
      std::string key = api_version + "/" + kind + "/" + ns + "/" + name;
      asked.push_back(key);
      auto it = objects.find(key);
      if (it == objects.end()) return false;
      out = it->second;
      return true;
    };
  }
};

const char* kQ = "kai.scheduler/queue";

json owned_by(const std::string& api_version, const std::string& kind, const std::string& name) {
  return json::array({ref(api_version, kind, name)});
}

}  // namespace

TEST(SchedKaiQueue, DeploymentLabelIsUsedWhenThePodHasNone) {
  // ADM-13: Pod -> ReplicaSet -> Deployment; only the Deployment's metadata carries the queue.
  FakeApi api;
  api.put("apps/v1", "Deployment", object("web", {{kQ, "team-a"}}));
  api.put("apps/v1", "ReplicaSet",
          object("web-1", {{"app", "web"}}, owned_by("apps/v1", "Deployment", "web")));
  json pod = object("web-1-abcde", {{"app", "web"}}, json::array({ref("apps/v1", "ReplicaSet", "web-1")}));
  EXPECT_EQ(kai_pod_queue(pod, api.lookup()), "team-a");
  EXPECT_EQ(api.asked,
            (std::vector<std::string>{"apps/v1/ReplicaSet/ml/web-1", "apps/v1/Deployment/ml/web"}));
}

TEST(SchedKaiQueue, TopOwnerWinsOverThePodAndIntermediateOwners) {
  FakeApi api;
  api.put("apps/v1", "Deployment", object("web", {{kQ, "owner-q"}}));
  api.put("apps/v1", "ReplicaSet",
          object("web-1", {{kQ, "rs-q"}}, owned_by("apps/v1", "Deployment", "web")));
  json pod = object("p", {{kQ, "pod-q"}}, json::array({ref("apps/v1", "ReplicaSet", "web-1")}));
  EXPECT_EQ(kai_pod_queue(pod, api.lookup()), "owner-q");
}

TEST(SchedKaiQueue, PodLabelIsUsedWhenTheTopOwnerHasNone) {
  FakeApi api;
  api.put("batch/v1", "Job", object("train", {{"team", "a"}}));
  json pod = object("train-x", {{kQ, "pod-q"}}, json::array({ref("batch/v1", "Job", "train")}));
  EXPECT_EQ(kai_pod_queue(pod, api.lookup()), "pod-q");
  // An intermediate owner's label is not used: KAI reads the top owner, then the pod, nothing in
  // between.
  api.put("apps/v1", "Deployment", object("web", json::object()));
  api.put("apps/v1", "ReplicaSet", object("web-1", {{kQ, "rs-q"}}, owned_by("apps/v1", "Deployment", "web")));
  json rs_pod = object("p", json::object(), json::array({ref("apps/v1", "ReplicaSet", "web-1")}));
  EXPECT_EQ(kai_pod_queue(rs_pod, api.lookup()), "default-queue");
}

TEST(SchedKaiQueue, BarePodAndMissingLabels) {
  FakeApi api;
  EXPECT_EQ(kai_pod_queue(object("p", {{kQ, "mine"}}), api.lookup()), "mine");
  EXPECT_TRUE(api.asked.empty());
  EXPECT_EQ(kai_pod_queue(object("p", json::object()), api.lookup()), "default-queue");
  EXPECT_EQ(kai_pod_queue(json::object(), api.lookup()), "default-queue");
  // A label that is present but empty names the queue "" (KAI takes a present label as it is).
  EXPECT_EQ(kai_pod_queue(object("p", {{kQ, ""}}), api.lookup()), "");
}

// SIM-9 (findings 3(e)): a kai-scheduler pod that names no queue is not refused: like KAI's podgrouper the sim puts
// it in its `project` label's queue, else in default-queue. A user sees such a pod scheduled in default-queue
// (which KAI's Helm install creates) instead of Pending with "pod has no kai.scheduler/queue label".
TEST(SchedKaiQueue, Sim9NoQueueLabelMeansProjectThenDefaultQueue) {
  FakeApi api;
  EXPECT_EQ(kai_pod_queue(object("p", {{"app", "x"}}), api.lookup()), kKaiDefaultQueue);
  EXPECT_EQ(kai_pod_queue(object("p", {{"project", "team-a"}}), api.lookup()), "team-a");
  EXPECT_EQ(kai_pod_queue(object("p", {{"project", "team-a"}, {"kai.scheduler/node-pool", "a100"}}), api.lookup()),
            "team-a-a100");
  EXPECT_EQ(kai_pod_queue(object("p", {{"project", ""}}), api.lookup()), kKaiDefaultQueue);
  // The top owner's project label wins over the pod's; a queue label anywhere wins over both.
  api.put("batch/v1", "Job", object("train", {{"project", "owner-p"}}));
  json pod = object("train-x", {{"project", "pod-p"}}, json::array({ref("batch/v1", "Job", "train")}));
  EXPECT_EQ(kai_pod_queue(pod, api.lookup()), "owner-p");
  pod["metadata"]["labels"][kQ] = "q";
  EXPECT_EQ(kai_pod_queue(pod, api.lookup()), "q");
}

// SIM-9 (findings 3(d1)): a missing queue, default-queue included, keeps the pod Pending with KAI's message.
TEST(SchedKaiQueue, Sim9MissingQueueInKaisWords) {
  std::map<std::string, std::string> queues = {{"default-parent-queue", ""}, {"default-queue", "default-parent-queue"}};
  EXPECT_EQ(queue_problem(queues, kKaiDefaultQueue), "");
  EXPECT_EQ(queue_problem({}, kKaiDefaultQueue), "QueueDoesNotExist: Queue 'default-queue' does not exist.");
  EXPECT_EQ(queue_problem(queues, "team-a"), "QueueDoesNotExist: Queue 'team-a' does not exist.");
  EXPECT_NE(queue_problem(queues, "default-parent-queue").find("is not a leaf queue"), std::string::npos);
}

TEST(SchedKaiQueue, UnreadableOrReplacedOwnerEndsTheWalk) {
  FakeApi api;
  // The owner does not exist: the pod is its own top owner.
  json orphan = object("p", {{kQ, "pod-q"}}, json::array({ref("apps/v1", "ReplicaSet", "gone")}));
  EXPECT_EQ(kai_pod_queue(orphan, api.lookup()), "pod-q");
  // An object of the owner's name but another uid (recreated) is not the owner.
  json impostor = object("web-1", {{kQ, "other"}});
  impostor["metadata"]["uid"] = "someone-else";
  api.put("apps/v1", "ReplicaSet", impostor);
  json pod = object("p", {{kQ, "pod-q"}}, json::array({ref("apps/v1", "ReplicaSet", "web-1")}));
  EXPECT_EQ(kai_pod_queue(pod, api.lookup()), "pod-q");
  // Only the controller reference is followed.
  api.put("v1", "ConfigMap", object("cm", {{kQ, "cm-q"}}));
  json non_controller = object("p", {{kQ, "pod-q"}}, json::array({ref("v1", "ConfigMap", "cm", false)}));
  EXPECT_EQ(kai_pod_queue(non_controller, api.lookup()), "pod-q");
}

TEST(SchedKaiQueue, OwnerCycleEnds) {
  FakeApi api;
  api.put("apps/v1", "ReplicaSet", object("a", json::object(), owned_by("apps/v1", "ReplicaSet", "b")));
  api.put("apps/v1", "ReplicaSet", object("b", json::object(), owned_by("apps/v1", "ReplicaSet", "a")));
  json pod = object("p", {{kQ, "pod-q"}}, owned_by("apps/v1", "ReplicaSet", "a"));
  EXPECT_EQ(kai_pod_queue(pod, api.lookup()), "pod-q");
}
