#include "engine/controllers.h"

#include "kube/runtime/manager.h"

namespace kubex::engine {

void add_controllers(EngineState& state) {
  (void)state;  // Each controller adds one line here: state.manager.add_runnable(..., /*leader_only=*/true).
}

}  // namespace kubex::engine
