// The admission webhook server: handler registry, outcomes reported to the observer, VAL-9 bad requests,
// fail-open answers for throwing and overrunning mutation handlers (ADM-2), HTTP 500 for validation
// handlers, and the real HTTPS listener (TLS with the serving certificate, /healthz, busy port).
#include "webhook/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/base64.h"
#include "common/json_projection.h"
#include "common/x509.h"
#include "webhook/certs.h"

namespace kubex::webhook {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string body(const std::string& uid = "uid-1", json object = {{"metadata", {{"name", "p"}}}}) {
  return json{
      {"apiVersion", "admission.k8s.io/v1"},
      {"kind", "AdmissionReview"},
      {"request", {{"uid", uid}, {"operation", "CREATE"}, {"object", object}, {"kind", {{"kind", "Pod"}}}}}}
      .dump();
}

struct Seen {
  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> calls;  // path, outcome label
  void add(const std::string& p, Outcome o) {
    std::lock_guard lk(mu);
    calls.emplace_back(p, outcome_label(o));
  }
  std::vector<std::pair<std::string, std::string>> get() {
    std::lock_guard lk(mu);
    return calls;
  }
};

struct Fixture : ::testing::Test {
  Server server{ServerOptions{}, nullptr};
  Seen seen;
  void SetUp() override {
    server.set_observer([this](const std::string& p, Outcome o, double seconds) {
      EXPECT_GE(seconds, 0.0);
      seen.add(p, o);
    });
  }
  json response(const HttpReply& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    return json::parse(r.body, nullptr, false)["response"];
  }
};

AdmissionResponse add_label(const AdmissionRequest& req) {
  json after = *req.object;
  after["metadata"]["labels"]["kubex"] = "yes";
  AdmissionResponse r;
  r.set_patch(json::diff(*req.object, after));
  return r;
}

TEST_F(Fixture, OutcomesOfMutatingAndValidatingHandlers) {  // OBS-5 result labels
  server.handle("/mutate", add_label);
  server.handle("/noop", [](const AdmissionRequest&) { return AdmissionResponse::allow(); });
  HandlerOptions validating;
  validating.mutating = false;
  validating.fail_open = false;
  server.handle(
      "/validate",
      [](const AdmissionRequest& req) {
        if (req.object->at("metadata").value("name", "") == "bad") {
          return AdmissionResponse::deny(422, "Invalid", "metadata.name: bad");
        }
        return AdmissionResponse::allow();
      },
      validating);

  json out = response(server.serve("/mutate", body("u-1")));
  EXPECT_EQ(out["uid"], "u-1");
  EXPECT_EQ(out["patchType"], "JSONPatch");
  auto ops = json::parse(*common::base64_decode(out["patch"].get<std::string>()));
  EXPECT_EQ(ops, json::parse(R"([{"op":"add","path":"/metadata/labels","value":{"kubex":"yes"}}])"));
  EXPECT_FALSE(response(server.serve("/noop", body("u-2"))).contains("patch"));
  EXPECT_EQ(response(server.serve("/validate", body("u-3")))["allowed"], true);
  json denied = response(server.serve("/validate", body("u-4", {{"metadata", {{"name", "bad"}}}})));
  EXPECT_EQ(denied["allowed"], false);
  EXPECT_EQ(denied["status"]["code"], 422);
  EXPECT_EQ(denied["status"]["message"], "metadata.name: bad");
  EXPECT_EQ(seen.get(), (std::vector<std::pair<std::string, std::string>>{{"/mutate", "patched"},
                                                                          {"/noop", "unchanged"},
                                                                          {"/validate", "allowed"},
                                                                          {"/validate", "denied"}}));
}

// VAL-9: an undecodable envelope is answered HTTP 400 with plain text and counts as bad_request.
TEST_F(Fixture, BadEnvelopeIsHttp400PlainText) {
  std::atomic<int> calls{0};
  server.handle("/mutate", [&](const AdmissionRequest&) {
    ++calls;
    return AdmissionResponse::allow();
  });
  HttpReply r = server.serve("/mutate", "not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.content_type.rfind("text/plain", 0), 0u);
  EXPECT_EQ(r.body.rfind("invalid AdmissionReview: request body is not JSON", 0), 0u) << r.body;
  r = server.serve("/mutate",
                   R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "invalid AdmissionReview: request.uid is missing");
  EXPECT_EQ(calls.load(), 0);
  EXPECT_EQ(seen.get(), (std::vector<std::pair<std::string, std::string>>{{"/mutate", "bad_request"},
                                                                          {"/mutate", "bad_request"}}));
}

// HandlerOptions::object_fields: the handler sees the object cut down to the fields it declared; the body
// is still checked whole (VAL-9).
TEST_F(Fixture, HandlerGetsTheObjectCutToItsFields) {
  HandlerOptions o;
  o.object_fields = std::make_shared<const common::JsonProjection>(
      common::JsonProjection::members({{"metadata", common::JsonProjection::members({{"name", {}}})}}));
  json seen_object;
  server.handle(
      "/cut",
      [&](const AdmissionRequest& req) {
        seen_object = *req.object;
        return AdmissionResponse::allow();
      },
      o);
  json object = {{"metadata", {{"name", "p"}, {"uid", "x"}}}, {"spec", {{"containers", json::array()}}}};
  HttpReply r = server.serve("/cut", body("uid-1", object));
  EXPECT_EQ(response(r)["allowed"], true);
  EXPECT_EQ(seen_object, json({{"metadata", {{"name", "p"}}}}));
  std::string bad = body("uid-2", object);
  bad.replace(bad.find("[]"), 2, "[,]");
  HttpReply refused = server.serve("/cut", bad);
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body.rfind("invalid AdmissionReview: request body is not JSON", 0), 0u) << refused.body;
}

// One serving thread per CPU the engine may use: the affinity mask, capped by a cgroup v2 CPU quota
// (rounded up to whole CPUs), 1 to 8.
TEST(ServerThreads, OnePerCpuOfTheMaskAndTheQuota) {
  struct Case {
    int cpus;
    const char* cpu_max;
    int want;
  };
  for (const Case& c : std::vector<Case>{
           {2, "", 2},
           {2, "max 100000\n", 2},
           {4, "200000 100000\n", 2},
           {4, "150000 100000", 2},  // 1.5 CPUs: 2 threads
           {4, "50000 100000", 1},
           {1, "400000 100000", 1},  // the mask wins
           {64, "max 100000", 8},    // at most 8
           {0, "", 1},               // at least 1
           {4, "garbage", 4},        // unreadable: the mask
           {4, "12x 100000", 4},
           {4, "100000 0", 4},
       }) {
    EXPECT_EQ(server_threads_for(c.cpus, c.cpu_max), c.want) << c.cpus << " / " << c.cpu_max;
  }
  // A process pinned to one CPU (as the benchmark pins its server) gets one thread.
  int pinned = 0;
  std::thread([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0) pinned = default_server_threads();
  }).join();
  EXPECT_EQ(pinned, 1);
  EXPECT_GE(default_server_threads(), 1);
}

TEST_F(Fixture, UnknownPathIs404AndNotObserved) {
  HttpReply r = server.serve("/nowhere", body());
  EXPECT_EQ(r.status, 404);
  EXPECT_TRUE(seen.get().empty());
}

// ADM-2: a mutation handler that throws answers allowed: true without a patch and counts as error.
TEST_F(Fixture, ThrowingMutationHandlerFailsOpen) {
  server.handle("/mutate",
                [](const AdmissionRequest&) -> AdmissionResponse { throw std::runtime_error("boom"); });
  json out = response(server.serve("/mutate", body("u-9")));
  EXPECT_EQ(out, (json{{"uid", "u-9"}, {"allowed", true}}));
  EXPECT_EQ(seen.get(), (std::vector<std::pair<std::string, std::string>>{{"/mutate", "error"}}));
}

TEST_F(Fixture, ThrowingValidationHandlerIsHttp500) {
  HandlerOptions v;
  v.mutating = false;
  v.fail_open = false;
  server.handle(
      "/validate", [](const AdmissionRequest&) -> AdmissionResponse { throw 42; }, v);
  HttpReply r = server.serve("/validate", body());
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body.rfind("internal error: ", 0), 0u);
  EXPECT_EQ(seen.get(), (std::vector<std::pair<std::string, std::string>>{{"/validate", "error"}}));
}

TEST_F(Fixture, PatchFromValidatingHandlerOrBadPatchIsAnError) {
  HandlerOptions v;
  v.mutating = false;
  v.fail_open = false;
  server.handle("/validate", add_label, v);
  EXPECT_EQ(server.serve("/validate", body()).status, 500);
  server.handle("/mutate", [](const AdmissionRequest&) {
    AdmissionResponse r;
    r.patch = "{broken";
    return r;
  });
  json out = response(server.serve("/mutate", body("u")));
  EXPECT_EQ(out, (json{{"uid", "u"}, {"allowed", true}}));
  EXPECT_EQ(seen.get(),
            (std::vector<std::pair<std::string, std::string>>{{"/validate", "error"}, {"/mutate", "error"}}));
}

// VAL-9: a handler may answer allowed without a patch for an internal problem and have it counted as error.
TEST_F(Fixture, InternalErrorFlagCountsAsError) {
  server.handle("/mutate", [](const AdmissionRequest&) {
    AdmissionResponse r;
    r.internal_error = true;
    return r;
  });
  EXPECT_EQ(response(server.serve("/mutate", body("u")))["allowed"], true);
  EXPECT_EQ(seen.get(), (std::vector<std::pair<std::string, std::string>>{{"/mutate", "error"}}));
}

// ADM-2: a handler that overruns its deadline is answered fail-open; its thread finishes later.
TEST_F(Fixture, OverrunningHandlerIsAnsweredFailOpen) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  HandlerOptions o;
  o.deadline = 50ms;
  server.handle(
      "/slow",
      [released, &calls](const AdmissionRequest& req) {
        ++calls;
        released.wait();
        return add_label(req);
      },
      o);
  json out = response(server.serve("/slow", body("late-1")));
  EXPECT_EQ(out, (json{{"uid", "late-1"}, {"allowed", true}}));
  EXPECT_EQ(seen.get(), (std::vector<std::pair<std::string, std::string>>{{"/slow", "error"}}));
  release.set_value();
  server.stop();  // waits for the overrun handler
  EXPECT_EQ(calls.load(), 1);
}

TEST(ServerLimits, TooManyOverrunHandlersAnswerAtOnce) {
  ServerOptions so;
  so.max_overrun_handlers = 1;
  Server server(so, nullptr);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  HandlerOptions o;
  o.deadline = 30ms;
  server.handle(
      "/slow",
      [released, &calls](const AdmissionRequest&) {
        ++calls;
        released.wait();
        return AdmissionResponse::allow();
      },
      o);
  EXPECT_EQ(server.serve("/slow", body("a")).status, 200);
  HttpReply second = server.serve("/slow", body("b"));
  EXPECT_EQ(json::parse(second.body)["response"], (json{{"uid", "b"}, {"allowed", true}}));
  EXPECT_EQ(second.outcome, Outcome::kError);
  EXPECT_EQ(calls.load(), 1);  // the second request did not start a handler
  release.set_value();
  server.stop();
}

// The real listener: TLS with the serving certificate, admission over HTTPS, /healthz.
struct Tls : ::testing::Test {
  SelfSigned certs;
  std::unique_ptr<Server> server;
  void SetUp() override {
    auto generated = generate_self_signed({});
    ASSERT_TRUE(generated.has_value()) << generated.error().str();
    certs = *generated;
    auto cert = ServingCertificate::from_pem(certs.serving);
    ASSERT_TRUE(cert.has_value());
    ServerOptions so;
    so.bind_address = "127.0.0.1:0";
    so.threads = 2;
    server = std::make_unique<Server>(so, *cert);
    server->handle("/mutate", add_label);
    auto started = server->start();
    ASSERT_TRUE(started.has_value()) << started.error().str();
    ASSERT_GT(server->port(), 0);
  }
  std::unique_ptr<httplib::SSLClient> client(bool with_ca = true) {
    auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", server->port());
    c->enable_server_certificate_verification(true);
    if (with_ca) c->set_ca_cert_store(common::make_store(certs.ca.cert_pem)->release());
    c->set_connection_timeout(5, 0);
    c->set_read_timeout(10, 0);
    return c;
  }
};

TEST_F(Tls, ServesAdmissionAndHealthOverHttps) {
  auto c = client();
  auto health = c->Get("/healthz");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok");
  auto res = c->Post("/mutate?timeout=10s", body("tls-1"), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  json out = json::parse(res->body)["response"];
  EXPECT_EQ(out["uid"], "tls-1");
  EXPECT_EQ(out["patchType"], "JSONPatch");
  auto bad = c->Post("/mutate", "{}", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);  // VAL-9
  EXPECT_EQ(bad->body, "invalid AdmissionReview: apiVersion is missing, expected \"admission.k8s.io/v1\"");
  EXPECT_EQ(server->host(), "127.0.0.1");
}

TEST_F(Tls, ClientWithoutTheCaFailsVerification) {
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", server->port());
  c->enable_server_certificate_verification(true);
  c->set_ca_cert_path("/nonexistent-ca.pem");
  c->set_connection_timeout(5, 0);
  EXPECT_FALSE(c->Get("/healthz"));
}

int listening_socket(int& port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  listen(fd, 4);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port = ntohs(addr.sin_port);
  return fd;
}

// ENG-3: a busy port is an error naming the flag.
TEST(ServerBind, BusyPortAndBadAddress) {
  auto cert = ServingCertificate::from_pem(generate_self_signed({})->serving);
  ASSERT_TRUE(cert.has_value());
  int port = 0;
  int fd = listening_socket(port);
  ServerOptions so;
  so.bind_address = "127.0.0.1:" + std::to_string(port);
  Server busy(so, *cert);
  auto r = busy.start();
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("--webhook-bind-address"), std::string::npos) << r.error().str();
  EXPECT_NE(r.error().str().find("in use"), std::string::npos) << r.error().str();
  close(fd);
  so.bind_address = "localhost";
  Server bad(so, *cert);
  r = bad.start();
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("--webhook-bind-address"), std::string::npos);
}

}  // namespace
}  // namespace kubex::webhook
