// Something the manager starts and stops: controllers, webhook servers, periodic tasks (DESIGN §3
// kube/runtime). Leader-only runnables run only while this replica holds the lease; the others run on
// every replica.
#pragma once

#include <string>

namespace kubex::kube {

class Runnable {
 public:
  virtual ~Runnable() = default;
  virtual const std::string& name() const = 0;
  // Starts background work and returns at once. Called at most once.
  virtual void start() = 0;
  // Stops taking new work, waits for work in flight and returns. Safe to call more than once, and before
  // start().
  virtual void stop() = 0;
};

}  // namespace kubex::kube
