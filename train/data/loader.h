#pragma once
// Batches ahead of the compute: a Source fills one whole batch (decoding and transforming each
// of its images); a Loader runs `workers` threads that fill a bounded ring of batch slots ahead
// of the consumer and hands the batches out in order. Each batch is a pure function of its index
// (its samples, their random crops and flips are seeded by the index), so what a run trains on
// does not depend on which thread filled what, or when.
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/backend/host_tensor.h"

namespace ridge::data {

struct Batch {
    HostTensor x;                 // (N, 3, H, W), normalized
    std::vector<int32_t> labels;  // N
    int valid = 0;                // leading samples that count (validation pads its last batch)
};

// What one worker thread keeps between batches: a decoder, resampling scratch, a read buffer.
struct WorkerState {
    virtual ~WorkerState() = default;
};

class Source {
public:
    virtual ~Source() = default;
    virtual std::unique_ptr<WorkerState> state() const = 0;
    // Fills batch b (shape (N, 3, H, W)); called from several threads at once with their own states.
    virtual void fill(int64_t b, Batch& out, WorkerState& st) const = 0;
};

class Loader {
public:
    // Batches first .. first + count - 1 of `src`. workers 0: next() fills each batch itself.
    // depth: batch slots, the one the consumer holds included (at least workers + 1).
    // nice: the workers' scheduling niceness relative to the process (0: the same as compute).
    Loader(const Source& src, int64_t first, int64_t count, int workers, int depth, int nice = 0);
    ~Loader();
    Loader(const Loader&) = delete;
    Loader& operator=(const Loader&) = delete;

    // The next batch in order, valid until the following call, which hands its slot back to the
    // workers. Rethrows what a worker threw.
    const Batch& next();
    // Seconds next() has spent waiting for a batch (with no workers: filling it).
    double waited() const { return waited_; }

private:
    void work(int nice);

    struct Slot {
        Batch batch;
        int64_t index = -1;
        bool ready = false;
    };
    const Source& src_;
    const int64_t end_;
    const int depth_;
    std::vector<Slot> slots_;
    std::unique_ptr<WorkerState> own_;  // workers 0

    std::mutex m_;
    std::condition_variable work_cv_, ready_cv_;
    int64_t assign_;  // the next batch a worker takes
    int64_t held_;    // the batch the consumer holds (or will take next)
    bool holding_ = false, stop_ = false;
    std::exception_ptr error_;
    double waited_ = 0;
    std::vector<std::thread> threads_;
};

}  // namespace ridge::data
