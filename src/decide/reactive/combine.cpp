#include "decide/reactive/steps.h"

namespace kubex::decide::reactive {

std::optional<Candidate> offer(const std::optional<Candidate>& up, const std::optional<Candidate>& oom_bump,
                               const std::optional<Candidate>& back) {
  if (oom_bump && (!up || oom_bump->total > up->total)) return oom_bump;  // REA-11 replaces a smaller one
  if (up) return up;
  return back;  // REA-7 only without an upsize candidate
}

const Candidate* winner(const std::optional<Candidate>& compute, const std::optional<Candidate>& memory,
                        std::string_view stored_driver) {
  if (!compute) return memory ? &*memory : nullptr;
  if (!memory) return &*compute;
  if (compute->total != memory->total) return compute->total > memory->total ? &*compute : &*memory;
  return stored_driver == kMemory ? &*memory : &*compute;  // equal: the stored driver is kept
}

std::optional<Hundredths> existing_total(const PodUsage& sel,
                                         const std::map<std::string, Hundredths>& existing) {
  Hundredths e = 0;
  for (const std::string& c : sel.containers) {
    auto it = existing.find(c);
    if (it == existing.end()) return std::nullopt;
    e += it->second;
  }
  return e;
}

bool accepted(const Candidate& win, const Candidate* other, std::string_view stored_driver,
              std::optional<Hundredths> existing) {
  if (!existing || win.total >= *existing) return true;
  // REA-8: lower than the existing recommendation.
  if (win.signal == stored_driver) return true;
  return other && other->signal == stored_driver && other->total <= win.total;
}

}  // namespace kubex::decide::reactive
