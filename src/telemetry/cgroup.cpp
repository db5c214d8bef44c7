// TEL-2: /proc/<pid>/cgroup -> pod UID and container ID. The path is read component by component, so any prefix
// above the kubepods hierarchy works: kind's "/kubelet.slice/kubelet-kubepods.slice/…" or "/kubelet/kubepods/…",
// and the "/../.." a reader in its own cgroup namespace sees before the paths of other pods.
#include "telemetry/cgroup.h"

#include <fstream>
#include <sstream>
#include <vector>

namespace kubex::telemetry {
namespace {

constexpr std::size_t kContainerIdLength = 64;

bool is_hex_id(std::string_view s) {
  if (s.size() != kContainerIdLength) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A pod UID as the kubelet names its cgroup: hex digits with '-' (cgroupfs) or '_' (systemd). Static pods carry
// a 32-hex config hash instead of a UUID, so the length is not checked.
bool is_pod_uid(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-' || c == '_')) return false;
  }
  return true;
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    auto slash = path.find('/');
    auto part = path.substr(0, slash);
    if (!part.empty()) parts.push_back(part);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return parts;
}

// The pod UID of one path component, dashes restored; empty when the component is not a pod's cgroup.
//   systemd:  "kubepods-pod<uid>.slice", "kubepods-<qos>-pod<uid>.slice", "kubelet-kubepods-<qos>-pod<uid>.slice"
//   cgroupfs: "pod<uid>" (only below a "kubepods" component: `below_kubepods`)
std::string pod_uid_of(std::string_view part, bool below_kubepods) {
  std::string_view uid;
  if (part.ends_with(".slice") && part.find("kubepods") != std::string_view::npos) {
    auto stem = part.substr(0, part.size() - std::string_view(".slice").size());
    auto at = stem.rfind("-pod");
    if (at == std::string_view::npos) return {};
    uid = stem.substr(at + 4);
  } else if (below_kubepods && part.starts_with("pod")) {
    uid = part.substr(3);
  } else {
    return {};
  }
  if (!is_pod_uid(uid)) return {};
  std::string out(uid);
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

// The container ID of the component right below the pod's: "cri-containerd-<id>.scope", "crio-<id>.scope",
// "docker-<id>.scope" (systemd), "<id>" or "crio-<id>" (cgroupfs). Empty for anything else (CRI-O's
// "crio-conmon-<id>" monitor, a pod-level process).
std::string container_id_of(std::string_view part) {
  if (part.ends_with(".scope")) part.remove_suffix(std::string_view(".scope").size());
  for (std::string_view prefix : {"cri-containerd-", "crio-", "docker-"}) {
    if (part.starts_with(prefix)) {
      part.remove_prefix(prefix.size());
      break;
    }
  }
  return is_hex_id(part) ? std::string(part) : std::string();
}

// The container a cgroup path names (the part after "hierarchy:controllers:").
std::optional<ContainerRef> container_of_path(std::string_view path) {
  auto parts = split_path(path);
  bool below_kubepods = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    if (part == "kubepods" || part.starts_with("kubepods.") || part.ends_with("-kubepods.slice")) {
      below_kubepods = true;
    }
    std::string uid = pod_uid_of(part, below_kubepods);
    if (uid.empty()) continue;
    // Nested cgroups below the container ("…/<id>.scope/init.scope", "…/<id>/<sub>") are the same container.
    if (i + 1 >= parts.size()) return std::nullopt;
    std::string id = container_id_of(parts[i + 1]);
    if (id.empty()) return std::nullopt;
    return ContainerRef{.pod_uid = std::move(uid), .container_id = std::move(id)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<ContainerRef> container_of_cgroup(std::string_view cgroup_file) {
  while (!cgroup_file.empty()) {
    auto eol = cgroup_file.find('\n');
    std::string_view line = cgroup_file.substr(0, eol);
    cgroup_file = eol == std::string_view::npos ? std::string_view{} : cgroup_file.substr(eol + 1);
    // "<hierarchy-ID>:<controller-list>:<path>" (v2: "0::<path>"); the path itself may hold ':'.
    auto first = line.find(':');
    if (first == std::string_view::npos) continue;
    auto second = line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    auto path = line.substr(second + 1);
    if (!path.empty() && path.back() == '\r') path.remove_suffix(1);
    if (auto ref = container_of_path(path)) return ref;
  }
  return std::nullopt;
}

std::optional<ContainerRef> container_of_pid(const std::string& proc_root, std::uint32_t pid) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/cgroup", std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return container_of_cgroup(text.str());
}

std::string container_id_of_status(std::string_view status_container_id) {
  auto sep = status_container_id.find("://");
  if (sep != std::string_view::npos) status_container_id.remove_prefix(sep + 3);
  return std::string(status_container_id);
}

}  // namespace kubex::telemetry
