// A child process of the demo (kubex engine, Prometheus): started with its output in a log file, stopped with
// SIGTERM and, past a deadline, SIGKILL.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/result.h"

namespace kubex::sim::demo {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // argv[0] is the program path. stdout and stderr go to `log_path` (appended).
  common::Result<void> start(const std::vector<std::string>& argv, const std::string& log_path);
  bool running();                               // reaps the child when it has exited
  int exit_code() const { return exit_code_; }  // -1 while running or never started
  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit code (128+signal when killed by one).
  int stop(std::chrono::milliseconds grace = std::chrono::seconds(10));
  int pid() const { return pid_; }
  const std::string& log_path() const { return log_; }

 private:
  int pid_ = -1;
  int exit_code_ = -1;
  std::string log_;
};

// The path of a program: `name` itself when it contains a '/', else the first match on $PATH; "" if none.
std::string find_program(const std::string& name);

}  // namespace kubex::sim::demo
