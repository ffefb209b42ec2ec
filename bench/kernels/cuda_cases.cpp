// The hand-written CUDA kernels of kernels/cuda against the CPU references of kernels/cpu, fp32
// storage. Timed with CUDA events around each call, after writing a buffer twice the size of L2
// (cold, as the CPU side flushes its caches); the reference is timed on the CPU.
#include <cuda_runtime.h>

#include <cmath>

#include "bench/kernels/cases.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/kernels.h"

namespace ridge::kbench {

namespace {

class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { RIDGE_CUDA_CHECK(cudaMalloc(&p_, bytes ? bytes : 1)); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { cudaFree(p_); }
    float* f() const { return static_cast<float*>(p_); }
    void* get() const { return p_; }
    size_t bytes() const { return bytes_; }
    void upload(const Floats& v) {
        RIDGE_CUDA_CHECK(cudaMemcpy(p_, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
    }
    Floats download(size_t n) const {
        Floats v(n);
        RIDGE_CUDA_CHECK(cudaMemcpy(v.data(), p_, n * sizeof(float), cudaMemcpyDeviceToHost));
        return v;
    }

private:
    void* p_ = nullptr;
    size_t bytes_;
};

size_t l2_flush_bytes() {
    int dev = 0, l2 = 0;
    RIDGE_CUDA_CHECK(cudaGetDevice(&dev));
    RIDGE_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    return 2 * size_t(l2 > 0 ? l2 : 64 << 20);
}

// The three kernels share one body: a plain (N,C,H,W) input x, a gate s (N,C) and dy where the
// kernel needs them, one output compared against the CPU reference within a stated bound.
class CudaCase : public Case {
public:
    CudaCase(const Kernel& k, const Problem& p) : k_(k), p_(p) {
        xs_ = {p.N, p.C, p.H, p.W};
        ss_ = {p.N, p.C, 1, 1};
        n_ = size_t(numel(xs_));
        bool act = k.name == "cuda-hardswish";
        // hardswish's inputs cover both kinks (-3 and 3) and the curve between.
        x_ = act ? uniform(n_, -4, 4, 1) : uniform(n_, -1, 1, 1);
        s_ = uniform(size_t(p.N * p.C), 0, 1, 2);
        dy_ = uniform(n_, -1, 1, 3);
        out_n_ = k.name == "cuda-se-gate-grad" ? size_t(p.N * p.C) : n_;
        ref_.assign(out_n_, 0.0f);
        reference(x_, dy_, ref_);
        const double u = std::ldexp(1.0, -24);
        if (k.name == "cuda-se-gate-grad") {
            Floats ax = x_, ady = dy_, mag(out_n_, 0.0f);
            for (float& v : ax) v = std::fabs(v);
            for (float& v : ady) v = std::fabs(v);
            reference(ax, ady, mag);
            for (size_t i = 0; i < out_n_; ++i) bound_.push_back(dot_bound(p.H * p.W, mag[i], ref_[i]));
        } else if (act) {
            // x + 3, the product and the division by 6 each round once (relative u each, no
            // cancellation: min and max are exact), and the double reference rounds once.
            for (float r : ref_) bound_.push_back(4 * u * std::fabs(r));
        }
        // cuda-se-scale: one float multiply, the same correctly rounded product as the
        // reference's: exact (bound_ stays empty).
        x_d_ = std::make_unique<DeviceBuffer>(n_ * 4);
        s_d_ = std::make_unique<DeviceBuffer>(s_.size() * 4);
        dy_d_ = std::make_unique<DeviceBuffer>(n_ * 4);
        out_d_ = std::make_unique<DeviceBuffer>(out_n_ * 4);
        x_d_->upload(x_);
        s_d_->upload(s_);
        dy_d_->upload(dy_);
        RIDGE_CUDA_CHECK(cudaStreamCreate(&stream_));
    }
    ~CudaCase() override { cudaStreamDestroy(stream_); }

    std::string variant() const override { return "cuda"; }
    void run_fast() override {
        using namespace ridge::gpu;
        if (k_.name == "cuda-se-scale") {
            mul_forward(DType::fp32, x_d_->get(), bcast(xs_, xs_), s_d_->get(), bcast(ss_, xs_), out_d_->get(),
                        stream_);
        } else if (k_.name == "cuda-se-gate-grad") {
            // Adds into ds: the timed repeats accumulate, the check starts from zero.
            broadcast_backward(DType::fp32, dy_d_->get(), bcast(ss_, xs_), int64_t(out_n_), x_d_->get(),
                               bcast(xs_, xs_), out_d_->get(), stream_);
        } else {
            activation_forward(DType::fp32, Act::hardswish, x_d_->get(), out_d_->get(), int64_t(n_), stream_);
        }
    }
    void run_reference() override {
        Floats out(out_n_, 0.0f);
        reference(x_, dy_, out);
    }
    Check check(const Tamper& tamper) override {
        RIDGE_CUDA_CHECK(cudaMemsetAsync(out_d_->get(), 0, out_n_ * 4, stream_));
        run_fast();
        RIDGE_CUDA_CHECK(cudaStreamSynchronize(stream_));
        Floats out = out_d_->download(out_n_);
        std::string what = k_.name == "cuda-se-gate-grad" ? "ds" : "y";
        if (tamper) tamper(what, out, bound_);
        return compare(what, out, ref_, bound_);
    }
    double flops() const override {
        if (k_.name == "cuda-se-scale") return double(n_);
        if (k_.name == "cuda-se-gate-grad") return 2.0 * double(n_);
        return 3.0 * double(n_);  // hardswish: the add, the product and the division (min and max not counted)
    }
    double bytes() const override {
        if (k_.name == "cuda-hardswish") return 8.0 * double(n_);
        return 4.0 * double(2 * n_ + s_.size());
    }
    Timing time_fast(const TimingOptions& o) override {
        DeviceBuffer flush(o.flush ? l2_flush_bytes() : 0);
        cudaEvent_t start, stop;
        RIDGE_CUDA_CHECK(cudaEventCreate(&start));
        RIDGE_CUDA_CHECK(cudaEventCreate(&stop));
        for (int i = 0; i < o.warmup; ++i) run_fast();
        std::vector<double> seconds;
        for (int i = 0; i < o.repeats; ++i) {
            if (o.flush) RIDGE_CUDA_CHECK(cudaMemsetAsync(flush.get(), i & 0xff, flush.bytes(), stream_));
            RIDGE_CUDA_CHECK(cudaEventRecord(start, stream_));
            run_fast();
            RIDGE_CUDA_CHECK(cudaEventRecord(stop, stream_));
            RIDGE_CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            RIDGE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            seconds.push_back(ms * 1e-3);
        }
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        Timing t;
        t.seconds = bench::summarize(seconds);
        t.repeats = o.repeats;
        return t;
    }

private:
    // se-scale: out = x * s; se-gate-grad: out += sum dy * x; hardswish: out = hardswish(x).
    void reference(const Floats& x, const Floats& dy, Floats& out) const {
        if (k_.name == "cuda-se-gate-grad") {
            ref::Bwd b;
            b.in = {{x.data(), xs_}, {s_.data(), ss_}};
            b.y = {dy.data(), xs_};
            b.dy = {dy.data(), xs_};
            b.dx = {{nullptr, xs_}, {out.data(), ss_}};
            ref::backward(Mul{}, b);
            return;
        }
        ref::Fwd f;
        f.y = {out.data(), xs_};
        if (k_.name == "cuda-se-scale") {
            f.in = {{x.data(), xs_}, {s_.data(), ss_}};
            ref::forward(Mul{}, f);
        } else {
            f.in = {{x.data(), xs_}};
            ref::forward(Activation{Activation::Fn::hardswish}, f);
        }
    }

    Kernel k_;
    Problem p_;
    Shape xs_, ss_;
    size_t n_ = 0, out_n_ = 0;
    Floats x_, s_, dy_, ref_;
    std::vector<double> bound_;
    std::unique_ptr<DeviceBuffer> x_d_, s_d_, dy_d_, out_d_;
    cudaStream_t stream_ = nullptr;
};

}  // namespace

std::string cuda_unavailable() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) return std::string("no CUDA device (") + cudaGetErrorString(e) + ")";
    if (n == 0) return "no CUDA device";
    return "";
}

std::unique_ptr<Case> make_cuda_case(const Kernel& k, const Problem& p) { return std::make_unique<CudaCase>(k, p); }

}  // namespace ridge::kbench
