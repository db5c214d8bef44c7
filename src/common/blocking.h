// "This thread is about to wait": a thread that waits on something slow (the API server on an informer cache
// miss, caches that have not synced yet) marks the wait with a BlockingScope. A pool that runs handlers
// inline on one thread per CPU (net/tls_server.h, which the webhook runs on) installs a hook on its threads
// and lends the pool another thread for as long as the wait lasts, so the requests behind it do not queue.
// Without a hook a scope does nothing; nested scopes count once.
#pragma once

namespace kubex::common {

class BlockingHook {
 public:
  virtual ~BlockingHook() = default;
  virtual void begin() = 0;  // the thread starts waiting
  virtual void end() = 0;    // it is back
};

// The hook of the calling thread (nullptr: none). The hook must outlive the thread's scopes.
void set_thread_blocking_hook(BlockingHook* hook);

class BlockingScope {
 public:
  BlockingScope();
  ~BlockingScope();
  BlockingScope(const BlockingScope&) = delete;
  BlockingScope& operator=(const BlockingScope&) = delete;

 private:
  BlockingHook* hook_;  // the hook this scope began (nullptr: none, or an outer scope did)
};

}  // namespace kubex::common
