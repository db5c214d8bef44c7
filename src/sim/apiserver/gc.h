// Background controllers that live in kube-controller-manager but that API semantics depend on:
// the garbage collector (ownerReferences, propagation policies), the namespace lifecycle, CRD cleanup
// and PodDisruptionBudget status.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <string>
#include <thread>

#include "common/log.h"
#include "sim/apiserver/resource.h"

namespace kubex::sim {

class ApiServer;

class GarbageCollector {
 public:
  explicit GarbageCollector(ApiServer& server);
  ~GarbageCollector();
  void start();
  void stop();

  // Notifications from the write path (cheap; work happens on the collector's thread).
  void object_removed(const ResourceInfo& r, const nlohmann::json& obj);
  void object_deleting(const ResourceInfo& r, const nlohmann::json& obj);
  void namespace_created(const std::string& ns);
  void namespace_deleting(const std::string& ns);

  // Runs one full pass synchronously (tests and shutdown).
  void sync_once();

 private:
  struct Task {
    enum Kind { kOwnerGone, kFinalize, kNamespace, kNamespaceCreated } kind;
    std::string uid;
    std::string resource_id, ns, name;
  };
  void run();
  // PodDisruptionBudget status every second on its own thread, like kube-controller-manager's disruption
  // controller: a long collection (a namespace of thousands of objects) never holds it back.
  void run_disruption();
  void process(const Task& t);
  void owner_gone(const std::string& uid);
  void finalize(const std::string& resource_id, const std::string& ns, const std::string& name);
  bool drain_namespace(const std::string& ns);
  void scan_dangling();
  // Dependents of `uid` as (resource id, namespace, name).
  std::vector<std::tuple<std::string, std::string, std::string>> dependents(const std::string& uid);
  bool owner_exists(const nlohmann::json& ref, const std::string& ns);
  void enqueue(Task t);

  ApiServer& server_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable disruption_cv_;  // wakes only the disruption thread (on stop)
  std::deque<Task> queue_;
  std::set<std::string> terminating_namespaces_;
  bool stop_ = false;
  bool started_ = false;
  std::thread thread_;
  std::thread disruption_thread_;
  common::Logger log_{"kubex-sim.gc"};
};

}  // namespace kubex::sim
