// SIGTERM/SIGINT handling for long-running commands: the signals are blocked in every thread and one
// thread waits for them (no async-signal-safety constraints on what the callback does). A second signal
// while the first is being handled ends the process at once with exit code 1 (as controller-runtime does).
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace kubex::kube {

// Blocks SIGINT and SIGTERM in the calling thread and every thread it starts later; call first in main().
// Also ignores SIGPIPE (servers write to peers that may have gone).
void block_termination_signals();

class SignalWatcher {
 public:
  // `on_signal(signo)` runs on the watcher's thread for the first SIGTERM/SIGINT.
  explicit SignalWatcher(std::function<void(int)> on_signal);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  std::atomic<bool> closing_{false};
  std::function<void(int)> on_signal_;
  std::thread thread_;
};

}  // namespace kubex::kube
