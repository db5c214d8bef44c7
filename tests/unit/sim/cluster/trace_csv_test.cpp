// SIM-6: reading the Alibaba cluster-trace-gpu-v2023 CSV files, and one clear error (file, line, column) for
// a bad one.
#include "sim/cluster/trace_csv.h"

#include <gtest/gtest.h>

using namespace kubex::sim::cluster;

namespace {

constexpr const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time\n";

std::string pods_error(const std::string& text) {
  auto r = parse_trace_pods("pods.csv", text);
  return r ? std::string("(parsed)") : r.error().str();
}

std::string nodes_error(const std::string& text) {
  auto r = parse_trace_nodes("nodes.csv", text);
  return r ? std::string("(parsed)") : r.error().str();
}

}  // namespace

// SIM-6
TEST(TraceCsv, ReadsTheNodeList) {
  auto nodes = parse_trace_nodes("nodes.csv",
                                 "sn,cpu_milli,memory_mib,gpu,model\n"
                                 "openb-node-0000,64000,262144,2,P100\n"
                                 "openb-node-0001,96000,786432,8,G2\n"
                                 "openb-node-0002,32000,262144,0,\n");
  ASSERT_TRUE(nodes.has_value()) << nodes.error().str();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].name, "openb-node-0000");
  EXPECT_EQ((*nodes)[0].cpu_milli, 64000);
  EXPECT_EQ((*nodes)[0].memory_mib, 262144);
  EXPECT_EQ((*nodes)[0].gpus, 2);
  EXPECT_EQ((*nodes)[0].model, "P100");
  EXPECT_EQ((*nodes)[1].model, "G2");
  EXPECT_EQ((*nodes)[2].gpus, 0);
  EXPECT_EQ((*nodes)[2].model, "");
}

// SIM-6
TEST(TraceCsv, ReadsThePodList) {
  auto pods =
      parse_trace_pods("pods.csv", std::string(kPodHeader) +
                                       "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061\n"
                                       "openb-pod-0009,12000,16384,1,1000,V100M16|V100M32,LS,Pending,4975773,"
                                       "12902960,\n");
  ASSERT_TRUE(pods.has_value()) << pods.error().str();
  ASSERT_EQ(pods->size(), 2u);
  const TracePod& p = (*pods)[0];
  EXPECT_EQ(p.name, "openb-pod-0001");
  EXPECT_EQ(p.cpu_milli, 6000);
  EXPECT_EQ(p.memory_mib, 12288);
  EXPECT_EQ(p.num_gpu, 1);
  EXPECT_EQ(p.gpu_milli, 460);
  EXPECT_TRUE(p.gpu_spec.empty());
  EXPECT_EQ(p.qos, "LS");
  EXPECT_EQ(p.phase, "Running");
  EXPECT_EQ(p.creation_time, 427061);
  EXPECT_EQ(p.line, 2);
  EXPECT_EQ((*pods)[1].gpu_spec, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ((*pods)[1].phase, "Pending");
  EXPECT_EQ((*pods)[1].line, 3);
}

// SIM-6: columns are found by name; CRLF line ends, quoted fields, a byte order mark and blank lines are
// fine.
TEST(TraceCsv, ColumnsByNameAndCommonCsvVariants) {
  auto pods =
      parse_trace_pods("pods.csv",
                       "\xEF\xBB\xBF"
                       "creation_time,pod_phase,name,gpu_spec,gpu_milli,num_gpu,memory_mib,cpu_milli\r\n"
                       "\r\n"
                       "7,Running,\"p-1\",\"T4|P100\",230,1,1024,500\r\n");
  ASSERT_TRUE(pods.has_value()) << pods.error().str();
  ASSERT_EQ(pods->size(), 1u);
  EXPECT_EQ((*pods)[0].name, "p-1");
  EXPECT_EQ((*pods)[0].creation_time, 7);
  EXPECT_EQ((*pods)[0].gpu_spec, (std::vector<std::string>{"T4", "P100"}));
  EXPECT_EQ((*pods)[0].cpu_milli, 500);
  EXPECT_EQ((*pods)[0].qos, "") << "qos is optional";
  EXPECT_EQ((*pods)[0].line, 3);
}

// SIM-6: a bad file is one error naming the file, the line and the column.
TEST(TraceCsv, BadPodListsNameFileLineAndColumn) {
  std::string h = kPodHeader;
  EXPECT_EQ(pods_error(h + "p1,6000,12288,1,460,,LS,Running,0,1,0\np2,12x,1,0,0,,LS,Running,0,1,0\n"),
            "pods.csv:3:2: cpu_milli: \"12x\" is not a whole number >= 0");
  EXPECT_EQ(pods_error(h + "p1,1,1,1,1460,,LS,Running,0,1,0\n"),
            "pods.csv:2:5: gpu_milli: 1460 is more than 1000");
  EXPECT_EQ(pods_error(h + "p1,1,-1,0,0,,LS,Running,0,1,0\n"),
            "pods.csv:2:3: memory_mib: \"-1\" is not a whole number >= 0");
  EXPECT_EQ(pods_error(h + "p1,1,1,0,0,,LS,Running,soon,1,0\n"),
            "pods.csv:2:9: creation_time: \"soon\" is not a whole number >= 0");
  EXPECT_EQ(pods_error(h + "p1,1,1,0,0,,LS,Running,0,1\n"),
            "pods.csv:2:11: 10 fields, but the header has 11");
  EXPECT_EQ(pods_error(h + "p1,1,1,0,0,,LS,Running,0,1,0,extra\n"),
            "pods.csv:2:12: 12 fields, but the header has 11");
  EXPECT_EQ(pods_error(h + "Pod_1,1,1,0,0,,LS,Running,0,1,0\n"),
            "pods.csv:2:1: name: \"Pod_1\" is not a valid workload name (up to 63 lower-case letters, digits "
            "and '-')");
  EXPECT_EQ(pods_error(h + "p1,1,1,0,0,,LS,Running,0,1,0\np1,1,1,0,0,,LS,Running,0,1,0\n"),
            "pods.csv:3:1: name: pod \"p1\" is listed twice");
  EXPECT_EQ(
      pods_error(h + "p1,1,1,1,100,T4|bad model,LS,Running,0,1,0\n"),
      "pods.csv:2:6: gpu_spec: \"bad model\" is not a valid GPU model name (models are separated by '|')");
  EXPECT_EQ(pods_error(h + "p1,1,1,0,0,,LS,\"Running,0,1,0\n"),
            "pods.csv:2:8: a quoted field is not closed on its line");
  EXPECT_EQ(pods_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli,pod_phase,creation_time\n"),
            "pods.csv:1:1: the header has no column \"gpu_spec\" (needs "
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,"
            "gpu_spec,pod_phase,creation_time)");
  EXPECT_EQ(pods_error(""), "pods.csv:1:1: the file is empty (it needs a header line)");
  EXPECT_EQ(pods_error("name,name\n"), "pods.csv:1:2: column \"name\" appears twice in the header");
}

// SIM-6
TEST(TraceCsv, BadNodeListsNameFileLineAndColumn) {
  std::string h = "sn,cpu_milli,memory_mib,gpu,model\n";
  EXPECT_EQ(nodes_error(h + "n1,64000,262144,2,\n"), "nodes.csv:2:5: model: required for a node with GPUs");
  EXPECT_EQ(nodes_error(h + "n1,64000,262144,two,T4\n"),
            "nodes.csv:2:4: gpu: \"two\" is not a whole number >= 0");
  EXPECT_EQ(nodes_error(h + "n1,64000,262144,2,T 4\n"),
            "nodes.csv:2:5: model: \"T 4\" is not a valid label value (it becomes nvidia.com/gpu.product)");
  EXPECT_EQ(nodes_error(h + "n1,1,1,0,\nn1,1,1,0,\n"), "nodes.csv:3:1: sn: node \"n1\" is listed twice");
  EXPECT_EQ(nodes_error(h + "-n1,1,1,0,\n"),
            "nodes.csv:2:1: sn: \"-n1\" is not a valid node name (lower-case letters, digits, '-' and '.')");
  EXPECT_EQ(nodes_error("sn,cpu_milli,memory_mib,gpu\n"),
            "nodes.csv:1:1: the header has no column \"model\" (needs sn,cpu_milli,memory_mib,gpu,model)");
  EXPECT_EQ(nodes_error(h + "n.example.com,1,1,0,\n"), "(parsed)") << "node names may be DNS subdomains";
}
