// Test helpers: a kubex-sim child process and a TCP proxy that can cut connections.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kubex::testing {

// Starts `kubex-sim serve` (from kubex_paths::bin_dir()) and waits for its ready line.
class SimProcess {
 public:
  struct Options {
    std::vector<std::string> extra_args;
    std::string data_dir;  // empty = none
    int port = 0;
  };
  explicit SimProcess(Options opts);
  ~SimProcess();
  bool ok() const { return pid_ > 0 && port_ > 0; }
  int port() const { return port_; }
  const std::string& kubeconfig() const { return kubeconfig_; }
  const std::string& dir() const { return dir_; }
  void kill_hard();  // SIGKILL
  void terminate();  // SIGTERM and wait

 private:
  int pid_ = -1;
  int port_ = 0;
  std::string dir_, kubeconfig_;
};

// Forwards 127.0.0.1:port() to 127.0.0.1:target. cut() drops every open connection and refuses new
// ones until restore().
class TcpProxy {
 public:
  explicit TcpProxy(int target_port);
  ~TcpProxy();
  int port() const { return port_; }
  void cut();
  void restore();

 private:
  void accept_loop();
  int target_, listen_fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false}, cut_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;
  std::vector<std::thread> pumps_;
};

// A kubeconfig for `context` of `kubeconfig` whose server points at 127.0.0.1:port (same credentials).
std::string kubeconfig_with_port(const std::string& kubeconfig, int port, const std::string& out_path);

}  // namespace kubex::testing
