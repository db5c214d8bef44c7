// The baseline of the GPU exporter cost benchmark (issue 37, bench/telemetry/exporter_cost.py): a plain loop that
// reads /proc/<pid>/cgroup of the given pids under --proc-root once per --interval-ms and takes the pod UID and the
// container ID out of each (the last path component and its pod slice), and nothing else: no NVML, no API server
// watch, no HTTP server. The exporter does this read every pass, plus everything else; the bench measures both the
// same way (VmRSS, utime + stime). After its first pass it prints "pass: N files, M bytes, K containers".
//
// Usage: bench-proc-loop --proc-root DIR [--interval-ms 1000] PID...
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// The container ID and pod UID of a cgroup line (systemd: .../kubepods-<qos>-pod<uid>.slice/cri-containerd-<id>.scope;
// cgroupfs: .../pod<uid>/<id>); false when the line names neither.
bool parse_line(std::string_view line, std::string& uid, std::string& id) {
  auto slash = line.rfind('/');
  if (slash == std::string_view::npos) return false;
  std::string_view last = line.substr(slash + 1);
  if (auto dash = last.rfind('-'); dash != std::string_view::npos && last.ends_with(".scope")) {
    last = last.substr(dash + 1, last.size() - dash - 1 - 6);
  }
  if (last.size() < 12) return false;
  id.assign(last);
  auto pod = line.rfind("pod", slash);
  if (pod == std::string_view::npos) return false;
  std::string_view rest = line.substr(pod + 3, slash - pod - 3);
  if (rest.ends_with(".slice")) rest.remove_suffix(6);
  uid.assign(rest);
  for (char& c : uid) c = c == '_' ? '-' : c;
  return !uid.empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::string root;
  long interval_ms = 1000;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--proc-root" && i + 1 < argc) {
      root = argv[++i];
    } else if (a == "--interval-ms" && i + 1 < argc) {
      interval_ms = std::strtol(argv[++i], nullptr, 10);
    } else if (!a.empty() && a[0] != '-') {
      paths.push_back(std::string(a));
    } else {
      std::fprintf(stderr, "usage: bench-proc-loop --proc-root DIR [--interval-ms 1000] PID...\n");
      return 2;
    }
  }
  if (root.empty() || paths.empty() || interval_ms <= 0) {
    std::fprintf(stderr, "usage: bench-proc-loop --proc-root DIR [--interval-ms 1000] PID...\n");
    return 2;
  }
  for (auto& p : paths) p = root + "/" + p + "/cgroup";
  char buf[4096];
  std::string uid, id;
  bool first = true;
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    size_t files = 0, bytes = 0, containers = 0;
    for (const auto& p : paths) {
      int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      ssize_t n = ::read(fd, buf, sizeof buf);
      ::close(fd);
      if (n <= 0) continue;
      ++files;
      bytes += static_cast<size_t>(n);
      std::string_view text(buf, static_cast<size_t>(n));
      while (!text.empty()) {
        auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        if (parse_line(line, uid, id)) {
          ++containers;
          break;
        }
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
      }
    }
    if (first) {
      std::printf("pass: %zu files, %zu bytes, %zu containers\n", files, bytes, containers);
      std::fflush(stdout);
      first = false;
    }
    next += std::chrono::milliseconds(interval_ms);
    std::this_thread::sleep_until(next);
  }
}
