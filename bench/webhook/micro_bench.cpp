// Micro-benchmarks of the webhook path's stages without TLS or HTTP (issue 6), on the same scenario as
// bench-webhook: where a review's time goes. Each stage includes the ones listed before it only where said.
//   DecideAdmission   decide::decide_admission alone (the pure decision: match, plan, patch); /0 on the
//                     whole pod, /1 on the pod cut to decide::admission_pod_fields() as the webhook decodes
//                     it
//   DecodeReview      the AdmissionReview body -> AdmissionRequest (JSON parse of ~4 KB); /0 the whole
//                     review, /1 with the pod path's projection (PodAdmission::handler_options)
//   PodAdmission      PodAdmission::handle on the projected request: decision + catalog/owner lookups + the
//                     summary log line
//   EncodeReview      the response envelope with its base64 JSONPatch
//   ServerServe/0     webhook::Server::serve with the handler inline (deadline 0): decode + handler + encode
//   +
//                     metrics, what the TLS listener runs per review on its own thread (it also arms and
//                     cancels the 8 s deadline, about a microsecond)
//   ServerServe/1     Server::serve as tests call it: the handler on a thread of its own (so serve() can
//   return
//                     at the deadline); the difference to /0 is that thread handoff
#include <benchmark/benchmark.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "api/keys.h"
#include "common/json_projection.h"
#include "common/log.h"
#include "decide/admission/pod_mutation.h"
#include "kubex_paths.h"
#include "kube/runtime/metrics.h"
#include "scenario.h"
#include "webhook/admission_metrics.h"
#include "webhook/server.h"

using namespace kubex;

namespace {

const bench::Scenario& scenario() {
  static const bench::Scenario s = [] {
    auto r = bench::make_scenario(kubex_paths::source_dir());
    if (!r) {
      std::fprintf(stderr, "scenario: %s\n", r.error().str().c_str());
      std::abort();
    }
    // The summary line is formatted and written as in the engine (info), to /dev/null.
    common::set_log_output(std::fopen("/dev/null", "w"));
    common::set_log_level(common::LogLevel::kInfo);
    return std::move(*r);
  }();
  return s;
}

// The review as the pod paths decode it.
const common::JsonProjection& pod_review_fields() {
  static const common::JsonProjection fields =
      webhook::review_fields(*webhook::PodAdmission::handler_options().object_fields);
  return fields;
}

void DecideAdmission(benchmark::State& state) {
  const auto& s = scenario();
  const nlohmann::json cut = common::project(s.pod, decide::admission_pod_fields());
  decide::AdmissionInput in;
  in.pod = state.range(0) == 0 ? &s.pod : &cut;
  in.global = &s.catalog->global();
  in.evaluation = &s.catalog->evaluation();
  in.ns = bench::kNamespace;
  in.workload = &s.owner;
  in.candidates = s.catalog->candidates();
  for (auto _ : state) {
    auto d = decide::decide_admission(in);
    if (!d.patched()) state.SkipWithError("the decision did not patch the pod");
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(DecideAdmission)->Arg(0)->Arg(1);

void DecodeReview(benchmark::State& state) {
  const auto& s = scenario();
  const common::JsonProjection* fields = state.range(0) == 0 ? nullptr : &pod_review_fields();
  for (auto _ : state) {
    auto r = webhook::decode_admission_review(s.review, fields);
    if (!r) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * s.review.size()));
}
BENCHMARK(DecodeReview)->Arg(0)->Arg(1);

void PodAdmission(benchmark::State& state) {
  const auto& s = scenario();
  webhook::PodAdmission handler(bench::pod_admission_deps(s));
  auto req = webhook::decode_admission_review(s.review, &pod_review_fields());
  for (auto _ : state) {
    auto r = handler.handle(*req, decide::Pass::kLate);
    if (!r.has_patch()) state.SkipWithError("no patch");
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(PodAdmission);

void EncodeReview(benchmark::State& state) {
  const auto& s = scenario();
  webhook::PodAdmission handler(bench::pod_admission_deps(s));
  auto req = webhook::decode_admission_review(s.review);
  auto resp = handler.handle(*req, decide::Pass::kLate);
  for (auto _ : state) {
    auto body = webhook::encode_admission_review(req->uid, resp);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(EncodeReview);

// state.range(0): 0 = the handler inline (deadline 0), as the TLS listener runs it; 1 = on a thread of its
// own, as Server::serve() runs it for tests, which shows what handing the call to another thread costs.
void ServerServe(benchmark::State& state) {
  const auto& s = scenario();
  kube::Metrics metrics;
  webhook::AdmissionMetrics admission_metrics(metrics);
  webhook::Server server(webhook::ServerOptions{}, nullptr);  // serve() needs no listener
  server.set_observer(admission_metrics.observer());
  auto handler = std::make_shared<webhook::PodAdmission>(bench::pod_admission_deps(s));
  webhook::HandlerOptions ho = webhook::PodAdmission::handler_options();  // as the engine installs it
  if (state.range(0) == 0) ho.deadline = std::chrono::milliseconds(0);
  server.handle(
      api::keys::kLatePath,
      [handler](const webhook::AdmissionRequest& r) { return handler->handle(r, decide::Pass::kLate); }, ho);
  for (auto _ : state) {
    auto reply = server.serve(api::keys::kLatePath, s.review);
    if (reply.outcome != webhook::Outcome::kPatched) state.SkipWithError("not patched");
    benchmark::DoNotOptimize(reply);
  }
}
BENCHMARK(ServerServe)->Arg(1)->Arg(0)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
