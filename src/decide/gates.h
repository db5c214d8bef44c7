// A strategy's per-resource settings as admission applies them: ADM-7 floor/ceiling clamps (a container
// entry overrides the usage-level bound) and ADM-9 direction gates (setFromUnspecified, upsize, downsize).
// Shared by admission/ and proactive/ (the PRO-3 clamp is ADM-7's), so it sits at decide/'s top.
#pragma once

#include <optional>
#include <string>

#include "api/objects.h"
#include "common/quantity.h"
#include "decide/gpu_value.h"

namespace kubex::decide {

// ---------------------------------------------------------------- ADM-7 clamps

enum class Clamp { kNone, kFloor, kCeiling };

// The bounds that apply to `container`: each of floor and ceiling comes from
// `containers.<container>` when that entry sets it, else from the usage-level bound.
api::Bounds effective_bounds(const api::Gates& gates, const std::string& container);

// Clamps a GPU value (hundredths). Bounds are read in hundredths, rounded up (GPU-2). When floor > ceiling
// (an invalid strategy that slipped through), the ceiling wins.
Clamp clamp_gpu(Hundredths& value, const api::Gates& gates, const std::string& container);
// Clamps a cpu or memory quantity; the bound replaces the value, keeping the bound's spelling.
Clamp clamp_quantity(common::Quantity& value, const api::Gates& gates, const std::string& container);

// ---------------------------------------------------------------- ADM-9 direction gates

enum class Direction { kNone, kSetFromUnspecified, kUpsize, kDownsize };

// "setFromUnspecified", "upsize", "downsize"; "" for kNone.
const char* direction_name(Direction d);

// The comparison of ADM-9: no current value -> setFromUnspecified; greater -> upsize; smaller -> downsize;
// equal -> kNone (a no-op, not a constraint).
Direction direction_of(const std::optional<Hundredths>& current, Hundredths applied);
Direction direction_of(const std::optional<common::Quantity>& current, const common::Quantity& applied);

// True when the strategy's flag for that direction is on; kNone is always allowed.
bool gate_allows(const api::Gates& gates, Direction d);

}  // namespace kubex::decide
