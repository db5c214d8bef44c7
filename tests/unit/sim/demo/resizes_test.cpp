// The demo's second act (issue 15 item 5): why a pod is being replaced, the resize history read from the
// workloads' rollback-state (RBK-1) and the evictions counted by the engine (OBS-5), as the user reads them.
#include "sim/demo/resizes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/demo/view.h"

namespace kubex::sim::demo {
namespace {

using nlohmann::json;

json event(const std::string& reason, const std::string& pod, const std::string& at, const std::string& message) {
  return {{"reason", reason},
          {"message", message},
          {"lastTimestamp", at},
          {"involvedObject", {{"kind", "Pod"}, {"namespace", "ml"}, {"name", pod}}}};
}

TEST(DemoResizes, NotesTakeEachPodsNewestEvictionEvent) {
  json events = {{"items",
                  {event("EvictionBlocked", "a", "2026-12-02T10:00:00Z", "refused by PDB web"),
                   event("PolicyEvaluationEvictResize", "a", "2026-12-02T10:00:30Z", "to 0.72"),
                   event("Scheduled", "b", "2026-12-02T10:00:40Z", "bound"),
                   event("PolicyEvaluationEvictRollback", "c", "2026-12-02T10:00:40Z", "to nvidia.com/gpu 1")}}};
  auto notes = eviction_notes(events);
  EXPECT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes["ml/a"], "resize: to 0.72");
  EXPECT_EQ(notes["ml/c"], "rollback: to nvidia.com/gpu 1");
  EXPECT_EQ(pdb_refusals(events), std::vector<std::string>{"ml/a: refused by PDB web"});
}

TEST(DemoResizes, NotesShowOnlyUnderPodsBeingReplaced) {
  std::vector<PodRow> rows(2);
  rows[0].ns = rows[1].ns = "ml";
  rows[0].name = "a";
  rows[0].status = "Terminating";
  rows[1].name = "c";
  rows[1].status = "Running";
  attach_notes(rows, {{"ml/a", "resize: to 0.72"}, {"ml/c", "rollback: x"}});
  EXPECT_EQ(rows[0].note, "resize: to 0.72");
  EXPECT_EQ(rows[1].note, "");
  std::string table = render_rows(rows);
  EXPECT_NE(table.find("\n    ^ replacing: resize: to 0.72\n"), std::string::npos) << table;
}

TEST(DemoResizes, EvictionCountsFromTheEnginesMetrics) {  // OBS-5
  std::string metrics =
      "# TYPE kubex_evictions_total counter\n"
      "kubex_evictions_total{reason=\"resize\",result=\"success\"} 2\n"
      "kubex_evictions_total{reason=\"resize\",result=\"pdb_blocked\"} 1\n"
      "kubex_evictions_total{reason=\"rollback\",result=\"success\"} 0\n"
      "kubex_admission_requests_total{webhook=\"late\",result=\"patched\"} 9\n";
  EvictionCounts c = eviction_counts(metrics);
  EXPECT_EQ(c.total("success"), 2);
  EXPECT_EQ(c.total("pdb_blocked"), 1);
  std::string text = render_evictions(c, {"ml/a: refused by PDB web"});
  EXPECT_NE(text.find("Evictions: 2 done, 1 refused by a PodDisruptionBudget, 0 failed"), std::string::npos) << text;
  EXPECT_NE(text.find("  resize: 3\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("  rollback:"), std::string::npos) << text;
  EXPECT_NE(text.find("refused: ml/a: refused by PDB web"), std::string::npos) << text;
}

}  // namespace
}  // namespace kubex::sim::demo
