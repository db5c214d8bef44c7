// ACT-2a: which evictions are upsizes, and the size their replacement asks for.
#include "decide/actuation/steps.h"

namespace kubex::decide::actuation {

bool upsize(const Allocation& desired, const Allocation& live) {
  Hundredths want = 0, have = 0;
  for (const GpuAllocation& g : desired) want += g.value;
  for (const GpuAllocation& g : live) have += g.value;
  if (want > have) return true;
  for (const GpuAllocation& d : desired) {  // a fraction becoming whole GPUs
    if (d.fraction) continue;
    for (const GpuAllocation& l : live) {
      if (l.container == d.container && l.fraction) return true;
    }
  }
  return false;
}

ReplacementSize replacement_size(const Allocation& desired) {
  ReplacementSize r;
  Hundredths fractions = 0;
  bool all_fractions = !desired.empty();
  for (const GpuAllocation& g : desired) {
    if (g.fraction) {
      fractions += g.value;
    } else {
      all_fractions = false;
      r.whole += whole_gpus(g.value);
    }
  }
  if (all_fractions && fractions < kOneGpu) {
    r.fraction = fractions;
    r.whole = 0;
  } else {
    r.whole += whole_gpus(fractions);
  }
  return r;
}

}  // namespace kubex::decide::actuation
