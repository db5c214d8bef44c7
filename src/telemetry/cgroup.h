// TEL-2: a process's pod and container from its /proc/<pid>/cgroup. Every layout the kubelet creates:
//   cgroup v2 (one line "0::<path>") and v1 (one line per hierarchy; the first that names a container counts);
//   the systemd driver: ".../kubepods-<qos>-pod<uid with _ for ->.slice/cri-containerd-<id>.scope",
//     ".../crio-<id>.scope", ".../docker-<id>.scope" (guaranteed pods: "kubepods-pod<uid>.slice");
//   the cgroupfs driver: "/kubepods/<qos>/pod<uid>/<id>" and "/kubepods/pod<uid>/<id>";
//   a container runtime's nested cgroup below the container ("…/<id>.scope/init.scope") is the same container.
// The pod UID comes back with dashes; the container ID is the runtime's 64-hex id, without any "<runtime>://".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kubex::telemetry {

struct ContainerRef {
  std::string pod_uid;       // "1a2b…-…" (dashes)
  std::string container_id;  // 64 hex digits
  friend bool operator==(const ContainerRef&, const ContainerRef&) = default;
};

// The container named by the text of a /proc/<pid>/cgroup file; nullopt when no line names a pod's container
// (a host process, a pod's sandbox, an unknown layout).
std::optional<ContainerRef> container_of_cgroup(std::string_view cgroup_file);

// Reads <proc_root>/<pid>/cgroup; nullopt when the file cannot be read (the process exited) or names no container.
std::optional<ContainerRef> container_of_pid(const std::string& proc_root, std::uint32_t pid);

// "containerd://<id>", "cri-o://<id>", "docker://<id>" (status.containerStatuses[].containerID) -> "<id>".
std::string container_id_of_status(std::string_view status_container_id);

}  // namespace kubex::telemetry
