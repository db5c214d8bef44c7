#include "decide/gates.h"

namespace kubex::decide {

api::Bounds effective_bounds(const api::Gates& gates, const std::string& container) {
  api::Bounds b = gates.bounds;
  auto it = gates.containers.find(container);
  if (it != gates.containers.end()) {
    if (it->second.floor) b.floor = it->second.floor;
    if (it->second.ceiling) b.ceiling = it->second.ceiling;
  }
  return b;
}

Clamp clamp_gpu(Hundredths& value, const api::Gates& gates, const std::string& container) {
  const api::Bounds b = effective_bounds(gates, container);
  Clamp result = Clamp::kNone;
  if (b.floor) {
    const Hundredths floor = hundredths_of(*b.floor);
    if (value < floor) {
      value = floor;
      result = Clamp::kFloor;
    }
  }
  if (b.ceiling) {
    const Hundredths ceiling = hundredths_of(*b.ceiling);
    if (ceiling > 0 && value > ceiling) {
      value = ceiling;
      result = Clamp::kCeiling;
    }
  }
  return result;
}

Clamp clamp_quantity(common::Quantity& value, const api::Gates& gates, const std::string& container) {
  const api::Bounds b = effective_bounds(gates, container);
  Clamp result = Clamp::kNone;
  if (b.floor && value < *b.floor) {
    value = *b.floor;
    result = Clamp::kFloor;
  }
  if (b.ceiling && b.ceiling->sign() > 0 && value > *b.ceiling) {
    value = *b.ceiling;
    result = Clamp::kCeiling;
  }
  return result;
}

const char* direction_name(Direction d) {
  switch (d) {
    case Direction::kSetFromUnspecified:
      return "setFromUnspecified";
    case Direction::kUpsize:
      return "upsize";
    case Direction::kDownsize:
      return "downsize";
    case Direction::kNone:
      return "";
  }
  return "";
}

Direction direction_of(const std::optional<Hundredths>& current, Hundredths applied) {
  if (!current) return Direction::kSetFromUnspecified;
  if (applied > *current) return Direction::kUpsize;
  if (applied < *current) return Direction::kDownsize;
  return Direction::kNone;
}

Direction direction_of(const std::optional<common::Quantity>& current, const common::Quantity& applied) {
  if (!current) return Direction::kSetFromUnspecified;
  if (applied > *current) return Direction::kUpsize;
  if (applied < *current) return Direction::kDownsize;
  return Direction::kNone;
}

bool gate_allows(const api::Gates& gates, Direction d) {
  switch (d) {
    case Direction::kSetFromUnspecified:
      return gates.set_from_unspecified;
    case Direction::kUpsize:
      return gates.upsize;
    case Direction::kDownsize:
      return gates.downsize;
    case Direction::kNone:
      return true;
  }
  return true;
}

}  // namespace kubex::decide
