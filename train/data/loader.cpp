#include "train/data/loader.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace ridge::data {

Loader::Loader(const Source& src, int64_t first, int64_t count, int workers, int depth, int nice)
    : src_(src),
      end_(first + count),
      depth_(std::max(depth, workers + 1)),
      slots_(size_t(depth_)),
      assign_(first),
      held_(first) {
    if (workers == 0) {
        own_ = src_.state();
        return;
    }
    threads_.reserve(size_t(workers));
    for (int w = 0; w < workers; ++w) {
        threads_.emplace_back([this, nice] { work(nice); });
        // Named, so `top -H` (and a test waiting for the run to start) can tell them from compute.
        pthread_setname_np(threads_.back().native_handle(), "ridge-loader");
    }
}

Loader::~Loader() {
    {
        std::lock_guard lk(m_);
        stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
}

void Loader::work(int nice) {
    // Linux applies niceness per thread: lowering the workers' lets compute threads, which wait
    // on each other at every primitive, keep their cores while decoding fills the gaps.
    if (nice != 0) setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), getpriority(PRIO_PROCESS, 0) + nice);
    std::unique_ptr<WorkerState> st;
    try {
        st = src_.state();
    } catch (...) {
        std::lock_guard lk(m_);
        if (!error_) error_ = std::current_exception();
        ready_cv_.notify_all();
        return;
    }
    for (;;) {
        int64_t b;
        {
            std::unique_lock lk(m_);
            work_cv_.wait(lk, [&] { return stop_ || error_ || assign_ >= end_ || assign_ < held_ + depth_; });
            if (stop_ || error_ || assign_ >= end_) return;
            b = assign_++;
        }
        Slot& s = slots_[size_t(b % depth_)];
        try {
            src_.fill(b, s.batch, *st);
        } catch (...) {
            std::lock_guard lk(m_);
            if (!error_) error_ = std::current_exception();
            ready_cv_.notify_all();
            work_cv_.notify_all();
            return;
        }
        {
            std::lock_guard lk(m_);
            s.index = b;
            s.ready = true;
        }
        ready_cv_.notify_all();
    }
}

const Batch& Loader::next() {
    using Clock = std::chrono::steady_clock;
    std::unique_lock lk(m_);
    if (holding_) {
        slots_[size_t(held_ % depth_)].ready = false;
        ++held_;
        holding_ = false;
        work_cv_.notify_all();
    }
    if (held_ >= end_) throw std::logic_error("loader: every batch was handed out");
    Slot& s = slots_[size_t(held_ % depth_)];
    auto t0 = Clock::now();
    if (threads_.empty()) {
        lk.unlock();
        src_.fill(held_, s.batch, *own_);
        lk.lock();
        s.index = held_;
        s.ready = true;
    } else {
        ready_cv_.wait(lk, [&] { return error_ || (s.ready && s.index == held_); });
    }
    waited_ += std::chrono::duration<double>(Clock::now() - t0).count();
    if (error_) std::rethrow_exception(error_);
    holding_ = true;
    return s.batch;
}

}  // namespace ridge::data
