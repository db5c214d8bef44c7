// ENG-4 against a faulty kubex-sim (SIM-8, `serve --faults FILE`): the engine's client and informers keep a
// complete, current view while the API server throttles (429 with Retry-After), fails (500/503), cuts watch
// streams and answers 410 Gone, and a paginated LIST whose continue token expires starts again. Only requests
// sent with kubex's User-Agent are faulted; the test's own setup client is exempt.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "api/views.h"
#include "kube/cache/informer.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"
#include "sim_process.h"

using namespace kubex;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

template <class F>
bool eventually(F f, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return f();
}

std::shared_ptr<kube::Client> client_for(const std::string& kubeconfig, const std::string& user_agent) {
  auto cfg = kube::load_kubeconfig(kubeconfig);
  EXPECT_TRUE(cfg.has_value());
  kube::ClientOptions opts;
  opts.qps = 200;
  opts.burst = 200;
  opts.user_agent = user_agent;
  return *kube::Client::create(*cfg, opts);
}

json config_map(const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"data", {{"v", value}}}};
}

std::string write_faults(const std::string& text) {
  auto path = std::filesystem::temp_directory_path() / ("kubex-faults-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << text;
  return path.string();
}

// name -> resourceVersion of the ConfigMaps of `default`, read by the exempt client.
std::map<std::string, std::string> server_view(kube::Client& c) {
  std::map<std::string, std::string> out;
  auto rv = c.list("/api/v1/namespaces/default/configmaps", {}, [&](json&& item) {
    out[item["metadata"].value("name", "")] = item["metadata"].value("resourceVersion", "");
  });
  EXPECT_TRUE(rv.has_value());
  return out;
}

std::map<std::string, std::string> informer_view(const kube::Informer& inf) {
  std::map<std::string, std::string> out;
  for (const auto& o : inf.list()) out[o->name] = o->resource_version;
  return out;
}

}  // namespace

// ENG-4: under 429s, 5xx, watch cuts and 410s the informer converges to exactly what the server holds.
TEST(ApiFaults, InformerConvergesUnderThrottlingErrorsCutsAndGone) {
  const std::string faults = write_faults(R"(seed: 7
rules:
  - name: throttle
    userAgents: [kubex-it/]
    verbs: [list, get]
    tooManyRequests: {rate: 0.3, retryAfterSeconds: 1}
    serverError: {rate: 0.2, codes: [500, 503]}
  - name: cuts
    userAgents: [kubex-it/]
    verbs: [watch]
    watchCut: {afterEventsMin: 1, afterEventsMax: 6, abruptRate: 0.5}
    watchGone: {rate: 0.3}
)");
  kubex::testing::SimProcess sim({{"--no-cluster", "--faults", faults}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto setup = client_for(sim.kubeconfig(), "setup/1");
  auto faulted = client_for(sim.kubeconfig(), "kubex-it/1");
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(setup->create("/api/v1/namespaces/default/configmaps",
                                                         config_map("cm-" + std::to_string(i), "0")));
  kube::InformerOptions io;
  io.page_size = 4;  // five pages: more requests to fault
  io.backoff_base = 50ms;
  io.backoff_cap = 500ms;
  kube::Informer inf(faulted, "/api/v1/namespaces/default/configmaps",
                     [](const json& j) -> kube::ObjectPtr {
                       auto o = std::make_shared<common::CachedObject>();
                       kube::fill_meta(*o, j);
                       return o;
                     },
                     io);
  inf.start();
  ASSERT_TRUE(inf.wait_synced(60s));
  // Changes while the informer's watches keep being cut and expired: creates, updates, deletes.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 16; i += 3) {  // cm-17…19 go below
      const std::string name = "cm-" + std::to_string(i);
      ASSERT_TRUE(setup->patch("/api/v1/namespaces/default/configmaps/" + name, kube::PatchKind::kMerge,
                               {{"data", {{"v", std::to_string(round + 1)}}}}));
    }
    ASSERT_TRUE(setup->create("/api/v1/namespaces/default/configmaps", config_map("new-" + std::to_string(round), "n")));
    ASSERT_TRUE(setup->remove("/api/v1/namespaces/default/configmaps/cm-" + std::to_string(19 - round)));
    std::this_thread::sleep_for(300ms);
  }
  auto want = server_view(*setup);
  ASSERT_EQ(want.size(), 20u);  // 20 + 3 new - 3 deleted
  EXPECT_TRUE(eventually([&] { return informer_view(inf) == want; }, 60s))
      << "the informer's view differs from the server's";
  auto counts = setup->get("/simz/faults");
  ASSERT_TRUE(counts.has_value());
  const json& total = (*counts)["total"];
  EXPECT_GT(total.value("tooManyRequests", 0), 0) << counts->dump();
  EXPECT_GT(total.value("serverErrors", 0), 0) << counts->dump();
  EXPECT_GT(total.value("watchGone", 0), 0) << counts->dump();
  EXPECT_GT(total["watchCut"].value("clean", 0) + total["watchCut"].value("abrupt", 0), 0) << counts->dump();
  EXPECT_GT(inf.stats().relists_after_gone, 0u);
  inf.stop();
  std::filesystem::remove(faults);
}

// ENG-4: a paginated LIST whose continue token expires (the server compacted meanwhile) starts again and
// returns one consistent list; without a restart callback the 410 comes back to the caller.
TEST(ApiFaults, ExpiredContinueStartsTheListAgain) {
  kubex::testing::SimProcess sim({{"--no-cluster"}, "", 0});
  ASSERT_TRUE(sim.ok());
  auto c = client_for(sim.kubeconfig(), "kubex-it/1");
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(c->create("/api/v1/namespaces/default/configmaps", config_map("cm-" + std::to_string(i), "0")));
  }
  auto compact_once = [&, done = false](const json&) mutable {
    if (done) return;
    done = true;  // after the first page arrived: its continue token becomes too old
    ASSERT_TRUE(c->create("/api/v1/namespaces/default/configmaps", config_map("late", "0")));
    auto r = c->request("POST", "/simz/compact");
    ASSERT_TRUE(r.has_value() && r->code == 200);
  };
  kube::ListOptions lo;
  lo.page_size = 5;
  int restarts = 0;
  std::set<std::string> names;
  lo.on_restart = [&] {
    ++restarts;
    names.clear();
  };
  auto rv = c->list("/api/v1/namespaces/default/configmaps", lo, [&](json&& item) {
    compact_once(item);
    names.insert(item["metadata"].value("name", ""));
  });
  ASSERT_TRUE(rv.has_value()) << rv.error().str();
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(names.size(), 13u);  // the twelve and the late one, each once
  EXPECT_TRUE(names.count("late"));

  kube::ListOptions plain;
  plain.page_size = 5;
  bool compacted = false;
  auto expired = c->list("/api/v1/namespaces/default/configmaps", plain, [&](json&&) {
    if (compacted) return;
    compacted = true;
    ASSERT_TRUE(c->create("/api/v1/namespaces/default/configmaps", config_map("later", "0")));
    ASSERT_TRUE(c->request("POST", "/simz/compact").has_value());
  });
  ASSERT_FALSE(expired.has_value());
  EXPECT_TRUE(expired.error().gone());
}
