// /proc/<pid>/cgroup -> pod UID and container ID for every layout the kubelet creates (TEL-2).
#include "telemetry/cgroup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <ostream>

namespace kubex::telemetry {

// gtest's printer for the expectations below (found by ADL).
void PrintTo(const ContainerRef& ref, std::ostream* os) {
  *os << "{pod " << ref.pod_uid << ", container " << ref.container_id << "}";
}

namespace {

namespace fs = std::filesystem;

const std::string kUid = "8d0b4f1e-3c2a-4b5d-9e6f-7a8b9c0d1e2f";
const std::string kUidSystemd = "8d0b4f1e_3c2a_4b5d_9e6f_7a8b9c0d1e2f";  // the systemd driver's spelling
const std::string kId = "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b";
const std::string kStaticPodUid = "0f3d9a7c2b1e4d5f6a7b8c9d0e1f2a3b";  // a static pod: the config hash

struct Layout {
  const char* what;
  std::string file;
  std::optional<ContainerRef> want;
};

ContainerRef ref(std::string uid = kUid) { return {.pod_uid = std::move(uid), .container_id = kId}; }

std::vector<Layout> layouts() {
  const std::string burstable_slice = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kUidSystemd +
                                      ".slice";
  return {
      // cgroup v2, systemd driver, each runtime and QoS class.
      {"v2 systemd containerd burstable", "0::" + burstable_slice + "/cri-containerd-" + kId + ".scope\n", ref()},
      {"v2 systemd containerd guaranteed",
       "0::/kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope\n", ref()},
      {"v2 systemd cri-o besteffort",
       "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + kUidSystemd + ".slice/crio-" + kId +
           ".scope\n",
       ref()},
      {"v2 systemd docker", "0::" + burstable_slice + "/docker-" + kId + ".scope\n", ref()},
      {"v2 systemd nested init.scope", "0::" + burstable_slice + "/cri-containerd-" + kId + ".scope/init.scope\n",
       ref()},
      {"v2 systemd static pod (config hash UID)",
       "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + kStaticPodUid + ".slice/cri-containerd-" +
           kId + ".scope\n",
       ref(kStaticPodUid)},
      // kind and other nested kubelets put the hierarchy below their own slice.
      {"v2 systemd kind prefix",
       "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" +
           kUidSystemd + ".slice/cri-containerd-" + kId + ".scope\n",
       ref()},
      // A reader in its own cgroup namespace sees other pods' paths relative to its own cgroup.
      {"v2 systemd seen from another cgroup namespace",
       "0::/../../kubepods-burstable-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope\n", ref()},
      // cgroup v2, cgroupfs driver.
      {"v2 cgroupfs burstable", "0::/kubepods/burstable/pod" + kUid + "/" + kId + "\n", ref()},
      {"v2 cgroupfs guaranteed", "0::/kubepods/pod" + kUid + "/" + kId + "\n", ref()},
      {"v2 cgroupfs nested", "0::/kubepods/pod" + kUid + "/" + kId + "/worker\n", ref()},
      {"v2 cgroupfs cri-o", "0::/kubepods/besteffort/pod" + kUid + "/crio-" + kId + "\n", ref()},
      {"v2 cgroupfs kind prefix", "0::/kubelet/kubepods/burstable/pod" + kUid + "/" + kId + "\n", ref()},
      // cgroup v1: one line per hierarchy; the first that names a container counts.
      {"v1 systemd containerd",
       "12:pids:" + burstable_slice + "/cri-containerd-" + kId + ".scope\n"
           "11:memory:" + burstable_slice + "/cri-containerd-" + kId + ".scope\n"
           "10:cpu,cpuacct:" + burstable_slice + "/cri-containerd-" + kId + ".scope\n"
           "1:name=systemd:" + burstable_slice + "/cri-containerd-" + kId + ".scope\n"
           "0::/\n",
       ref()},
      {"v1 cgroupfs besteffort",
       "11:devices:/kubepods/besteffort/pod" + kUid + "/" + kId + "\n"
           "10:memory:/kubepods/besteffort/pod" + kUid + "/" + kId + "\n"
           "1:name=systemd:/kubepods/besteffort/pod" + kUid + "/" + kId + "\n",
       ref()},
      {"v1 hybrid: unified line first, container on a later line",
       "0::/\n1:name=systemd:/user.slice\n4:memory:/kubepods/burstable/pod" + kUid + "/" + kId + "\n", ref()},
      {"v1 docker cgroupfs guaranteed", "9:cpuset:/kubepods/pod" + kUid + "/" + kId + "\n", ref()},
      // Processes that belong to no pod's container.
      {"host service", "0::/system.slice/sshd.service\n", std::nullopt},
      {"user session", "0::/user.slice/user-1000.slice/session-3.scope\n", std::nullopt},
      {"v1 host process", "12:pids:/system.slice/containerd.service\n1:name=systemd:/init.scope\n0::/\n", std::nullopt},
      {"docker container outside Kubernetes", "0::/system.slice/docker-" + kId + ".scope\n", std::nullopt},
      {"pod-level cgroup without a container", "0::" + burstable_slice + "\n", std::nullopt},
      {"cri-o's conmon monitor", "0::" + burstable_slice + "/crio-conmon-" + kId + ".scope\n", std::nullopt},
      {"pod directory outside kubepods", "0::/machine/pod" + kUid + "/" + kId + "\n", std::nullopt},
      {"short container id", "0::/kubepods/pod" + kUid + "/abc123\n", std::nullopt},
      {"empty file", "", std::nullopt},
      {"garbage", "not a cgroup file\n", std::nullopt},
  };
}

// TEL-2: each layout of the table maps to the pod UID (dashes) and the runtime's container ID, or to nothing.
TEST(ContainerOfCgroup, EveryKubeletLayoutMapsToPodAndContainer) {
  for (const auto& layout : layouts()) {
    SCOPED_TRACE(layout.what);
    auto got = container_of_cgroup(layout.file);
    EXPECT_EQ(got, layout.want) << layout.file;
  }
}

// TEL-2: a pod's sandbox ("pause") container has a container cgroup like any other; it maps to its own ID, which
// no containerStatuses entry carries, so the exporter counts it as unmapped rather than guessing.
TEST(ContainerOfCgroup, SandboxContainerMapsToItsOwnId) {
  const std::string sandbox = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
  auto got = container_of_cgroup("0::/kubepods/besteffort/pod" + kUid + "/" + sandbox + "\n");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->pod_uid, kUid);
  EXPECT_EQ(got->container_id, sandbox);
}

// TEL-2: status.containerStatuses[].containerID loses its "<runtime>://" prefix.
TEST(ContainerIdOfStatus, StripsTheRuntimePrefix) {
  EXPECT_EQ(container_id_of_status("containerd://" + kId), kId);
  EXPECT_EQ(container_id_of_status("cri-o://" + kId), kId);
  EXPECT_EQ(container_id_of_status("docker://" + kId), kId);
  EXPECT_EQ(container_id_of_status(kId), kId);
  EXPECT_EQ(container_id_of_status(""), "");
}

class FakeProcRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kubex-proc-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void process(std::uint32_t pid, const std::string& cgroup) {
    fs::create_directories(root_ / std::to_string(pid));
    std::ofstream(root_ / std::to_string(pid) / "cgroup") << cgroup;
  }
  fs::path root_;
};

// TEL-2: container_of_pid reads <proc-root>/<pid>/cgroup; a pid that exited (no directory) or a host process maps
// to nothing.
TEST_F(FakeProcRoot, ContainerOfPidReadsTheProcRoot) {
  process(4242, "0::/kubepods.slice/kubepods-pod" + kUidSystemd + ".slice/cri-containerd-" + kId + ".scope\n");
  process(1, "0::/init.scope\n");
  EXPECT_EQ(container_of_pid(root_.string(), 4242), ref());
  EXPECT_EQ(container_of_pid(root_.string(), 1), std::nullopt);
  EXPECT_EQ(container_of_pid(root_.string(), 999999), std::nullopt);
  EXPECT_EQ(container_of_pid((root_ / "missing").string(), 4242), std::nullopt);
}

}  // namespace
}  // namespace kubex::telemetry
