// Helpers for the prom/ tests: temporary directories, loopback ports, and files.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace kubex::prom::testing_support {

// A fresh directory under the test temp dir, removed with everything in it at destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "kubex-prom-XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

// A loopback TCP socket bound to a free port. With listen = false nothing accepts on it, so connecting to
// the port is refused for as long as this object lives (no other process can take the port meanwhile).
class BoundPort {
 public:
  explicit BoundPort(bool listen) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    if (listen) {
      EXPECT_EQ(::listen(fd_, 16), 0);
    }
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~BoundPort() { close(); }
  BoundPort(const BoundPort&) = delete;
  BoundPort& operator=(const BoundPort&) = delete;
  int fd() const { return fd_; }
  int port() const { return port_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A port that was free a moment ago, for a server process that binds it itself.
inline int free_port() {
  BoundPort p(false);
  return p.port();
}

inline std::string url_of(int port, const std::string& scheme = "http", const std::string& path = "") {
  return scheme + "://127.0.0.1:" + std::to_string(port) + path;
}

}  // namespace kubex::prom::testing_support
