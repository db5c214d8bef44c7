// Injected time (DESIGN §2.6): decisions take `now`, components hold a Clock.
#pragma once

#include <chrono>
#include <mutex>

namespace kubex::common {

using TimePoint = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};

class RealClock final : public Clock {
 public:
  TimePoint now() const override { return std::chrono::system_clock::now(); }
  static RealClock& instance() {
    static RealClock c;
    return c;
  }
};

// A clock tests move by hand.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint{std::chrono::seconds(1'800'000'000)}) : now_(start) {}
  TimePoint now() const override {
    std::lock_guard lk(mu_);
    return now_;
  }
  void set(TimePoint t) {
    std::lock_guard lk(mu_);
    now_ = t;
  }
  void advance(Duration d) {
    std::lock_guard lk(mu_);
    now_ += std::chrono::duration_cast<TimePoint::duration>(d);
  }

 private:
  mutable std::mutex mu_;
  TimePoint now_;
};

}  // namespace kubex::common
