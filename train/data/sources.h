#pragma once
// What the loader's workers fill batches from: an image folder (decoded and transformed the
// ImageNet way, training or validation) or synthetic images drawn in memory.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "train/data/folder.h"
#include "train/data/loader.h"

namespace ridge::data {

// Files that failed to decode during a run: skipped (another image takes the place), counted
// once each, the first reason kept for the summary.
class Undecodable {
public:
    explicit Undecodable(size_t files) : bad_(files) {}
    bool known(size_t i) const { return bad_[i].load(std::memory_order_relaxed); }
    void mark(size_t i, const std::string& path, const std::string& why);
    int64_t count() const { return count_.load(); }
    std::string first() const;  // "path: reason", empty when none failed

private:
    std::vector<std::atomic<bool>> bad_;
    std::atomic<int64_t> count_{0};
    mutable std::mutex m_;
    std::string first_;
};

// The training images as an endless stream of batches of N: sample k of the stream is image
// perm_e[k mod n] of epoch e = k / n, each epoch's permutation drawn from the seed; each sample
// gets RandomResizedCrop to H x W and a coin-flip mirror from a generator seeded by (seed, k).
// A file that does not decode is replaced by the next image of the folder that does.
class TrainFolderSource : public Source {
public:
    TrainFolderSource(const ImageFolder& f, Shape batch, uint64_t seed);
    std::unique_ptr<WorkerState> state() const override;
    void fill(int64_t b, Batch& out, WorkerState& st) const override;
    const Undecodable& undecodable() const { return bad_; }

private:
    std::shared_ptr<const std::vector<int32_t>> permutation(int64_t epoch) const;
    const ImageFolder& f_;
    const Shape shape_;
    const uint64_t seed_;
    mutable Undecodable bad_;
    mutable std::mutex m_;
    mutable std::map<int64_t, std::shared_ptr<const std::vector<int32_t>>> perms_;
};

// The validation images, resized and center-cropped, each once, in one fixed shuffled order
// (the same for every seed): the executors normalize with batch statistics (executor.h), and a
// batch of one class, which folder order would give, is normalized flat. Batch b holds images
// b N .. b N + N - 1 of that order, the last batch padded with images from the start
// (Batch::valid says how many count). batches() = ceil(n / N).
class ValFolderSource : public Source {
public:
    ValFolderSource(const ImageFolder& f, Shape batch);
    std::unique_ptr<WorkerState> state() const override;
    void fill(int64_t b, Batch& out, WorkerState& st) const override;
    int64_t batches() const;
    const Undecodable& undecodable() const { return bad_; }

private:
    const ImageFolder& f_;
    const Shape shape_;
    std::vector<int32_t> order_;
    mutable Undecodable bad_;
};

// Random images and labels: pixels uniform in [0, 1) normalized as images are, labels uniform
// over `classes`; drawn from (seed, b), no file, no decoding.
class SyntheticSource : public Source {
public:
    SyntheticSource(Shape batch, int64_t classes, uint64_t seed);
    std::unique_ptr<WorkerState> state() const override;
    void fill(int64_t b, Batch& out, WorkerState& st) const override;

private:
    const Shape shape_;
    const int64_t classes_;
    const uint64_t seed_;
};

// Reads a whole file into `buf`; returns why not (empty on success).
std::string read_file(const std::string& path, std::vector<uint8_t>& buf);

}  // namespace ridge::data
