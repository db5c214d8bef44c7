// `kubex report`'s consolidation section (SPEC RPT-1, CON-11; issue 34 item 7): the line says which nodes are
// already empty and what a drain would add, and the report lists the drains kubex carried out in the window.
#include "engine/report_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/report_model.h"

namespace kubex::engine {
namespace {

namespace pk = decide::packing;

PolicyPlan pool(std::vector<std::pair<std::string, decide::Hundredths>> allocated) {
  PolicyPlan p;
  p.name = "gpu-consolidation";
  for (const auto& [node, a] : allocated) {
    pk::NodeUsage n;
    n.name = node;
    n.gpu_capacity = 2;
    n.allocated = a;
    p.plan.nodes.push_back(n);
    p.plan.gpu_capacity += 2;
    p.plan.gpu_allocated += a;
    ++p.plan.pool_nodes;
  }
  return p;
}

// RPT-1 (issue 34 item 7): "4 GPUs reclaimable now" said nothing of where; two nodes were simply empty.
TEST(ReportConsolidation, TheLineNamesTheEmptyNodesAndWhatADrainAdds) {
  PolicyPlan p = pool({{"g-node-0", 150}, {"g-node-1", 0}, {"g-node-2", 0}});
  p.plan.estimated_reclaimable_gpus = 4;
  EXPECT_EQ(consolidation_line(p),
            "gpu-consolidation: 4 GPUs reclaimable now (pool of 3 nodes, 6 GPUs, 1.50 allocated): 2 nodes are empty "
            "(g-node-1, g-node-2, 4 GPUs); a drain would free 0 more");
  EXPECT_EQ(consolidation_entry(p)["emptyNodes"], nlohmann::json({"g-node-1", "g-node-2"}));

  PolicyPlan busy = pool({{"g-node-0", 50}, {"g-node-1", 120}});
  busy.plan.estimated_reclaimable_gpus = 2;
  busy.sequence.gpus_freed = 2;
  busy.sequence.steps.push_back({});
  busy.sequence.steps.back().node = "g-node-0";
  EXPECT_EQ(consolidation_line(busy),
            "gpu-consolidation: 2 GPUs reclaimable now (pool of 2 nodes, 4 GPUs, 1.70 allocated): no node is empty; "
            "a drain would free 2 (kubex plan consolidation: drain g-node-0)");
}

TEST(ReportConsolidation, TheTableAndJsonListTheDrainsCarriedOut) {  // RPT-1 (issue 34 item 7)
  ReportData r;
  r.since = "24h";
  r.consolidation.push_back(pool({{"g-node-0", 100}}));
  r.drains = {{"gpu-consolidation", "g-node-3", "2026-12-05T08:10:00Z", "drained g-node-3: 2 pods moved"}};
  std::ostringstream out;
  print_report_table(r, out);
  EXPECT_NE(out.str().find("  drains kubex carried out in the window (DrainCompleted events, "
                           "status.lastDrainedNode):\n    2026-12-05T08:10:00Z gpu-consolidation drained g-node-3: "
                           "drained g-node-3: 2 pods moved\n"),
            std::string::npos)
      << out.str();
  EXPECT_EQ(report_json(r)["consolidation"]["drains"][0]["node"], "g-node-3");
  r.drains.clear();
  std::ostringstream none;
  print_report_table(r, none);
  EXPECT_NE(none.str().find("status.lastDrainedNode): none\n"), std::string::npos) << none.str();
}

}  // namespace
}  // namespace kubex::engine
