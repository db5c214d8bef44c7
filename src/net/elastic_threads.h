// Reused threads that grow with demand: the threads webhook::Server::serve() runs handlers on (one per call
// in flight, so a call can be answered at its deadline while an overrunning handler goes on).
//
// run() hands a task to an idle thread, or starts a new one while fewer than `max_threads` run, or else
// queues it for the next thread that finishes. A thread that finishes waits for the next task, unless
// `keep_idle` threads are already waiting, in which case it exits. Reusing threads saves a thread start
// per task and keeps each thread's malloc cache warm; growing them means a call beyond `keep_idle`
// starts at once instead of waiting for another call to finish.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

namespace kubex::net {

class ElasticThreads {
 public:
  ElasticThreads(std::size_t keep_idle, std::size_t max_threads);
  ~ElasticThreads();  // shutdown(); does not wait
  ElasticThreads(const ElasticThreads&) = delete;
  ElasticThreads& operator=(const ElasticThreads&) = delete;

  // When a new thread is needed and cannot be started, the task is queued for a running thread; false
  // (the task is dropped) when there is none. Never throws.
  bool run(std::function<void()> task);
  // Idle threads exit; running ones finish their task and the queued ones, then exit. Later tasks each get a
  // thread of their own (still counted against max_threads).
  void shutdown();
  // Waits until every thread has exited (after shutdown()).
  void wait();
  // Threads waiting for a task now.
  std::size_t idle_threads() const;

 private:
  struct State;
  static void work(std::shared_ptr<State> st, std::function<void()> task);
  std::shared_ptr<State> st_;
};

}  // namespace kubex::net
