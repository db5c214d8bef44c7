// SIM-8 fault injection: the file format (field-path errors), rule matching, seeded determinism, rates, and the
// Status bodies kube-apiserver sends for each fault.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "common/yaml.h"
#include "sim/apiserver/faults.h"

using namespace kubex::sim;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

json yaml(const std::string& text) {
  auto doc = kubex::common::yaml_to_json(text);
  EXPECT_TRUE(doc) << doc.error().str();
  return doc ? *doc : json();
}

FaultConfig parse_ok(const std::string& text) {
  auto c = FaultConfig::parse(yaml(text));
  EXPECT_TRUE(c) << c.error().str();
  return c ? *c : FaultConfig{};
}

std::string parse_error(const std::string& text, const std::string& path = "") {
  auto c = FaultConfig::parse(yaml(text), path);
  EXPECT_FALSE(c) << text;
  return c ? std::string() : c.error().str();
}

FaultRequest request(std::string verb, std::string resource, std::string ns = "ml", std::string ua = "kubex/0.1",
                     std::string name = "") {
  FaultRequest r;
  r.verb = std::move(verb);
  r.resource = std::move(resource);
  r.ns = std::move(ns);
  r.user_agent = std::move(ua);
  r.name = std::move(name);
  return r;
}

}  // namespace

TEST(FaultConfig, ParsesTheDocumentedExample) {
  auto c = parse_ok(R"(
seed: 42
rules:
  - name: pods
    verbs: [list, get]
    resources: [pods, deployments.apps, pods/eviction, "*/status"]
    namespaces: [ml]
    userAgents: [kubex/]
    exceptUserAgents: [kubectl]
    after: 30s
    until: 2m
    maxFaults: 10
    tooManyRequests: {rate: 0.1, retryAfterSeconds: 2}
    serverError: {rate: 0.05, codes: [500, 503], retryAfterSeconds: 1}
    latency: {rate: 1.0, min: 10ms, max: 200ms}
  - verbs: [watch]
    watchCut: {afterEventsMin: 1, afterEventsMax: 20, afterTimeMin: 5s, afterTimeMax: 30s, abruptRate: 0.5}
    watchGone: {rate: 0.1}
)");
  ASSERT_EQ(c.rules.size(), 2u);
  EXPECT_EQ(*c.seed, 42u);
  const auto& r = c.rules[0];
  EXPECT_EQ(r.name, "pods");
  ASSERT_EQ(r.resources.size(), 4u);
  EXPECT_EQ(r.resources[0].resource, "pods");
  EXPECT_FALSE(r.resources[0].group);
  EXPECT_EQ(r.resources[0].subresource, "");
  EXPECT_EQ(r.resources[1].resource, "deployments");
  EXPECT_EQ(*r.resources[1].group, "apps");
  EXPECT_EQ(r.resources[2].subresource, "eviction");
  EXPECT_EQ(r.resources[3].resource, "*");
  EXPECT_EQ(r.resources[3].subresource, "status");
  EXPECT_EQ(r.after, 30s);
  EXPECT_EQ(*r.until, 120s);
  EXPECT_EQ(*r.max_faults, 10u);
  EXPECT_DOUBLE_EQ(r.too_many_rate, 0.1);
  EXPECT_EQ(r.retry_after_seconds, 2);
  EXPECT_EQ(r.server_error_codes, (std::vector<int>{500, 503}));
  EXPECT_EQ(r.server_error_retry_after_seconds, 1);
  EXPECT_EQ(r.latency_min, 10ms);
  EXPECT_EQ(r.latency_max, 200ms);
  const auto& w = c.rules[1];
  EXPECT_TRUE(w.watch_only);
  EXPECT_EQ(w.cut_events_min, 1u);
  EXPECT_EQ(w.cut_events_max, 20u);
  EXPECT_EQ(w.cut_time_min, 5s);
  EXPECT_EQ(w.cut_time_max, 30s);
  EXPECT_DOUBLE_EQ(w.cut_abrupt_rate, 0.5);
  EXPECT_DOUBLE_EQ(w.watch_gone_rate, 0.1);
}

TEST(FaultConfig, DefaultsAreRateOneAndA500) {
  auto c = parse_ok("rules:\n- serverError: {}\n  tooManyRequests: {rate: 0}\n- latency: {min: 5ms}\n");
  EXPECT_FALSE(c.seed);
  EXPECT_DOUBLE_EQ(c.rules[0].server_error_rate, 1.0);
  EXPECT_EQ(c.rules[0].server_error_codes, std::vector<int>{500});
  EXPECT_EQ(c.rules[0].retry_after_seconds, 1);
  EXPECT_FALSE(c.rules[0].watch_only);
  EXPECT_DOUBLE_EQ(c.rules[1].latency_rate, 1.0);
  EXPECT_EQ(c.rules[1].latency_max, 5ms);
}

TEST(FaultConfig, ErrorsNameTheFieldPath) {
  EXPECT_EQ(parse_error("rules:\n- tooManyRequests: {rate: 1.5}\n"),
            "rules[0].tooManyRequests.rate: must be a number between 0 and 1");
  EXPECT_EQ(parse_error("rules:\n- latency: {min: 10ms}\n- verbs: [get, fetch]\n  latency: {min: 1ms}\n"),
            "rules[1].verbs[1]: unsupported verb \"fetch\": supported verbs: create, delete, deletecollection, get, "
            "list, patch, update, watch, or \"*\"");
  EXPECT_EQ(parse_error("rules:\n- serverError: {codes: [500, 502]}\n"),
            "rules[0].serverError.codes[1]: must be 500, 503 or 504");
  EXPECT_EQ(parse_error("rules:\n- latency: {min: 10}\n"),
            "rules[0].latency.min: must be a duration such as \"100ms\", \"2s\" or \"1m\"");
  EXPECT_EQ(parse_error("rules:\n- latency: {min: 10ms, max: 5ms}\n"),
            "rules[0].latency.max: must not be less than min");
  EXPECT_EQ(parse_error("rules:\n- latency: {min: 1x}\n"),
            "rules[0].latency.min: time: unknown unit \"x\" in duration \"1x\"");
  EXPECT_EQ(parse_error("rules:\n- tooManyRequest: {rate: 1}\n").substr(0, 41),
            "rules[0].tooManyRequest: unknown field (k");
  EXPECT_EQ(parse_error("rules:\n- verbs: [get]\n"),
            "rules[0]: has no fault: give tooManyRequests, serverError, latency, watchCut or watchGone");
  EXPECT_EQ(parse_error("rules:\n- verbs: [get]\n  watchGone: {rate: 0.5}\n"),
            "rules[0].verbs: watchCut and watchGone apply to WATCH requests, but verbs has no watch");
  EXPECT_EQ(parse_error("rules:\n- tooManyRequests: {rate: 0.6}\n  serverError: {rate: 0.5}\n"),
            "rules[0]: the rates of tooManyRequests, serverError and watchGone add up to more than 1 (one request "
            "gets at most one error answer)");
  EXPECT_EQ(parse_error("rules:\n- watchCut: {abruptRate: 1}\n"),
            "rules[0].watchCut: needs afterEventsMin or afterTimeMin (or both)");
  EXPECT_EQ(parse_error("rules:\n- watchCut: {afterTimeMin: 500ms}\n"),
            "rules[0].watchCut.afterTimeMin: must be at least 1s");
  EXPECT_EQ(parse_error("rules:\n- watchCut: {afterEventsMin: 0}\n"),
            "rules[0].watchCut.afterEventsMin: must be an integer between 1 and 1000000000");
  EXPECT_EQ(parse_error("rules:\n- resources: [Pods]\n  latency: {min: 1ms}\n"),
            "rules[0].resources[0]: invalid resource \"Pods\": write resource[.group][/subresource], e.g. pods, "
            "pods/eviction, deployments.apps");
  EXPECT_EQ(parse_error("rules:\n- after: 1m\n  until: 30s\n  latency: {min: 1ms}\n"),
            "rules[0].until: must be later than after");
  EXPECT_EQ(parse_error("rules:\n- maxFaults: 0\n  latency: {min: 1ms}\n"),
            "rules[0].maxFaults: must be an integer between 1 and 9223372036854775807");
  EXPECT_EQ(parse_error("seed: -1\nrules: []\n"), "seed: must be a non-negative integer");
  EXPECT_EQ(parse_error("seed: 1\n"), "rules: required (a list of rules)");
  EXPECT_EQ(parse_error("rules: [1]\n"), "rules[0]: must be a mapping");
  EXPECT_EQ(parse_error("- 1\n"), "the faults file must be a YAML mapping with seed and rules");
  EXPECT_EQ(parse_error("seed: 1\nrule: []\n").substr(0, 30), "rule: unknown field (known fie");
  // Under the --config file's `faults` key, paths start there.
  EXPECT_EQ(parse_error("rules:\n- latency: {rate: -1, min: 1ms}\n", "faults"),
            "faults.rules[0].latency.rate: must be a number between 0 and 1");
}

TEST(FaultConfig, LoadNamesTheFile) {
  auto missing = FaultConfig::load("/nonexistent/faults.yaml");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().str().find("/nonexistent/faults.yaml"), std::string::npos) << missing.error().str();
}

TEST(FaultInjector, MatchesVerbsResourcesNamespacesAndUserAgents) {
  FaultInjector f(parse_ok(R"(
seed: 1
rules:
  - verbs: [get, list]
    resources: [pods, deployments.apps, "pods/eviction", "*/status"]
    namespaces: [ml]
    userAgents: [kubex/, faulty]
    exceptUserAgents: [faulty-but-exempt]
    tooManyRequests: {rate: 1}
)"));
  auto status = [&](FaultRequest r) { return f.decide(r, 0ms).status; };
  EXPECT_EQ(status(request("get", "pods")), 429);
  EXPECT_EQ(status(request("list", "pods")), 429);
  EXPECT_EQ(status(request("watch", "pods")), 0);  // verb
  EXPECT_EQ(status(request("create", "pods")), 0);
  EXPECT_EQ(status(request("get", "configmaps")), 0);  // resource
  EXPECT_EQ(status(request("get", "pods", "default")), 0);  // namespace
  EXPECT_EQ(status(request("list", "pods", "")), 0);  // all namespaces are not "ml"
  EXPECT_EQ(status(request("get", "pods", "ml", "kubectl/v1.32.0 (linux/amd64)")), 0);  // user agent
  EXPECT_EQ(status(request("get", "pods", "ml", "faulty-client/1")), 429);
  EXPECT_EQ(status(request("get", "pods", "ml", "faulty-but-exempt/1")), 0);
  EXPECT_EQ(status(request("get", "pods", "ml", "kubex-sim-agent/0.1")), 0);  // "kubex/" is not its prefix
  auto dep = request("get", "deployments");
  dep.group = "apps";
  EXPECT_EQ(status(dep), 429);
  dep.group = "extensions";
  EXPECT_EQ(status(dep), 0);
  auto sub = request("get", "pods");
  sub.subresource = "log";
  EXPECT_EQ(status(sub), 0);  // `pods` is the resource itself, as in RBAC
  sub.subresource = "eviction";
  EXPECT_EQ(status(sub), 429);
  auto st = request("get", "nodes");
  st.subresource = "status";
  EXPECT_EQ(status(st), 429);
}

TEST(FaultInjector, AStarMatchesEverythingAndWatchOnlyRulesOnlyWatches) {
  FaultInjector f(parse_ok(R"(
rules:
  - resources: ["*"]
    verbs: ["*"]
    latency: {min: 1ms}
  - watchGone: {}
)"));
  auto sub = request("create", "pods");
  sub.subresource = "binding";
  EXPECT_EQ(f.decide(sub, 0ms).latency, 1ms);
  auto w = request("watch", "pods");
  w.has_resource_version = true;
  EXPECT_EQ(f.decide(w, 0ms).status, 410);
  w.has_resource_version = false;  // a watch from "now" cannot be too old
  EXPECT_EQ(f.decide(w, 0ms).status, 0);
  auto counts = f.counts();
  EXPECT_EQ(counts["rules"][0]["matched"], 3);
  EXPECT_EQ(counts["rules"][1]["matched"], 2);  // the GET did not match the watch-only rule
  EXPECT_EQ(counts["rules"][1]["watchGone"], 1);
}

TEST(FaultInjector, AfterAndUntilBoundTheRule) {
  FaultInjector f(parse_ok("rules:\n- after: 10s\n  until: 20s\n  serverError: {codes: [503]}\n"));
  EXPECT_EQ(f.decide(request("get", "pods"), 9999ms).status, 0);
  EXPECT_EQ(f.decide(request("get", "pods"), 10s).status, 503);
  EXPECT_EQ(f.decide(request("get", "pods"), 19999ms).status, 503);
  EXPECT_EQ(f.decide(request("get", "pods"), 20s).status, 0);
}

TEST(FaultInjector, MaxFaultsStopsTheRule) {
  FaultInjector f(parse_ok("rules:\n- maxFaults: 3\n  tooManyRequests: {retryAfterSeconds: 2}\n"));
  std::vector<int> seen;
  for (int i = 0; i < 6; ++i) seen.push_back(f.decide(request("list", "pods"), 0ms).status);
  EXPECT_EQ(seen, (std::vector<int>{429, 429, 429, 0, 0, 0}));
  auto counts = f.counts();
  EXPECT_EQ(counts["rules"][0]["matched"], 6);
  EXPECT_EQ(counts["rules"][0]["faults"], 3);
  EXPECT_EQ(counts["total"]["tooManyRequests"], 3);
}

namespace {

const char* kMixedRules = "rules:\n- tooManyRequests: {rate: 0.2}\n  serverError: {rate: 0.2, codes: [500, 503]}\n";

std::vector<int> sequence(std::uint64_t seed, int n, const std::string& ua = "kubex/0.1") {
  FaultInjector f(parse_ok("seed: " + std::to_string(seed) + "\n" + kMixedRules));
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(f.decide(request("get", "pods", "ml", ua, "p"), 0ms).status);
  return out;
}

}  // namespace

TEST(FaultInjector, TheSameSeedGivesTheSameSequence) {
  EXPECT_EQ(sequence(42, 200), sequence(42, 200));
  EXPECT_NE(sequence(42, 200), sequence(43, 200));
  // Another client's requests do not shift a client's sequence (streams are per request kind).
  FaultInjector f(parse_ok(std::string("seed: 42\n") + kMixedRules));
  std::vector<int> interleaved;
  for (int i = 0; i < 200; ++i) {
    f.decide(request("get", "pods", "ml", "other/1", "p"), 0ms);
    f.decide(request("list", "pods", "ml", "kubex/0.1"), 0ms);
    interleaved.push_back(f.decide(request("get", "pods", "ml", "kubex/0.1", "p"), 0ms).status);
  }
  EXPECT_EQ(interleaved, sequence(42, 200));
}

TEST(FaultInjector, RatesAreHonoured) {
  FaultInjector f(parse_ok(R"(
seed: 7
rules:
  - tooManyRequests: {rate: 0.1}
    serverError: {rate: 0.2, codes: [500, 503, 504]}
    latency: {rate: 0.5, min: 10ms, max: 20ms}
)"));
  const int n = 20000;
  std::map<int, int> by_status;
  int latency = 0;
  for (int i = 0; i < n; ++i) {
    auto d = f.decide(request("get", "pods", "ml", "kubex/0.1", "p" + std::to_string(i % 37)), 0ms);
    ++by_status[d.status];
    if (d.latency.count()) {
      ++latency;
      EXPECT_GE(d.latency, 10ms);
      EXPECT_LE(d.latency, 20ms);
    }
  }
  auto near = [&](int got, double want) { EXPECT_NEAR(got / double(n), want, 0.015) << got; };
  near(by_status[429], 0.1);
  near(by_status[500], 0.2 / 3);
  near(by_status[503], 0.2 / 3);
  near(by_status[504], 0.2 / 3);
  near(by_status[0], 0.7);
  near(latency, 0.5);
  auto counts = f.counts();
  EXPECT_EQ(counts["total"]["tooManyRequests"], by_status[429]);
  EXPECT_EQ(counts["total"]["serverError"]["503"], by_status[503]);
  EXPECT_EQ(counts["total"]["serverErrors"], by_status[500] + by_status[503] + by_status[504]);
  EXPECT_EQ(counts["total"]["latency"]["count"], latency);
  EXPECT_EQ(counts["seed"], 7);
}

TEST(FaultInjector, WatchCutsDrawTheirLimitsAndAnErrorWinsOverACut) {
  FaultInjector f(parse_ok(R"(
seed: 3
rules:
  - watchCut: {afterEventsMin: 2, afterEventsMax: 5, afterTimeMin: 2s, afterTimeMax: 4s, abruptRate: 0.5}
  - userAgents: [broken]
    verbs: [watch]
    serverError: {codes: [503]}
)"));
  int abrupt = 0;
  std::set<std::uint64_t> events;
  for (int i = 0; i < 400; ++i) {
    auto d = f.decide(request("watch", "pods"), 0ms);
    ASSERT_TRUE(d.cut);
    EXPECT_EQ(d.cut_rule, 0);
    events.insert(d.cut_after_events);
    EXPECT_GE(d.cut_after, 2s);
    EXPECT_LE(d.cut_after, 4s);
    abrupt += d.cut_abrupt;
    f.cut_done(d.cut_rule, d.cut_abrupt);
  }
  EXPECT_EQ(events, (std::set<std::uint64_t>{2, 3, 4, 5}));
  EXPECT_NEAR(abrupt / 400.0, 0.5, 0.1);
  auto counts = f.counts();
  EXPECT_EQ(counts["rules"][0]["watchCut"]["abrupt"], abrupt);
  EXPECT_EQ(counts["rules"][0]["watchCut"]["clean"], 400 - abrupt);
  auto d = f.decide(request("watch", "pods", "ml", "broken/1"), 0ms);
  EXPECT_EQ(d.status, 503);
  EXPECT_EQ(d.rule, 1);
  EXPECT_FALSE(d.cut);
  EXPECT_EQ(f.counts()["rules"][0]["faults"], 400);  // the overridden cut was not counted
  EXPECT_TRUE(f.decide(request("get", "pods"), 0ms).none());  // watch faults never touch other verbs
}

TEST(FaultInjector, StatusBodiesAreKubeApiserversOwn) {
  json s429 = FaultInjector::status_body(429, 2, "x");
  EXPECT_EQ(s429, json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"Too many requests, please try again later.","reason":"TooManyRequests",
    "details":{"retryAfterSeconds":2},"code":429})"));
  json s500 = FaultInjector::status_body(500, 0, "injected");
  EXPECT_EQ(s500, json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"Internal error occurred: injected","reason":"InternalError",
    "details":{"causes":[{"message":"injected"}]},"code":500})"));
  json s503 = FaultInjector::status_body(503, 1, "injected");
  EXPECT_EQ(s503["reason"], "ServiceUnavailable");
  EXPECT_EQ(s503["code"], 503);
  EXPECT_EQ(s503["details"]["retryAfterSeconds"], 1);
  json s504 = FaultInjector::status_body(504, 0, "injected");
  EXPECT_EQ(s504["reason"], "Timeout");
  EXPECT_EQ(s504["details"], json::object());
  json s410 = FaultInjector::status_body(410, 0, "too old resource version: 5 (9)");
  EXPECT_EQ(s410, json::parse(R"J({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"too old resource version: 5 (9)","reason":"Expired","code":410})J"));
  EXPECT_EQ(FaultInjector::disabled_counts(), json::parse(R"({"enabled":false})"));
}
