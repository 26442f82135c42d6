// Once: std::call_once whose every call after the first is one load. libstdc++'s call_once sets
// two thread-local pointers and calls pthread_once at every call, the first or not (about 80
// user instructions here, with the thread-local lookups): too much for what each event's
// encoding asks of its context (Context::ensure, Context::backend).
#pragma once

#include <atomic>
#include <mutex>
#include <utility>

namespace pmc::detail {

class Once {
 public:
  // Runs f unless a call has completed: as std::call_once (one runs at a time; a throw leaves it
  // to the next call), and whatever f wrote is seen by every caller once a call has returned.
  template <class F>
  void operator()(F&& f) {
    if (done_.load(std::memory_order_acquire)) [[likely]]
      return;
    std::call_once(flag_, std::forward<F>(f));
    done_.store(true, std::memory_order_release);
  }

 private:
  std::once_flag flag_;
  std::atomic<bool> done_{false};
};

}  // namespace pmc::detail
