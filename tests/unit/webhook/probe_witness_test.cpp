// WHH-2 failure messages: what the webhook server saw of each probe pod, and TLS handshake failures only
// when they happened during the probe asked about.
#include "webhook/probe_witness.h"

#include <gtest/gtest.h>


namespace kubex::webhook {
namespace {

TEST(ProbeWitness, RecordsPassesPerProbePod) {
  ProbeWitness w;
  auto t0 = ProbeWitness::Clock::now();
  w.saw_probe("kubex-webhook-probe-aaaaa", /*early_pass=*/true);
  w.saw_probe("kubex-webhook-probe-aaaaa", false);
  w.saw_probe("kubex-webhook-probe-bbbbb", false);
  auto a = w.sighting("kubex-webhook-probe-aaaaa", t0);
  EXPECT_TRUE(a.early);
  EXPECT_TRUE(a.late);
  auto b = w.sighting("kubex-webhook-probe-bbbbb", t0);
  EXPECT_FALSE(b.early);
  EXPECT_TRUE(b.late);
  auto none = w.sighting("kubex-webhook-probe-ccccc", t0);
  EXPECT_FALSE(none.early || none.late);
  EXPECT_EQ(none.tls_failure, "");
}

TEST(ProbeWitness, KeepsOnlyRecentProbes) {
  ProbeWitness w;
  for (int i = 0; i < 100; ++i) w.saw_probe("p" + std::to_string(i), false);
  auto t0 = ProbeWitness::Clock::now();
  EXPECT_FALSE(w.sighting("p0", t0).late);  // long gone: bounded memory
  EXPECT_TRUE(w.sighting("p99", t0).late);
}

TEST(ProbeWitness, TlsFailureCountsOnlySinceTheProbeStarted) {
  ProbeWitness w;
  w.saw_tls_failure("tlsv1 alert unknown ca");
  auto later = ProbeWitness::Clock::now() + std::chrono::seconds(1);
  EXPECT_EQ(w.sighting("p", later).tls_failure, "");  // an old failure says nothing about this probe
  auto before = ProbeWitness::Clock::now() - std::chrono::seconds(1);
  EXPECT_EQ(w.sighting("p", before).tls_failure, "tlsv1 alert unknown ca");
}

}  // namespace
}  // namespace kubex::webhook
