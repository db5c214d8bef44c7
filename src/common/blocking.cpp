#include "common/blocking.h"

namespace kubex::common {

namespace {

thread_local BlockingHook* t_hook = nullptr;
thread_local int t_depth = 0;

}  // namespace

void set_thread_blocking_hook(BlockingHook* hook) {
  t_hook = hook;
}

BlockingScope::BlockingScope() : hook_(t_depth++ == 0 ? t_hook : nullptr) {
  if (hook_) hook_->begin();
}

BlockingScope::~BlockingScope() {
  --t_depth;
  if (hook_) hook_->end();
}

}  // namespace kubex::common
