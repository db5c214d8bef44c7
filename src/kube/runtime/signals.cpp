#include "kube/runtime/signals.h"

#include <pthread.h>

#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/log.h"

namespace kubex::kube {

namespace {
sigset_t termination_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}
}  // namespace

void block_termination_signals() {
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t set = termination_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal) : on_signal_(std::move(on_signal)) {
  thread_ = std::thread([this] {
    sigset_t set = termination_set();
    bool first = true;
    while (true) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) return;
      if (closing_) return;
      if (first) {
        first = false;
        common::Logger("signals").info("received signal, shutting down",
                                       {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
        if (on_signal_) on_signal_(sig);
        continue;
      }
      common::Logger("signals").error("second signal received, exiting immediately");
      std::_Exit(1);
    }
  });
}

SignalWatcher::~SignalWatcher() {
  closing_ = true;
  pthread_kill(thread_.native_handle(),
               SIGTERM);  // wakes sigwait (the signal is blocked, so it is only consumed)
  thread_.join();
}

}  // namespace kubex::kube
