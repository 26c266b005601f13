// One background thread that handles items in the order they were pushed.
// The producer blocks while the items waiting weigh more than a budget, so a
// fast producer cannot fill memory with a slow consumer's backlog. An
// exception thrown by the handler stops the worker; finish() rethrows it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace oomlens::analyzer {

template <class Item>
class OrderedWorker {
 public:
  using Handler = std::function<void(Item&)>;

  // `weight_budget`: what the waiting items may weigh in all (one item is
  // always let through, whatever it weighs).
  OrderedWorker(Handler handle, std::size_t weight_budget)
      : handle_(std::move(handle)), budget_(weight_budget), thread_([this] { run(); }) {}

  OrderedWorker(const OrderedWorker&) = delete;
  OrderedWorker& operator=(const OrderedWorker&) = delete;

  ~OrderedWorker() {
    try {
      finish();
    } catch (...) {  // the owner is being destroyed without asking for the result
    }
  }

  // Queues `item` (its weight in whatever unit the budget uses); blocks while
  // the queue is over budget. Rethrows the handler's exception, if it threw.
  void push(Item item, std::size_t weight) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return failure_ || queued_ == 0 || queued_ + weight <= budget_; });
    if (failure_) std::rethrow_exception(failure_);
    queue_.emplace_back(std::move(item), weight);
    queued_ += weight;
    ready_.notify_one();
  }

  // Waits until every queued item was handled and the thread has ended.
  void finish() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
      ready_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
    if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
  }

 private:
  void run() {
    for (;;) {
      std::pair<Item, std::size_t> next;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return done_ || !queue_.empty(); });
        if (queue_.empty()) return;  // done_, and nothing left
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        handle_(next.first);
      } catch (...) {
        std::lock_guard lock(mutex_);
        failure_ = std::current_exception();
        queue_.clear();
        queued_ = 0;
        room_.notify_all();
        return;
      }
      std::lock_guard lock(mutex_);
      queued_ -= next.second;
      room_.notify_all();
    }
  }

  Handler handle_;
  const std::size_t budget_;
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<std::pair<Item, std::size_t>> queue_;
  std::size_t queued_ = 0;  // the weight of what is queued or being handled
  bool done_ = false;
  std::exception_ptr failure_;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace oomlens::analyzer
