// SPEC §1.8 policy/v1 Eviction, ACT-4, ACT-5, ACT-8, OBS-5: act::client_evictor against a real kubex-sim
// process (pods made Ready by its kubelet, PodDisruptionBudgets kept by its disruption controller), and
// against a small local server for the answers kubex-sim never gives.
#include "act/evictor.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "act_fakes.h"
#include "kube/client/client.h"
#include "kube/client/kubeconfig.h"
#include "kube/runtime/metrics.h"

namespace kubex::act {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Outcome = EvictionResult::Outcome;

const char* const kPdbMessage = "Cannot evict pod as it would violate the pod's disruption budget.";

// Whether the metrics text has kubex_evictions_total{reason,result} at exactly `value`.
bool counted(const std::string& text, const std::string& reason, const std::string& result, int value) {
  std::string line = "kubex_evictions_total{reason=\"" + reason + "\",result=\"" + result + "\"} " +
                     std::to_string(value) + "\n";
  return text.find(line) != std::string::npos;
}

template <class F>
bool eventually(F f, std::chrono::milliseconds timeout = 30s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return f();
}

// `kubex-sim serve` from the directory of this test binary (build/bin), with its default cluster. unit_act
// does not link the integration tests' SimProcess, so this is the few lines of it the tests need.
class Sim {
 public:
  Sim() {
    dir_ = std::filesystem::temp_directory_path() /
           ("kubex-evictor-" + std::to_string(::getpid()) + "-" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    std::filesystem::create_directories(dir_);
    kubeconfig_ = (dir_ / "kubeconfig").string();
    std::string bin = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "kubex-sim").string();
    if (!std::filesystem::exists(bin)) {
      error_ = bin + " is missing: build the kubex-sim target first";
      return;
    }
    int out[2];
    if (pipe(out) != 0) return;
    std::vector<std::string> args = {bin, "serve", "--listen", "127.0.0.1:0", "--kubeconfig", kubeconfig_};
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      if (FILE* err = std::fopen((dir_ / "sim.log").c_str(), "a")) dup2(fileno(err), 2);
      close(out[0]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    FILE* f = fdopen(out[0], "r");
    char line[4096];
    while (f && std::fgets(line, sizeof line, f)) {
      if (std::string(line).rfind("kubex-sim ready", 0) == 0) {
        ready_ = true;
        break;
      }
    }
    if (!ready_) error_ = "kubex-sim did not start; see " + (dir_ / "sim.log").string();
  }
  ~Sim() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  bool ready() const { return ready_; }
  const std::string& error() const { return error_; }

  // A client that does not retry 429 or 5xx itself, as evictions want (act/evictor.h, engine/controllers.cpp).
  std::shared_ptr<kube::Client> client(std::atomic<int>* posts = nullptr) const {
    auto cfg = kube::load_kubeconfig(kubeconfig_);
    EXPECT_TRUE(cfg.has_value());
    kube::ClientOptions opts;
    opts.max_retries = 0;
    opts.max_retry_after_retries = 0;
    auto c = kube::Client::create(*cfg, opts);
    EXPECT_TRUE(c.has_value());
    if (posts) {
      (*c)->set_observer([posts](const std::string& method, const std::string&) {
        if (method == "POST") ++*posts;
      });
    }
    return *c;
  }

 private:
  std::filesystem::path dir_;
  std::string kubeconfig_, error_;
  int pid_ = -1;
  bool ready_ = false;
};

json pod(const std::string& name, const std::string& app) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"labels", {{"app", app}}}}},
          {"spec",
           {{"terminationGracePeriodSeconds", 1}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
}

json pdb(const std::string& name, const std::string& app, int min_available) {
  return {{"apiVersion", "policy/v1"},
          {"kind", "PodDisruptionBudget"},
          {"metadata", {{"name", name}}},
          {"spec", {{"minAvailable", min_available}, {"selector", {{"matchLabels", {{"app", app}}}}}}}};
}

bool ready(const json& p) {
  for (const auto& c : p.value("status", json::object()).value("conditions", json::array())) {
    if (c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

class EvictorOnSim : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sim_ = new Sim(); }
  static void TearDownTestSuite() {
    delete sim_;
    sim_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(sim_->ready()) << sim_->error();
    client_ = sim_->client(&posts_);
    ns_ = "evict-" + std::to_string(++namespaces_);
    ASSERT_TRUE(client_->create("/api/v1/namespaces", {{"apiVersion", "v1"},
                                                       {"kind", "Namespace"},
                                                       {"metadata", {{"name", ns_}}}}));
  }

  std::string pods_path() const { return kube::resource_path("", "v1", "pods", ns_); }
  std::string pod_path(const std::string& name) const {
    return kube::resource_path("", "v1", "pods", ns_, name);
  }
  std::string pdb_path(const std::string& name = "") const {
    return kube::resource_path("policy", "v1", "poddisruptionbudgets", ns_, name);
  }

  // Creates the pod and returns its uid once it is Ready (when `wait_ready`).
  std::string run_pod(const std::string& name, const std::string& app, bool wait_ready = true) {
    auto created = client_->create(pods_path(), pod(name, app));
    EXPECT_TRUE(created) << (created ? "" : created.error().str());
    if (!created) return "";
    if (wait_ready) {
      EXPECT_TRUE(eventually([&] {
        auto p = client_->get(pod_path(name));
        return p && ready(*p);
      })) << name << " never became Ready";
    }
    return (*created)["metadata"]["uid"];
  }

  // Waits until the disruption controller has processed the PDB's current spec and allows `allowed`.
  void wait_pdb(const std::string& name, int allowed) {
    json last;
    EXPECT_TRUE(eventually([&] {
      auto p = client_->get(pdb_path(name));
      if (!p) return false;
      last = *p;
      const json st = p->value("status", json::object());
      return st.value("observedGeneration", 0) >= (*p)["metadata"].value("generation", 1) &&
             st.value("disruptionsAllowed", -1) == allowed;
    })) << "PDB " << name << " never allowed " << allowed << ": " << last.dump();
  }

  bool pod_exists(const std::string& name) {
    auto p = client_->get(pod_path(name));
    return p.has_value();
  }

  static Sim* sim_;
  static int namespaces_;
  std::atomic<int> posts_{0};
  std::shared_ptr<kube::Client> client_;
  std::string ns_;
  kube::Metrics metrics_;
};

Sim* EvictorOnSim::sim_ = nullptr;
int EvictorOnSim::namespaces_ = 0;

TEST_F(EvictorOnSim, PdbRefusesThenRelaxedPdbLetsItGoThenThePodIsGone) {  // SPEC §1.8, ACT-4, ACT-5, OBS-5
  std::string uid_a = run_pod("web-a", "web");
  std::string uid_b = run_pod("web-b", "web");
  ASSERT_TRUE(client_->create(pdb_path(), pdb("web", "web", 2)));
  wait_pdb("web", 0);
  auto evictor = client_evictor(client_, &metrics_, false, common::Logger("actuation"));

  posts_ = 0;
  EvictionResult r = evictor->evict({ns_, "web-a", uid_a}, EvictionReason::kResize);
  EXPECT_EQ(r.outcome, Outcome::kPdbBlocked);
  EXPECT_EQ(r.http_code, 429);
  EXPECT_EQ(r.message, kPdbMessage);
  EXPECT_EQ(r.cause, "The disruption budget web needs 2 healthy pods and has 2 currently");
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ(posts_, 1) << "the evictor itself never retries; the caller does after resizeRetryInterval";
  auto a = client_->get(pod_path("web-a"));
  ASSERT_TRUE(a);
  EXPECT_FALSE((*a)["metadata"].contains("deletionTimestamp")) << "a refused eviction leaves the pod alone";

  // Relaxing the PDB lets the eviction through once the disruption controller has seen the new spec.
  auto relaxed = client_->patch(pdb_path("web"), kube::PatchKind::kMerge, {{"spec", {{"minAvailable", 1}}}});
  ASSERT_TRUE(relaxed);
  wait_pdb("web", 1);
  r = evictor->evict({ns_, "web-a", uid_a}, EvictionReason::kResize);
  EXPECT_EQ(r.outcome, Outcome::kEvicted) << r.message;
  EXPECT_EQ(r.http_code, 201);
  EXPECT_TRUE(r.message.empty());
  EXPECT_TRUE(r.succeeded());
  a = client_->get(pod_path("web-a"));
  EXPECT_TRUE(!a || (*a)["metadata"].contains("deletionTimestamp")) << "an accepted eviction deletes the pod";

  // The budget is spent: the other pod is refused (the eviction decremented disruptionsAllowed at once).
  r = evictor->evict({ns_, "web-b", uid_b}, EvictionReason::kRollback);
  EXPECT_EQ(r.outcome, Outcome::kPdbBlocked);
  EXPECT_EQ(r.message, kPdbMessage);

  // Evicting it again once it is gone: 404, which is a success.
  ASSERT_TRUE(eventually([&] { return !pod_exists("web-a"); }));
  r = evictor->evict({ns_, "web-a", uid_a}, EvictionReason::kResize);
  EXPECT_EQ(r.outcome, Outcome::kGone);
  EXPECT_EQ(r.http_code, 404);
  EXPECT_TRUE(r.succeeded());

  std::string text = metrics_.render();
  EXPECT_TRUE(counted(text, "resize", "pdb_blocked", 1)) << text;
  EXPECT_TRUE(counted(text, "resize", "success", 2));
  EXPECT_TRUE(counted(text, "rollback", "pdb_blocked", 1));
  EXPECT_EQ(text.find("result=\"error\""), std::string::npos);
}

TEST_F(EvictorOnSim, AReplacementWithTheSameNameIsNeverEvicted) {  // SPEC §1.8: the uid precondition
  std::string old_uid = run_pod("db-0", "db", false);
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(client_->remove(pod_path("db-0"), now));
  ASSERT_TRUE(eventually([&] { return !pod_exists("db-0"); }));
  std::string new_uid = run_pod("db-0", "db", false);
  ASSERT_NE(old_uid, new_uid);
  auto evictor = client_evictor(client_, &metrics_, false, common::Logger("actuation"));

  EvictionResult r = evictor->evict({ns_, "db-0", old_uid}, EvictionReason::kConsolidation);
  EXPECT_EQ(r.outcome, Outcome::kGone) << r.message;
  EXPECT_EQ(r.http_code, 409);
  EXPECT_NE(r.message.find("UID in precondition: " + old_uid), std::string::npos) << r.message;
  auto p = client_->get(pod_path("db-0"));
  ASSERT_TRUE(p);
  EXPECT_EQ((*p)["metadata"]["uid"], new_uid);
  EXPECT_FALSE((*p)["metadata"].contains("deletionTimestamp")) << "the replacement was not touched";

  // A pod that never existed is gone too.
  r = evictor->evict({ns_, "never-there", "u-1"}, EvictionReason::kConsolidation);
  EXPECT_EQ(r.outcome, Outcome::kGone);
  EXPECT_EQ(r.http_code, 404);

  // The replacement itself, by its own uid.
  r = evictor->evict({ns_, "db-0", new_uid}, EvictionReason::kConsolidation);
  EXPECT_EQ(r.outcome, Outcome::kEvicted) << r.message;
  EXPECT_TRUE(counted(metrics_.render(), "consolidation", "success", 3));
}

TEST_F(EvictorOnSim, TwoPdbsOverOnePodIsAnError) {  // SPEC §1.8: anything else is an error
  std::string uid = run_pod("api-0", "api");
  ASSERT_TRUE(client_->create(pdb_path(), pdb("api-1", "api", 0)));
  ASSERT_TRUE(client_->create(pdb_path(), pdb("api-2", "api", 0)));
  wait_pdb("api-1", 1);
  wait_pdb("api-2", 1);
  auto evictor = client_evictor(client_, &metrics_, false, common::Logger("actuation"));

  EvictionResult r = evictor->evict({ns_, "api-0", uid}, EvictionReason::kResize);
  EXPECT_EQ(r.outcome, Outcome::kError);
  EXPECT_EQ(r.http_code, 500);
  // kube-apiserver's text; kubex-sim prefixes it with "Internal error occurred: ".
  EXPECT_NE(r.message.find("This pod has more than one PodDisruptionBudget, which the eviction subresource does "
                           "not support."),
            std::string::npos)
      << r.message;
  EXPECT_TRUE(pod_exists("api-0"));
  EXPECT_TRUE(counted(metrics_.render(), "resize", "error", 1));
}

TEST_F(EvictorOnSim, DryRunSendsNothingAndCountsNothing) {  // ACT-8
  std::string uid = run_pod("job-0", "job", false);
  auto evictor = client_evictor(client_, &metrics_, true, common::Logger("actuation"));
  posts_ = 0;
  EvictionResult r = evictor->evict({ns_, "job-0", uid}, EvictionReason::kResize);
  EXPECT_EQ(r.outcome, Outcome::kDryRun);
  EXPECT_EQ(r.http_code, 0);
  EXPECT_FALSE(r.succeeded());
  EXPECT_EQ(posts_, 0);
  auto p = client_->get(pod_path("job-0"));
  ASSERT_TRUE(p);
  EXPECT_FALSE((*p)["metadata"].contains("deletionTimestamp"));
  std::string text = metrics_.render();
  EXPECT_NE(text.find("# TYPE kubex_evictions_total counter"), std::string::npos) << "listed before a sample";
  EXPECT_EQ(text.find("kubex_evictions_total{"), std::string::npos) << text;
}

// A failed Status as the API server writes it.
std::string failure(int code, const std::string& reason, const std::string& message,
                    const json& details = nullptr) {
  json s = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
            {"reason", reason}, {"code", code},       {"message", message}};
  if (!details.is_null()) s["details"] = details;
  return s.dump();
}

// A local API server for the answers kubex-sim does not give; it records what the evictor sent.
class EvictorAnswers : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/eviction)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard lk(mu_);
                   paths_.push_back(req.path);
                   bodies_.push_back(json::parse(req.body, nullptr, false));
                   res.status = status_;
                   res.set_content(body_, "application/json");
                 });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
    kube::ConnectionConfig cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(port_);
    kube::ClientOptions opts;
    opts.max_retries = 0;
    opts.max_retry_after_retries = 0;
    client_ = *kube::Client::create(cfg, opts);
  }
  void TearDown() override {
    client_.reset();  // closes the kept-alive connection, so stop() does not wait for it
    server_.stop();
    thread_.join();
  }
  void answer(int status, std::string body) {
    std::lock_guard lk(mu_);
    status_ = status;
    body_ = std::move(body);
  }
  EvictionResult evict(const PodRef& pod) {
    auto evictor = client_evictor(client_, &metrics_, false, common::Logger("test"));
    return evictor->evict(pod, EvictionReason::kResize);
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  int status_ = 201;
  std::string body_ = R"({"kind":"Status","apiVersion":"v1","status":"Success","code":201})";
  std::vector<std::string> paths_;
  std::vector<json> bodies_;
  std::shared_ptr<kube::Client> client_;
  kube::Metrics metrics_;
};

TEST_F(EvictorAnswers, SendsAPolicyV1EvictionWithTheUidPrecondition) {  // SPEC §1.8
  EXPECT_EQ(evict({"ml", "train-0", "u-123"}).outcome, Outcome::kEvicted);
  EXPECT_EQ(evict({"ml", "train-1", ""}).outcome, Outcome::kEvicted);
  std::lock_guard lk(mu_);
  ASSERT_EQ(paths_.size(), 2u);
  EXPECT_EQ(paths_[0], "/api/v1/namespaces/ml/pods/train-0/eviction");
  EXPECT_EQ(bodies_[0], json::parse(R"({"apiVersion":"policy/v1","kind":"Eviction",
      "metadata":{"name":"train-0","namespace":"ml"},"deleteOptions":{"preconditions":{"uid":"u-123"}}})"));
  EXPECT_EQ(bodies_[1], json::parse(R"({"apiVersion":"policy/v1","kind":"Eviction",
      "metadata":{"name":"train-1","namespace":"ml"}})"))
      << "no uid, no precondition";
}

TEST_F(EvictorAnswers, ClassifiesEveryAnswer) {  // SPEC §1.8, ACT-5
  struct Case {
    int status;
    std::string body;
    Outcome outcome;
    int code;
    std::string message;
  };
  const std::string uid_conflict =
      "Operation cannot be fulfilled on pods \"p\": Precondition failed: UID in precondition: a, UID in "
      "object meta: b";
  const std::string processing_cause = "The disruption budget web is still being processed by the server.";
  const std::string kThrottled = "Too many requests, please try again later.";
  const json processing = {{"retryAfterSeconds", 10},
                           {"causes", {{{"reason", "DisruptionBudget"}, {"message", processing_cause}}}}};
  const std::vector<Case> cases = {
      {200, "", Outcome::kEvicted, 200, ""},
      {201, R"({"kind":"Status","status":"Success","code":201})", Outcome::kEvicted, 201, ""},
      // kube-apiserver can hand back a failed Status as the created object: its code decides.
      {201, failure(500, "InternalError", "two PDBs"), Outcome::kError, 500, "two PDBs"},
      {404, failure(404, "NotFound", "pods \"p\" not found"), Outcome::kGone, 404, "pods \"p\" not found"},
      {409, failure(409, "Conflict", uid_conflict), Outcome::kGone, 409, uid_conflict},
      // Any other conflict (e.g. the PDB's status kept changing) is an error, retried by the caller.
      {409, failure(409, "Conflict", "the object has been modified"), Outcome::kError, 409,
       "the object has been modified"},
      {429, failure(429, "TooManyRequests", kPdbMessage, processing), Outcome::kPdbBlocked, 429, kPdbMessage},
      // ENG-4: the API server's throttling (retryAfterSeconds, no budget named) is no PDB refusal: an error,
      // tried again later, never remembered as pdb-blocked (ACT-5).
      {429, failure(429, "TooManyRequests", kThrottled, {{"retryAfterSeconds", 1}}), Outcome::kError, 429,
       kThrottled},
      {403, failure(403, "Forbidden", "forbidden"), Outcome::kError, 403, "forbidden"},
      {503, "upstream unavailable", Outcome::kError, 503, "upstream unavailable"},
      {500, "", Outcome::kError, 500, "HTTP 500"},
  };
  for (const auto& c : cases) {
    answer(c.status, c.body);
    EvictionResult r = evict({"ml", "p", "a"});
    EXPECT_EQ(r.outcome, c.outcome) << c.status << " " << c.body;
    EXPECT_EQ(r.http_code, c.code) << c.body;
    EXPECT_EQ(r.message, c.message) << c.body;
  }
  answer(429, cases[6].body);  // the budget still being processed
  EXPECT_EQ(evict({"ml", "p", "a"}).cause, processing_cause);

  std::string text = metrics_.render();
  EXPECT_TRUE(counted(text, "resize", "success", 4)) << text;
  EXPECT_TRUE(counted(text, "resize", "pdb_blocked", 2));
  EXPECT_TRUE(counted(text, "resize", "error", 6));
}

TEST(Evictor, ATransportFailureIsAnErrorWithCodeZero) {  // SPEC §1.8: anything else is an error
  // A port that was free a moment ago and has nobody listening now.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  int port = ntohs(addr.sin_port);
  close(fd);
  kube::ConnectionConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(port);
  kube::ClientOptions opts;
  opts.max_retries = 0;
  kube::Metrics metrics;
  auto evictor = client_evictor(*kube::Client::create(cfg, opts), &metrics, false, common::Logger("test"));
  EvictionResult r = evictor->evict({"ml", "p", "u"}, EvictionReason::kRollback);
  EXPECT_EQ(r.outcome, Outcome::kError);
  EXPECT_EQ(r.http_code, 0);
  EXPECT_FALSE(r.message.empty());
  EXPECT_TRUE(counted(metrics.render(), "rollback", "error", 1));
}

TEST(Evictor, NamesForLabelsAndLogs) {  // OBS-5
  EXPECT_STREQ(reason_label(EvictionReason::kResize), "resize");
  EXPECT_STREQ(reason_label(EvictionReason::kRollback), "rollback");
  EXPECT_STREQ(reason_label(EvictionReason::kConsolidation), "consolidation");
  EXPECT_STREQ(outcome_name(Outcome::kPdbBlocked), "pdb_blocked");
  EXPECT_STREQ(outcome_name(Outcome::kGone), "gone");
}

TEST(FakeEvictor, ScriptsPerPodAndRecordsCalls) {
  test::FakeEvictor fake;
  fake.script("ml", "a", {test::FakeEvictor::pdb_blocked(), test::FakeEvictor::evicted()});
  EXPECT_EQ(fake.evict({"ml", "a", "u"}, EvictionReason::kResize).outcome, Outcome::kPdbBlocked);
  EXPECT_EQ(fake.evict({"ml", "a", "u"}, EvictionReason::kResize).outcome, Outcome::kEvicted);
  EXPECT_EQ(fake.evict({"ml", "a", "u"}, EvictionReason::kResize).outcome, Outcome::kEvicted) << "repeats";
  EXPECT_EQ(fake.evict({"ml", "b", "u"}, EvictionReason::kRollback).outcome, Outcome::kEvicted) << "fallback";
  EXPECT_EQ(fake.called_keys(), (std::vector<std::string>{"ml/a", "ml/a", "ml/a", "ml/b"}));
  EXPECT_EQ(fake.calls().back().reason, EvictionReason::kRollback);
  fake.dry_run = true;
  EXPECT_EQ(fake.evict({"ml", "a", "u"}, EvictionReason::kResize).outcome, Outcome::kDryRun);
}

}  // namespace
}  // namespace kubex::act
