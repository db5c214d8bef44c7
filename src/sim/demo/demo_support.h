// What the demo's steps share: stopping on Ctrl-C, applying manifests to the in-process API server, waiting
// with a visible reason, and small HTTP and JSON helpers.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "common/result.h"
#include "common/yaml.h"
#include "sim/apiserver/api_server.h"
#include "sim/cluster/cluster_io.h"
#include "sim/demo/child_process.h"

namespace kubex::sim::demo {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

// Stops the demo on SIGINT/SIGTERM: a dedicated thread waits for the signal and wakes every wait.
class Interrupts {
 public:
  Interrupts() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] {
      int sig = 0;
      sigwait(&set_, &sig);
      {
        std::lock_guard lk(mu_);
        interrupted_ = sig != 0 && !done_;
      }
      cv_.notify_all();
    });
  }
  ~Interrupts() {
    {
      std::lock_guard lk(mu_);
      done_ = true;
    }
    pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
  }
  bool interrupted() {
    std::lock_guard lk(mu_);
    return interrupted_;
  }
  // Sleeps for `d`; returns false when interrupted.
  bool sleep(milliseconds d) {
    std::unique_lock lk(mu_);
    return !cv_.wait_for(lk, d, [&] { return interrupted_; });
  }
  void wait() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return interrupted_; });
  }

 private:
  sigset_t set_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool interrupted_ = false, done_ = false;
  std::thread thread_;
};

// Creates each object, or updates it when it exists (like `kubectl apply` for objects the demo owns).
class Applier {
 public:
  explicit Applier(ApiServer& api) : api_(api), io_(api), client_(io_, "kubex-demo") {}

  common::Result<void> apply_yaml(const std::string& name, const std::string& text) {
    auto docs = common::yaml_to_json_documents(text);
    if (!docs) return common::fail(name + ": " + docs.error().str());
    for (auto& doc : *docs) {
      if (!doc.is_object() || doc.empty()) continue;
      if (auto r = apply(doc); !r) return common::fail(name + ": " + r.error().str());
    }
    return {};
  }

  common::Result<void> apply(const json& obj) {
    std::string api_version = obj.value("apiVersion", ""), kind = obj.value("kind", "");
    auto slash = api_version.find('/');
    std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
    std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
    auto res = api_.registry().find_kind(group, version, kind);
    if (!res) return common::fail("the API server does not serve " + api_version + " " + kind);
    static const json kNoMeta = json::object();
    const json& meta = obj.contains("metadata") && obj["metadata"].is_object() ? obj["metadata"] : kNoMeta;
    std::string ns = res->namespaced ? meta.value("namespace", "default") : "";
    std::string collection = group.empty() ? cluster::core_path(res->plural, ns)
                                           : cluster::group_path(api_version, res->plural, ns);
    auto r = client_.create(collection, obj);
    if (r.ok()) return {};
    if (r.status != 409) return common::fail(kind + " " + meta.value("name", "") + ": " + r.body);
    std::string path = collection + "/" + meta.value("name", "");
    auto cur = client_.get(path);
    if (!cur.ok()) return common::fail(kind + " " + meta.value("name", "") + ": " + cur.body);
    json updated = obj;
    updated["metadata"]["resourceVersion"] = cur.json()["metadata"]["resourceVersion"];
    auto u = client_.update(path, updated);
    if (!u.ok()) return common::fail(kind + " " + meta.value("name", "") + ": " + u.body);
    return {};
  }

  json get(const std::string& path) const {
    auto r = client_.get(path);
    return r.ok() ? r.json() : json();
  }

 private:
  ApiServer& api_;
  cluster::StoreIo io_;
  cluster::Client client_;
};

void say(const std::string& line);
std::string self_dir();
int free_port();
// A file compiled into kubex-sim (embedded.h), nullptr when absent.
const std::string* embedded(const std::string& path);
// Polls `ready` every 200 ms until it returns "" (done) or the deadline passes; prints what it waits for
// once. Returns the last "what is missing" text, "" on success, or "interrupted".
std::string wait_until(Interrupts& intr, const std::string& what, seconds timeout,
                       const std::function<std::string()>& missing, ChildProcess* engine = nullptr);
std::string http_get(int port, const std::string& path, int* status = nullptr);
const json* condition(const json& obj, const std::string& type);

}  // namespace kubex::sim::demo
