// The engine's controllers (DESIGN §3 controllers/): built from the shared EngineState and added to the
// manager, leader-only unless a controller says otherwise (ENG-1).
#pragma once

#include "engine/state.h"

namespace kubex::engine {

// Adds every controller the options enable. Call before Manager::run().
void add_controllers(EngineState& state);

}  // namespace kubex::engine
