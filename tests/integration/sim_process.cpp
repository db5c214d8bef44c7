#include "sim_process.h"

#include "kubex_paths.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>

namespace kubex::testing {

SimProcess::SimProcess(Options opts) {
  dir_ = std::filesystem::temp_directory_path() / ("kubex-it-" + std::to_string(::getpid()) + "-" +
                                                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  std::filesystem::create_directories(dir_);
  kubeconfig_ = dir_ + "/kubeconfig";
  int out[2];
  if (pipe(out) != 0) return;
  std::vector<std::string> args = {std::string(kubex_paths::bin_dir()) + "/kubex-sim", "serve", "--listen",
                                   "127.0.0.1:" + std::to_string(opts.port), "--kubeconfig", kubeconfig_};
  if (!opts.data_dir.empty()) {
    args.push_back("--data-dir");
    args.push_back(opts.data_dir);
  }
  for (const auto& a : opts.extra_args) args.push_back(a);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], 1);
    std::string log = dir_ + "/sim.log";
    FILE* err = std::fopen(log.c_str(), "a");
    if (err) dup2(fileno(err), 2);
    close(out[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  FILE* f = fdopen(out[0], "r");
  char line[4096];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline && f && std::fgets(line, sizeof line, f)) {
    std::string s = line;
    auto pos = s.find("url=https://127.0.0.1:");
    if (s.rfind("kubex-sim ready", 0) == 0 && pos != std::string::npos) {
      port_ = std::atoi(s.c_str() + pos + 22);
      break;
    }
  }
  // Keep the pipe open but stop reading (the simulator prints nothing more on stdout).
}

SimProcess::~SimProcess() {
  terminate();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void SimProcess::kill_hard() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

void SimProcess::terminate() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

TcpProxy::TcpProxy(int target_port) : target_(target_port) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int yes = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  listen(listen_fd_, 64);
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

TcpProxy::~TcpProxy() {
  stop_ = true;
  shutdown(listen_fd_, SHUT_RDWR);
  close(listen_fd_);
  if (acceptor_.joinable()) acceptor_.join();
  cut();
  std::vector<std::thread> pumps;
  {
    std::lock_guard lk(mu_);
    pumps.swap(pumps_);
  }
  for (auto& t : pumps) {
    if (t.joinable()) t.join();
  }
}

void TcpProxy::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;
    if (cut_) {
      close(client);
      continue;
    }
    int upstream = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(target_));
    if (connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(client);
      close(upstream);
      continue;
    }
    std::lock_guard lk(mu_);
    fds_.push_back(client);
    fds_.push_back(upstream);
    pumps_.emplace_back([client, upstream] {
      pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
      char buf[16384];
      while (true) {
        if (poll(fds, 2, 200) < 0) break;
        bool done = false;
        for (int i = 0; i < 2; ++i) {
          if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n <= 0 || write(fds[1 - i].fd, buf, static_cast<size_t>(n)) != n) done = true;
          }
        }
        if (done) break;
      }
      shutdown(client, SHUT_RDWR);
      shutdown(upstream, SHUT_RDWR);
    });
  }
}

void TcpProxy::cut() {
  cut_ = true;
  std::lock_guard lk(mu_);
  for (int fd : fds_) shutdown(fd, SHUT_RDWR);
  fds_.clear();
}

void TcpProxy::restore() { cut_ = false; }

std::string kubeconfig_with_port(const std::string& kubeconfig, int port, const std::string& out_path) {
  std::ifstream in(kubeconfig);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = std::regex_replace(ss.str(), std::regex("https://127\\.0\\.0\\.1:[0-9]+"),
                                        "https://127.0.0.1:" + std::to_string(port));
  std::ofstream out(out_path);
  out << text;
  return out_path;
}

}  // namespace kubex::testing
