// The engine's Kubernetes client and informers against a running kubex-sim over TLS (issue 4).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "api/views.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"
#include "kube/runtime/predicates.h"
#include "sim_process.h"

using namespace kubex;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

template <class F>
bool eventually(F f, std::chrono::milliseconds timeout = 20s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return f();
}

std::shared_ptr<kube::Client> client_for(const std::string& kubeconfig, const std::string& context = "",
                                         double qps = 20) {
  auto cfg = kube::load_kubeconfig(kubeconfig, context);
  EXPECT_TRUE(cfg.has_value()) << (cfg ? "" : cfg.error().str());
  kube::ClientOptions opts;
  opts.qps = qps;
  auto c = kube::Client::create(*cfg, opts);
  EXPECT_TRUE(c.has_value());
  return *c;
}

json pod(const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

// Records every handler call as "ADD key", "UPDATE key", "DELETE key".
struct Recorder {
  std::mutex mu;
  std::vector<std::string> events;
  kube::InformerHandlers handlers() {
    return {[this](const kube::ObjectPtr& o) { push("ADD " + o->key()); },
            [this](const kube::ObjectPtr&, const kube::ObjectPtr& n) { push("UPDATE " + n->key()); },
            [this](const kube::ObjectPtr& o) { push("DELETE " + o->key()); }};
  }
  void push(std::string s) {
    std::lock_guard lk(mu);
    events.push_back(std::move(s));
  }
  bool saw(const std::string& s) {
    std::lock_guard lk(mu);
    return std::find(events.begin(), events.end(), s) != events.end();
  }
};

kube::Projector pods() {
  return [](const json& j) -> kube::ObjectPtr { return api::project_pod(j); };
}

}  // namespace

class InformerOverTls : public ::testing::TestWithParam<std::string> {};

TEST_P(InformerOverTls, ObservesPodAndNodeLifecycle) {  // client certificate and token kubeconfig contexts
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto c = client_for(sim.kubeconfig(), GetParam());
  kube::Informer podinf(c, "/api/v1/pods", pods());
  kube::Informer nodeinf(c, "/api/v1/nodes", [](const json& j) -> kube::ObjectPtr { return api::project_node(j); });
  Recorder pr, nr;
  podinf.add_handlers(pr.handlers());
  nodeinf.add_handlers(nr.handlers());
  podinf.add_index("node", [](const common::CachedObject& o) {
    return std::vector<std::string_view>{static_cast<const api::PodView&>(o).node_name.view()};
  });
  podinf.start();
  nodeinf.start();
  ASSERT_TRUE(podinf.wait_synced(10s));
  ASSERT_TRUE(nodeinf.wait_synced(10s));

  ASSERT_TRUE(c->create("/api/v1/namespaces/default/pods", pod("p1", {{"app", "a"}})));
  json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}},
               {"status", {{"allocatable", {{"nvidia.com/gpu", "2"}}}}}};
  ASSERT_TRUE(c->create("/api/v1/nodes", node));
  EXPECT_TRUE(eventually([&] { return pr.saw("ADD default/p1") && nr.saw("ADD n1"); }));
  auto n1 = kube::as<api::NodeView>(nodeinf.get("n1"));
  ASSERT_TRUE(n1);
  EXPECT_EQ(n1->gpu_allocatable, 2);

  ASSERT_TRUE(c->patch("/api/v1/namespaces/default/pods/p1", kube::PatchKind::kMerge,
                       {{"metadata", {{"labels", {{"app", "b"}}}}}}));
  EXPECT_TRUE(eventually([&] {
    auto p = kube::as<api::PodView>(podinf.get("default/p1"));
    return p && p->label("app") && p->label("app")->str() == "b" && pr.saw("UPDATE default/p1");
  }));
  ASSERT_TRUE(c->remove("/api/v1/namespaces/default/pods/p1"));
  ASSERT_TRUE(c->remove("/api/v1/nodes/n1"));
  EXPECT_TRUE(eventually([&] { return pr.saw("DELETE default/p1") && nr.saw("DELETE n1"); }));
  EXPECT_EQ(podinf.get("default/p1"), nullptr);
  EXPECT_TRUE(podinf.by_index("node", "").empty());
}

INSTANTIATE_TEST_SUITE_P(Contexts, InformerOverTls, ::testing::Values("kubex-sim", "kubex-sim-token"));

// The owner-uid index the engine finds a workload's pods with (observe/caches.cpp): entries follow an owner
// change and a delete, and two references to one owner make one entry.
TEST(Informer, OwnerIndexFollowsOwnerChangesAndDeletes) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto c = client_for(sim.kubeconfig());
  std::map<std::string, std::string> uid;  // owners that exist, so the garbage collector keeps their pods
  for (const char* n : {"o1", "o2", "o3"}) {
    auto cm = c->create("/api/v1/namespaces/default/configmaps",
                        {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", n}}}});
    ASSERT_TRUE(cm);
    uid[n] = (*cm)["metadata"]["uid"].get<std::string>();
  }
  auto ref = [&](const std::string& n) {
    return json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"name", n}, {"uid", uid[n]}};
  };
  auto owned = [&](const std::string& name, json refs) {
    json p = pod(name);
    p["metadata"]["ownerReferences"] = std::move(refs);
    return p;
  };
  kube::Informer inf(c, "/api/v1/pods", pods());
  inf.add_index("owner-uid", [](const common::CachedObject& o) {
    return kube::owner_uids(static_cast<const api::PodView&>(o).owners);
  });
  inf.start();
  ASSERT_TRUE(inf.wait_synced(10s));
  auto owned_by = [&](const std::string& owner) {
    std::set<std::string> keys;
    for (const auto& o : inf.by_index("owner-uid", uid[owner])) keys.insert(o->key());
    return keys;
  };
  using Keys = std::set<std::string>;

  ASSERT_TRUE(c->create("/api/v1/namespaces/default/pods", owned("a", {ref("o1"), ref("o2"), ref("o1")})));
  ASSERT_TRUE(c->create("/api/v1/namespaces/default/pods", owned("b", {ref("o1")})));
  ASSERT_TRUE(eventually([&] { return inf.size() == 2; }));
  EXPECT_EQ(owned_by("o1"), (Keys{"default/a", "default/b"}));
  EXPECT_EQ(inf.by_index("owner-uid", uid["o1"]).size(), 2u) << "one entry per pod, however many references";
  EXPECT_EQ(owned_by("o2"), Keys{"default/a"});

  ASSERT_TRUE(c->patch("/api/v1/namespaces/default/pods/a", kube::PatchKind::kMerge,
                       {{"metadata", {{"ownerReferences", {ref("o3")}}}}}));
  EXPECT_TRUE(eventually([&] { return owned_by("o3") == Keys{"default/a"}; }));
  EXPECT_EQ(owned_by("o1"), Keys{"default/b"});
  EXPECT_TRUE(owned_by("o2").empty());

  ASSERT_TRUE(c->remove("/api/v1/namespaces/default/pods/b"));
  EXPECT_TRUE(eventually([&] { return owned_by("o1").empty(); }));
  EXPECT_EQ(owned_by("o3"), Keys{"default/a"});
}

TEST(Informer, ConvergesAfterTheApiServerIsKilledAndRestarted) {
  std::string data = std::filesystem::temp_directory_path() / ("kubex-it-data-" + std::to_string(::getpid()));
  std::filesystem::remove_all(data);
  auto sim = std::make_unique<kubex::testing::SimProcess>(
      kubex::testing::SimProcess::Options{{"--no-cluster"}, data, 0});
  ASSERT_TRUE(sim->ok());
  int port = sim->port();
  std::string kubeconfig = data + "/kubeconfig.copy";
  std::filesystem::copy_file(sim->kubeconfig(), kubeconfig, std::filesystem::copy_options::overwrite_existing);
  auto c = client_for(kubeconfig);
  kube::InformerOptions opts;
  opts.backoff_base = 100ms;
  opts.backoff_cap = 1s;
  kube::Informer inf(c, "/api/v1/pods", pods(), opts);
  inf.start();
  ASSERT_TRUE(inf.wait_synced(10s));
  for (const char* n : {"keep", "gone"}) ASSERT_TRUE(c->create("/api/v1/namespaces/default/pods", pod(n)));
  ASSERT_TRUE(eventually([&] { return inf.size() == 2; }));

  sim->kill_hard();  // mid-watch
  sim.reset();
  kubex::testing::SimProcess restarted({{"--no-cluster"}, data, port});
  ASSERT_TRUE(restarted.ok());
  ASSERT_TRUE(c->remove("/api/v1/namespaces/default/pods/gone"));
  ASSERT_TRUE(c->create("/api/v1/namespaces/default/pods", pod("new")));
  EXPECT_TRUE(eventually([&] {
    return inf.get("default/keep") && inf.get("default/new") && !inf.get("default/gone") && inf.size() == 2;
  }, 30s));
  std::filesystem::remove_all(data);
}

TEST(Informer, RelistsAfter410AndDeliversTheMissedDelete) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  kubex::testing::TcpProxy proxy(sim.port());
  std::string via_proxy = kubex::testing::kubeconfig_with_port(sim.kubeconfig(), proxy.port(), sim.dir() + "/proxy.kubeconfig");
  auto direct = client_for(sim.kubeconfig());
  auto c = client_for(via_proxy);
  for (const char* n : {"a", "b"}) ASSERT_TRUE(direct->create("/api/v1/namespaces/default/pods", pod(n)));
  kube::InformerOptions opts;
  opts.backoff_base = 100ms;
  opts.backoff_cap = 500ms;
  kube::Informer inf(c, "/api/v1/pods", pods(), opts);
  Recorder rec;
  inf.add_handlers(rec.handlers());
  inf.start();
  ASSERT_TRUE(inf.wait_synced(10s));
  ASSERT_EQ(inf.size(), 2u);

  proxy.cut();  // the informer is disconnected from here on
  ASSERT_TRUE(direct->remove("/api/v1/namespaces/default/pods/b"));
  ASSERT_TRUE(direct->create("/api/v1/namespaces/default/pods", pod("c")));
  auto compacted = direct->request("POST", "/simz/compact");  // its resourceVersion is now too old: 410
  ASSERT_TRUE(compacted && compacted->code == 200);
  proxy.restore();

  EXPECT_TRUE(eventually([&] { return rec.saw("DELETE default/b") && rec.saw("ADD default/c"); }));
  EXPECT_TRUE(inf.get("default/a"));
  EXPECT_FALSE(inf.get("default/b"));
  EXPECT_GE(inf.stats().relists_after_gone, 1u);
}

TEST(Client, ConflictRetryLandsBothWriters) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto c = client_for(sim.kubeconfig());
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "counter"}}}, {"data", {{"n", "0"}}}};
  ASSERT_TRUE(c->create("/api/v1/namespaces/default/configmaps", cm));
  auto bump = [&](const std::string& who) {
    for (int i = 0; i < 20; ++i) {
      auto r = kube::retry_on_conflict(*c, "/api/v1/namespaces/default/configmaps/counter", [&](json& obj) {
        int n = std::stoi(obj["data"].value("n", "0"));
        obj["data"]["n"] = std::to_string(n + 1);
        obj["data"][who + std::to_string(i)] = "x";
        return true;
      }, 50);
      ASSERT_TRUE(r.has_value()) << r.error().str();
    }
  };
  std::thread t1(bump, "a"), t2(bump, "b");
  t1.join();
  t2.join();
  auto final = c->get("/api/v1/namespaces/default/configmaps/counter");
  ASSERT_TRUE(final);
  EXPECT_EQ((*final)["data"]["n"], "40");  // no lost update
  EXPECT_EQ((*final)["data"].size(), 41u);
}

TEST(Client, TypedErrorsCarryTheServersMessage) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto c = client_for(sim.kubeconfig(), "", 2000);
  auto missing = c->get("/api/v1/namespaces/default/pods/nope");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(missing.error().not_found());
  EXPECT_NE(missing.error().message.find("pods \"nope\" not found"), std::string::npos);
  ASSERT_TRUE(c->create("/api/v1/namespaces/default/pods", pod("dup")));
  auto dup = c->create("/api/v1/namespaces/default/pods", pod("dup"));
  ASSERT_FALSE(dup);
  EXPECT_TRUE(dup.error().already_exists());
  auto bad = c->create("/api/v1/namespaces/default/pods", {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "x"}}}, {"spec", json::object()}});
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().invalid());
  EXPECT_NE(bad.error().message.find("spec.containers: Required value"), std::string::npos);
  int seen = 0;
  std::size_t pages = 0;
  for (int i = 0; i < 1100; ++i) {
    json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm-" + std::to_string(i)}}}};
    ASSERT_TRUE(c->create("/api/v1/namespaces/default/configmaps", cm));
  }
  c->set_observer([&](const std::string& m, const std::string&) {
    if (m == "GET") ++pages;
  });
  kube::ListOptions lo;
  lo.page_size = 500;
  auto rv = c->list("/api/v1/namespaces/default/configmaps", lo, [&](json&& item) {
    EXPECT_EQ(item["kind"], "ConfigMap");
    ++seen;
  });
  ASSERT_TRUE(rv);
  EXPECT_EQ(seen, 1100);
  EXPECT_EQ(pages, 3u);  // 500 per page
}
