// Leader election decisions (ENG-1): the pure decide_lease() state machine and the Lease spec codec.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/time_format.h"
#include "kube/runtime/leader_election.h"

namespace kubex::kube {
namespace {

using namespace std::chrono_literals;
using common::TimePoint;

const TimePoint kT0 = TimePoint{} + std::chrono::seconds(1'800'000'000);
const common::Duration kDuration = 15s;

LeaseRecord held_by(const std::string& who, int transitions = 3) {
  return LeaseRecord{who, 15, kT0 - 60s, kT0 - 1s, transitions};
}

TEST(DecideLease, NoLeaseCreatesIt) {
  auto d = decide_lease(std::nullopt, kT0, kT0, "me", kDuration);
  EXPECT_EQ(d.action, LeaseAction::kCreate);
  EXPECT_EQ(d.record, (LeaseRecord{"me", 15, kT0, kT0, 0}));
}

TEST(DecideLease, OwnLeaseIsRenewedKeepingAcquireTimeAndTransitions) {
  auto cur = held_by("me");
  auto d = decide_lease(cur, kT0 - 1s, kT0, "me", kDuration);
  EXPECT_EQ(d.action, LeaseAction::kRenew);
  EXPECT_EQ(d.record.holder, "me");
  EXPECT_EQ(d.record.acquire_time, cur.acquire_time);
  EXPECT_EQ(d.record.renew_time, kT0);
  EXPECT_EQ(d.record.transitions, 3);
}

TEST(DecideLease, LiveLeaseOfAnotherReplicaMeansWait) {
  // Observed 14.999 s ago: still within the 15 s lease.
  auto d = decide_lease(held_by("other"), kT0 - 14999ms, kT0, "me", kDuration);
  EXPECT_EQ(d.action, LeaseAction::kWait);
  EXPECT_EQ(d.record.holder, "other");
}

TEST(DecideLease, ExpiredLeaseIsTakenOverWithATransition) {
  auto d = decide_lease(held_by("other"), kT0 - 15s, kT0, "me", kDuration);
  EXPECT_EQ(d.action, LeaseAction::kAcquire);
  EXPECT_EQ(d.record, (LeaseRecord{"me", 15, kT0, kT0, 4}));
}

TEST(DecideLease, ExpiryUsesLocalObservationNotTheHoldersClock) {
  // The holder's renewTime is an hour old by OUR clock (skew), but we saw the record change just now.
  LeaseRecord cur{"other", 15, kT0 - 2h, kT0 - 1h, 1};
  EXPECT_EQ(decide_lease(cur, kT0 - 1s, kT0, "me", kDuration).action, LeaseAction::kWait);
  // And a renewTime "in the future" does not keep a lease alive that stopped changing 20 s ago.
  LeaseRecord future{"other", 15, kT0 + 1h, kT0 + 1h, 1};
  EXPECT_EQ(decide_lease(future, kT0 - 20s, kT0, "me", kDuration).action, LeaseAction::kAcquire);
}

TEST(DecideLease, RecordsLeaseDurationGovernsExpiry) {
  LeaseRecord cur = held_by("other");
  cur.lease_duration_seconds = 60;
  EXPECT_EQ(decide_lease(cur, kT0 - 30s, kT0, "me", kDuration).action, LeaseAction::kWait);
  cur.lease_duration_seconds = 0;  // none written: ours applies
  EXPECT_EQ(decide_lease(cur, kT0 - 30s, kT0, "me", kDuration).action, LeaseAction::kAcquire);
}

TEST(DecideLease, ReleasedLeaseIsAcquiredAtOnce) {
  LeaseRecord released{"", 1, kT0, kT0, 5};  // what release() writes
  auto d = decide_lease(released, kT0, kT0, "me", kDuration);
  EXPECT_EQ(d.action, LeaseAction::kAcquire);
  EXPECT_EQ(d.record.holder, "me");
  EXPECT_EQ(d.record.lease_duration_seconds, 15);
  EXPECT_EQ(d.record.transitions, 6);
}

TEST(LeaseRecordCodec, RoundTripsTheSpecInKubernetesFormats) {
  nlohmann::json lease = {
      {"apiVersion", "coordination.k8s.io/v1"}, {"kind", "Lease"}, {"metadata", {{"name", "l"}}}};
  LeaseRecord r{"host_1234abcd", 15, kT0 + 123456us, kT0 + 2s, 2};
  write_lease_record(lease, r);
  EXPECT_EQ(lease["spec"]["holderIdentity"], "host_1234abcd");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ(lease["spec"]["leaseTransitions"], 2);
  EXPECT_EQ(lease["spec"]["acquireTime"], common::format_rfc3339_micro(kT0 + 123456us));  // MicroTime
  EXPECT_EQ(lease_record_from(lease), r);
}

TEST(LeaseRecordCodec, MissingOrMalformedFieldsReadAsEmpty) {
  EXPECT_EQ(lease_record_from(nlohmann::json::object()), LeaseRecord{});
  nlohmann::json odd = {
      {"spec", {{"holderIdentity", 7}, {"renewTime", "yesterday"}, {"leaseDurationSeconds", "x"}}}};
  EXPECT_EQ(lease_record_from(odd), LeaseRecord{});
}

TEST(DefaultIdentity, IsHostnameUnderscoreRandomSuffix) {
  std::string a = default_identity(), b = default_identity();
  auto us = a.rfind('_');
  ASSERT_NE(us, std::string::npos);
  EXPECT_GT(us, 0u);
  EXPECT_EQ(a.size() - us - 1, 8u);
  EXPECT_EQ(a.substr(0, us), b.substr(0, b.rfind('_')));
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace kubex::kube
