#include "sim/apiserver/store.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

using namespace kubex::sim;
using nlohmann::json;

namespace {

json obj(const std::string& ns, const std::string& name, json labels = json::object()) {
  return {{"metadata", {{"namespace", ns}, {"name", name}, {"labels", labels}}}, {"spec", {{"nodeName", "n1"}}}};
}

}  // namespace

TEST(Store, ResourceVersionsAreGlobalAndStampedIntoObjects) {
  Store s;
  json a = obj("ns", "a"), b = obj("ns", "b");
  auto ra = s.create("/pods", "ns/a", a, {});
  auto rb = s.create("/configmaps", "ns/b", b, {});
  ASSERT_EQ(ra.status, Store::WriteStatus::kOk);
  EXPECT_LT(ra.rv, rb.rv);
  EXPECT_EQ(a["metadata"]["resourceVersion"], std::to_string(ra.rv));
  EXPECT_EQ(s.current_rv(), rb.rv);
}

TEST(Store, OptimisticConcurrencyRejectsStaleWrites) {  // 409 on a stale resourceVersion
  Store s;
  json a = obj("ns", "a");
  auto r1 = s.create("/pods", "ns/a", a, {});
  json next = a;
  auto r2 = s.update("/pods", "ns/a", next, r1.rv, {});
  ASSERT_EQ(r2.status, Store::WriteStatus::kOk);
  json stale = a;
  EXPECT_EQ(s.update("/pods", "ns/a", stale, r1.rv, {}).status, Store::WriteStatus::kConflict);
  EXPECT_EQ(s.create("/pods", "ns/a", stale, {}).status, Store::WriteStatus::kExists);
  EXPECT_EQ(s.remove("/pods", "ns/a", r1.rv, nullptr).status, Store::WriteStatus::kConflict);
}

TEST(Store, ListFiltersByNamespaceAndPaginatesInKeyOrder) {
  Store s;
  for (int i = 0; i < 5; ++i) {
    json o = obj(i % 2 ? "b" : "a", "o" + std::to_string(i));
    s.create("/pods", object_key(o["metadata"]["namespace"], o["metadata"]["name"]), o, {});
  }
  auto only_a = s.list("/pods", "a", "", 0, nullptr);
  ASSERT_EQ(only_a.items.size(), 3u);
  auto page = s.list("/pods", "", "", 2, nullptr);
  EXPECT_TRUE(page.more);
  EXPECT_EQ(page.remaining, 3);
  EXPECT_EQ(page.last_key, "a/o2");
  auto rest = s.list("/pods", "", page.last_key, 10, nullptr);
  EXPECT_FALSE(rest.more);
  EXPECT_EQ(rest.items.size(), 3u);
  EXPECT_EQ(rest.items.front().index->name, "o4");  // keys are "ns/name": a/o4 then b/o1, b/o3
  auto filtered = s.list("/pods", "", "", 1, [](const ObjectIndex& i) { return i.ns == "b"; });
  EXPECT_TRUE(filtered.more);
  EXPECT_EQ(filtered.remaining, -1);  // unknown for filtered lists, like kube-apiserver
}

TEST(Store, IndexKeepsLabelsFieldsOwnersAndDeletion) {
  json o = obj("ns", "x", {{"b", "2"}, {"a", "1"}});
  o["metadata"]["ownerReferences"] = json::array({{{"uid", "u1"}}});
  o["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  o["status"]["phase"] = "Running";
  auto idx = build_index(o, {"spec.nodeName", "status.phase", "spec.missing"});
  ASSERT_NE(idx->label("a"), nullptr);
  EXPECT_EQ(*idx->label("a"), "1");
  EXPECT_EQ(idx->label("c"), nullptr);
  EXPECT_EQ(*idx->field("spec.nodeName"), "n1");
  EXPECT_EQ(*idx->field("status.phase"), "Running");
  EXPECT_EQ(*idx->field("spec.missing"), "");
  EXPECT_EQ(*idx->field("metadata.namespace"), "ns");
  EXPECT_EQ(idx->owner_uids, std::vector<std::string>{"u1"});
  EXPECT_TRUE(idx->deleting);
}

TEST(Store, WatchDeliversEventsInOrderAndExpiresOldVersions) {  // WATCH with 410 Gone
  Store s(3);
  std::uint64_t start = s.current_rv();
  auto cursor = s.watch("/pods", start);
  ASSERT_TRUE(cursor);
  json a = obj("ns", "a");
  auto c1 = s.create("/pods", "ns/a", a, {});
  s.update("/pods", "ns/a", a, c1.rv, {});
  s.remove("/pods", "ns/a", 0, nullptr);
  bool gone = false;
  auto evs = cursor->next(std::chrono::milliseconds(10), gone);
  ASSERT_FALSE(gone);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(evs[0].type, EventType::kAdded);
  EXPECT_EQ(evs[1].type, EventType::kModified);
  ASSERT_NE(evs[1].prev, nullptr);
  EXPECT_EQ(evs[2].type, EventType::kDeleted);
  // The window keeps 3 events; two more writes push the start out.
  json b = obj("ns", "b");
  s.create("/pods", "ns/b", b, {});
  s.create("/pods", "ns/c", b, {});
  EXPECT_FALSE(s.watch("/pods", start).has_value());
  EXPECT_TRUE(s.watch("/pods", s.current_rv()).has_value());
  // An existing cursor that fell behind reports gone.
  auto slow = s.watch("/pods", s.current_rv());
  for (int i = 0; i < 5; ++i) {
    json o = obj("ns", "z" + std::to_string(i));
    s.create("/pods", "ns/z" + std::to_string(i), o, {});
  }
  slow->next(std::chrono::milliseconds(1), gone);
  EXPECT_TRUE(gone);
}

TEST(Store, CompactAllForcesGoneForEveryEarlierVersion) {
  Store s;
  json a = obj("ns", "a");
  s.create("/pods", "ns/a", a, {});
  std::uint64_t before = s.current_rv() - 1;
  s.compact_all();
  EXPECT_FALSE(s.watch("/pods", before).has_value());
  EXPECT_FALSE(s.watch("/never-written", before).has_value());
  EXPECT_TRUE(s.watch("/pods", s.current_rv()).has_value());
}

TEST(Store, RestoreContinuesResourceVersionsAfterRecovery) {
  Store s;
  s.restore("/pods", "ns/a", obj("ns", "a").dump(), 41, {});
  s.finish_restore(41);
  EXPECT_EQ(s.current_rv(), 41u);
  EXPECT_FALSE(s.watch("/pods", 40).has_value());  // history before the restart is gone
  json b = obj("ns", "b");
  EXPECT_EQ(s.create("/pods", "ns/b", b, {}).rv, 42u);
}

TEST(Store, RemainingCountWithinANamespace) {
  Store s;
  for (int i = 0; i < 5; ++i) {
    json o = obj("a", "o" + std::to_string(i));
    s.create("/pods", "a/o" + std::to_string(i), o, {});
  }
  json other = obj("b", "x");
  s.create("/pods", "b/x", other, {});
  auto page = s.list("/pods", "a", "", 2, nullptr);
  EXPECT_TRUE(page.more);
  EXPECT_EQ(page.remaining, 3);  // b/x is not counted
}

TEST(Store, WatchWindowBeginsWhereTheCacheWasInitialised) {  // issue 12 item 11: 410 Gone for a too-old start
  Store s;
  json a = obj("ns", "a");
  s.create("/configmaps", "ns/a", a, {});
  std::uint64_t init = s.current_rv();
  EXPECT_TRUE(s.watch("/configmaps", 1).has_value());  // no window yet: the whole history is kept
  s.begin_watch_window();
  EXPECT_EQ(s.compacted_rv("/configmaps"), init);
  EXPECT_FALSE(s.watch("/configmaps", 1).has_value());
  EXPECT_FALSE(s.watch("/never-written", init - 1).has_value());
  auto cursor = s.watch("/configmaps", init);  // the initialisation version itself is inside the window
  ASSERT_TRUE(cursor.has_value());
  json b = obj("ns", "b");
  s.create("/configmaps", "ns/b", b, {});
  bool gone = true;
  auto evs = cursor->next(std::chrono::milliseconds(0), gone);
  EXPECT_FALSE(gone);
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].index->name, "b");
}
