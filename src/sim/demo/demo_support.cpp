#include "sim/demo/demo_support.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "sim/demo/embedded.h"

namespace kubex::sim::demo {

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::string self_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : exe.parent_path().string();
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  int port = 0;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    socklen_t len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) port = ntohs(a.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

const std::string* embedded(const std::string& path) {
  for (const auto& f : embedded_files()) {
    if (f.path == path) return &f.content;
  }
  return nullptr;
}

// Polls `ready` every 200 ms until it returns "" (done) or the deadline passes; prints what it waits for
// once. Returns the last "what is missing" text, "" on success, or "interrupted".
std::string wait_until(Interrupts& intr, const std::string& what, seconds timeout,
                       const std::function<std::string()>& missing, ChildProcess* engine) {
  auto deadline = Clock::now() + timeout;
  std::string last = missing();
  if (last.empty()) return "";
  say("   waiting for " + what + " ...");
  while (Clock::now() < deadline) {
    if (!intr.sleep(milliseconds(200))) return "interrupted";
    if (engine && !engine->running())
      return "kubex engine exited (code " + std::to_string(engine->exit_code()) + ")";
    last = missing();
    if (last.empty()) return "";
  }
  return last.empty() ? "timed out" : last;
}

std::string http_get(int port, const std::string& path, int* status) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  c.set_read_timeout(2, 0);
  auto r = c.Get(path);
  if (status) *status = r ? r->status : 0;
  return r ? r->body : "";
}

const json* condition(const json& obj, const std::string& type) {
  if (!obj.contains("status") || !obj["status"].contains("conditions")) return nullptr;
  for (const auto& c : obj["status"]["conditions"]) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

}  // namespace kubex::sim::demo
