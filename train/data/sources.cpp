#include "train/data/sources.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "train/data/decode.h"
#include "train/data/transforms.h"

namespace ridge::data {

namespace {

// Mixes a seed and an index into an independent stream's seed (splitmix64's finalizer).
uint64_t mix(uint64_t seed, uint64_t k) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull * (k + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void shuffle(std::vector<int32_t>& v, uint64_t seed) {
    Rng rng(seed);
    for (size_t i = v.size(); i-- > 1;) std::swap(v[i], v[rng.next() % (i + 1)]);  // Fisher-Yates
}

struct FolderState : WorkerState {
    Decoder decoder;
    Resampler resampler;
    Image image;
    std::vector<uint8_t> bytes;
};

void shape_batch(Batch& out, const Shape& shape) {
    if (out.x.shape != shape) out.x = HostTensor(shape);
    out.labels.resize(size_t(shape[0]));
    out.valid = int(shape[0]);
}

// Decodes image i of the folder, or the next one after it that decodes; throws when none does.
size_t decode_from(const ImageFolder& f, size_t i, FolderState& st, Undecodable& bad) {
    const size_t n = f.samples.size();
    for (size_t t = 0; t < n; ++t) {
        size_t j = (i + t) % n;
        if (bad.known(j)) continue;
        std::string why = read_file(f.samples[j].path, st.bytes);
        if (why.empty()) why = st.decoder.decode(st.bytes, st.image);
        if (why.empty()) return j;
        bad.mark(j, f.samples[j].path, why);
    }
    throw DataError(cat("none of the ", n, " images in ", f.root, " could be decoded (", bad.first(), ")"));
}

}  // namespace

std::string read_file(const std::string& path, std::vector<uint8_t>& buf) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::strerror(errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        ::close(fd);
        return std::strerror(errno);
    }
    buf.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < buf.size()) {
        ssize_t r = ::read(fd, buf.data() + got, buf.size() - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += size_t(r);
    }
    ::close(fd);
    buf.resize(got);
    return got == size_t(st.st_size) ? "" : "short read";
}

void Undecodable::mark(size_t i, const std::string& path, const std::string& why) {
    if (bad_[i].exchange(true)) return;
    std::lock_guard lk(m_);
    if (count_.fetch_add(1) == 0) first_ = cat(path, ": ", why);
}

std::string Undecodable::first() const {
    std::lock_guard lk(m_);
    return first_;
}

TrainFolderSource::TrainFolderSource(const ImageFolder& f, Shape batch, uint64_t seed)
    : f_(f), shape_(std::move(batch)), seed_(seed), bad_(f.samples.size()) {}

std::unique_ptr<WorkerState> TrainFolderSource::state() const { return std::make_unique<FolderState>(); }

std::shared_ptr<const std::vector<int32_t>> TrainFolderSource::permutation(int64_t epoch) const {
    std::lock_guard lk(m_);
    auto it = perms_.find(epoch);
    if (it != perms_.end()) return it->second;
    // Workers run at most a few batches apart: epochs well behind the newest are done with.
    while (!perms_.empty() && perms_.begin()->first < epoch - 1) perms_.erase(perms_.begin());
    auto p = std::make_shared<std::vector<int32_t>>(f_.samples.size());
    for (size_t i = 0; i < p->size(); ++i) (*p)[i] = int32_t(i);
    shuffle(*p, mix(seed_, uint64_t(epoch) ^ 0x5045524Dull));
    perms_[epoch] = p;
    return p;
}

void TrainFolderSource::fill(int64_t b, Batch& out, WorkerState& ws) const {
    FolderState& st = static_cast<FolderState&>(ws);
    shape_batch(out, shape_);
    const int64_t N = shape_[0], H = shape_[2], W = shape_[3];
    const int64_t n = int64_t(f_.samples.size());
    for (int64_t i = 0; i < N; ++i) {
        int64_t k = b * N + i;
        auto perm = permutation(k / n);
        size_t j = decode_from(f_, size_t((*perm)[size_t(k % n)]), st, bad_);
        Rng rng(mix(seed_, uint64_t(k)));
        Crop c = random_resized_crop(st.image.width, st.image.height, rng);
        bool flip = rng.next() >> 63;
        st.resampler.crop_resize(st.image, c, int(H), int(W), flip, out.x.data() + i * 3 * H * W);
        out.labels[size_t(i)] = f_.samples[j].label;
    }
}

ValFolderSource::ValFolderSource(const ImageFolder& f, Shape batch)
    : f_(f), shape_(std::move(batch)), order_(f.samples.size()), bad_(f.samples.size()) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = int32_t(i);
    shuffle(order_, 0x56414C);
}

std::unique_ptr<WorkerState> ValFolderSource::state() const { return std::make_unique<FolderState>(); }

int64_t ValFolderSource::batches() const { return (int64_t(f_.samples.size()) + shape_[0] - 1) / shape_[0]; }

void ValFolderSource::fill(int64_t b, Batch& out, WorkerState& ws) const {
    FolderState& st = static_cast<FolderState&>(ws);
    shape_batch(out, shape_);
    const int64_t N = shape_[0], H = shape_[2], W = shape_[3];
    const int64_t n = int64_t(f_.samples.size());
    out.valid = int(std::min(N, n - b * N));
    const int resize = val_resize(int(std::min(H, W)));
    for (int64_t i = 0; i < N; ++i) {
        size_t j = decode_from(f_, size_t(order_[size_t((b * N + i) % n)]), st, bad_);
        CenterCrop cc = center_crop(st.image.width, st.image.height, resize, int(std::min(H, W)));
        st.resampler.resize_center(st.image, cc, int(H), int(W), out.x.data() + i * 3 * H * W);
        out.labels[size_t(i)] = f_.samples[j].label;
    }
}

SyntheticSource::SyntheticSource(Shape batch, int64_t classes, uint64_t seed)
    : shape_(std::move(batch)), classes_(classes), seed_(seed) {}

std::unique_ptr<WorkerState> SyntheticSource::state() const { return std::make_unique<WorkerState>(); }

void SyntheticSource::fill(int64_t b, Batch& out, WorkerState&) const {
    shape_batch(out, shape_);
    Rng rng(mix(seed_, uint64_t(b)));
    const int64_t N = shape_[0], plane = shape_[2] * shape_[3];
    float* x = out.x.data();
    for (int64_t i = 0; i < N; ++i)
        for (int c = 0; c < 3; ++c) {
            const float mul = 1.0f / imagenet_std[c], add = -imagenet_mean[c] / imagenet_std[c];
            for (int64_t e = 0; e < plane; ++e, ++x) *x = float(rng.next() >> 40) * 0x1.0p-24f * mul + add;
        }
    for (int64_t i = 0; i < N; ++i) out.labels[size_t(i)] = int32_t(rng.next() % uint64_t(classes_));
}

}  // namespace ridge::data
