// Optional durability for kubex-sim (--data-dir): every committed change is appended to a log; on start
// the log is replayed (custom resource definitions first), compacted into a fresh snapshot, and the
// resourceVersion counter continues from where it stopped. A SIGKILLed simulator loses nothing that
// was acknowledged.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>

#include "common/result.h"

namespace kubex::sim {

class ApiServer;

class Persistence {
 public:
  explicit Persistence(std::string dir);
  ~Persistence();
  // Replays the log into `api` (returns the number of objects restored) and starts logging new commits.
  common::Result<std::size_t> open(ApiServer& api);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace kubex::sim
