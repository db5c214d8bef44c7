#include "net/elastic_threads.h"

#include <system_error>
#include <thread>

namespace kubex::net {

// Shared with the threads, so that it outlives the ElasticThreads object while any of them still runs.
struct ElasticThreads::State {
  std::mutex mu;
  std::condition_variable work_cv, exit_cv;
  std::deque<std::function<void()>> tasks;
  std::size_t keep_idle = 1, max_threads = 1;
  std::size_t live = 0;  // threads started and not yet exited
  std::size_t idle = 0;  // of those, waiting for a task
  bool shutdown = false;
};

ElasticThreads::ElasticThreads(std::size_t keep_idle, std::size_t max_threads)
    : st_(std::make_shared<State>()) {
  st_->keep_idle = keep_idle;
  st_->max_threads = max_threads < 1 ? 1 : max_threads;
}

ElasticThreads::~ElasticThreads() {
  shutdown();
}

bool ElasticThreads::run(std::function<void()> task) {
  std::unique_lock lk(st_->mu);
  // Queued tasks are always fewer than idle threads, unless max_threads are running.
  if (st_->idle > st_->tasks.size() || st_->live >= st_->max_threads) {
    st_->tasks.push_back(std::move(task));
    st_->work_cv.notify_one();
    return true;
  }
  ++st_->live;
  lk.unlock();
  std::function<void()> kept = task;  // a failed thread start destroys its copy
  try {
    std::thread(&ElasticThreads::work, st_, std::move(task)).detach();
    return true;
  } catch (const std::system_error&) {
  }
  lk.lock();
  --st_->live;
  st_->exit_cv.notify_all();
  if (st_->live == 0) return false;
  st_->tasks.push_back(std::move(kept));  // a running thread takes it when it finishes
  return true;
}

void ElasticThreads::work(std::shared_ptr<State> st, std::function<void()> task) {
  std::unique_lock lk(st->mu);
  for (;;) {
    lk.unlock();
    task();
    task = nullptr;  // releases what the task holds before waiting
    lk.lock();
    if (st->tasks.empty()) {
      if (st->shutdown || st->idle >= st->keep_idle) break;
      ++st->idle;
      st->work_cv.wait(lk, [&] { return st->shutdown || !st->tasks.empty(); });
      --st->idle;
      if (st->tasks.empty()) break;
    }
    task = std::move(st->tasks.front());
    st->tasks.pop_front();
  }
  --st->live;
  st->exit_cv.notify_all();
}

void ElasticThreads::shutdown() {
  std::lock_guard lk(st_->mu);
  st_->shutdown = true;
  st_->work_cv.notify_all();
}

void ElasticThreads::wait() {
  std::unique_lock lk(st_->mu);
  st_->exit_cv.wait(lk, [this] { return st_->live == 0; });
}

std::size_t ElasticThreads::idle_threads() const {
  std::lock_guard lk(st_->mu);
  return st_->idle;
}

}  // namespace kubex::net
