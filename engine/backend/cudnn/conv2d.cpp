// Convolution through cuDNN's legacy API (deprecated in cuDNN 9 but present, and the one that
// exposes cudnnFind): forward, backward-data and backward-filter, each with the algorithm that
// measured fastest for its shape within the workspace limit, remembered per shape for the
// process. The bias (and a folded batchnorm's bias) is added by a hand-written kernel in fp32.
//   x (N,C,H,W)  w (K,C/G,R,S)  b (K)  y (N,K,P,Q)
#include <map>

#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

const char* fwd_names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                           "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
const char* bwd_data_names[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
const char* bwd_filter_names[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED",
                                  "FFT_TILING"};

struct Choice {
    int algo = -1;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    size_t ws = 0;
};

// Keyed by direction, precision and every number of the descriptors; a process runs the same
// shapes in its fused and unfused executors and in every repeat, and searches once.
std::map<std::string, Choice>& cache() {
    static std::map<std::string, Choice> c;
    return c;
}

// The first result (cuDNN sorts them by time) that ran, fits the workspace and, for fp32, does
// not round through TF32.
template <class Perf>
Choice pick(const Perf* r, int count, size_t ws_limit, Precision prec, const std::string& what) {
    for (int i = 0; i < count; ++i) {
        if (r[i].status != CUDNN_STATUS_SUCCESS || r[i].memory > ws_limit) continue;
        if (prec == Precision::fp32 && r[i].mathType != CUDNN_FMA_MATH) continue;
        return {int(r[i].algo), r[i].mathType, r[i].memory};
    }
    throw gpu::LibraryError(cat("cudnn: no ", what, " algorithm ran within the ", ws_limit >> 20,
                                " MiB workspace in ", precision_name(prec)));
}

class ConvLayer final : public LayerBase {
public:
    ConvLayer(Plan& p, int node, const Conv2d& op) : LayerBase(p, node), op_(op) {
        if (op.pad.top != op.pad.bottom || op.pad.left != op.pad.right)
            throw std::invalid_argument("cudnn: asymmetric padding has no cuDNN convolution");
        const auto& q = p.params[size_t(node)];
        w_ = q.at(0);
        bias_ = p.fold_bias[size_t(node)] >= 0 ? p.fold_bias[size_t(node)] : q.size() > 1 ? q[1].master : -1;
        dbias_ = q.size() > 1 ? q[1].grad : -1;
    }

    void setup(Dev& d) override {
        const Shape &xs = p.shape(x()), &ys = p.shape(y());
        xd_.set(p.dt, xs[0], xs[1], xs[2], xs[3]);
        yd_.set(p.dt, ys[0], ys[1], ys[2], ys[3]);
        RIDGE_CUDNN_CHECK(cudnnCreateFilterDescriptor(&wd_));
        RIDGE_CUDNN_CHECK(cudnnSetFilter4dDescriptor(wd_, cudnn_type(p.dt), CUDNN_TENSOR_NCHW,
                                                     checked_int(op_.K, "K"), checked_int(xs[1] / op_.G, "C/G"),
                                                     checked_int(op_.kernel.h, "R"), checked_int(op_.kernel.w, "S")));
        std::string key = cat(precision_name(p.precision), " x", to_string(xs), " y", to_string(ys), " k", op_.kernel.h,
                              "x", op_.kernel.w, " s", op_.stride.h, ",", op_.stride.w, " p", op_.pad.top, ",",
                              op_.pad.left, " d", op_.dilation.h, ",", op_.dilation.w, " g", op_.G, " ws", d.ws_bytes);
        // Before a search each descriptor allows what the precision allows; after it, it carries
        // the math type of the chosen algorithm, as cuDNN requires.
        cudnnMathType_t allowed = p.precision == Precision::fp32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
        for (cudnnConvolutionDescriptor_t* c : {&cf_, &cd_, &cw_}) {
            RIDGE_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(c));
            RIDGE_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
                *c, checked_int(op_.pad.top, "pad"), checked_int(op_.pad.left, "pad"), checked_int(op_.stride.h, "stride"),
                checked_int(op_.stride.w, "stride"), checked_int(op_.dilation.h, "dilation"),
                checked_int(op_.dilation.w, "dilation"), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
            RIDGE_CUDNN_CHECK(cudnnSetConvolutionGroupCount(*c, checked_int(op_.G, "G")));
            RIDGE_CUDNN_CHECK(cudnnSetConvolutionMathType(*c, allowed));
        }
        auto& c = cache();
        if (!c.count("fwd " + key)) {
            cudnnConvolutionFwdAlgoPerf_t r[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
            int got = 0;
            RIDGE_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(d.dnn, xd_.d, xv(d), wd_, d.at(w_.copy), cf_, yd_.d,
                                                                     yv(d), CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, r,
                                                                     d.ws, d.ws_bytes));
            c["fwd " + key] = pick(r, got, d.ws_bytes, p.precision, "forward");
        }
        fwd_ = c["fwd " + key];
        RIDGE_CUDNN_CHECK(cudnnSetConvolutionMathType(cf_, fwd_.math));
        if (!p.train) return;
        if (wants_dx()) {
            if (!c.count("dgrad " + key)) {
                cudnnConvolutionBwdDataAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
                int got = 0;
                RIDGE_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
                    d.dnn, wd_, d.at(w_.copy), yd_.d, dy(d), cd_, xd_.d, dx(d), CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                    &got, r, d.ws, d.ws_bytes));
                c["dgrad " + key] = pick(r, got, d.ws_bytes, p.precision, "backward-data");
            }
            dgrad_ = c["dgrad " + key];
            RIDGE_CUDNN_CHECK(cudnnSetConvolutionMathType(cd_, dgrad_.math));
        }
        if (w_.grad >= 0) {
            if (!c.count("wgrad " + key)) {
                cudnnConvolutionBwdFilterAlgoPerf_t r[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
                int got = 0;
                RIDGE_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                    d.dnn, xd_.d, xv(d), yd_.d, dy(d), cw_, wd_, d.at(w_.grad), CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                    &got, r, d.ws, d.ws_bytes));
                c["wgrad " + key] = pick(r, got, d.ws_bytes, p.precision, "backward-filter");
            }
            wgrad_ = c["wgrad " + key];
            RIDGE_CUDNN_CHECK(cudnnSetConvolutionMathType(cw_, wgrad_.math));
        }
    }

    ~ConvLayer() override {
        if (wd_) cudnnDestroyFilterDescriptor(wd_);
        for (auto c : {cf_, cd_, cw_})
            if (c) cudnnDestroyConvolutionDescriptor(c);
    }

    void forward(Dev& d) override {
        const float one = 1, zero = 0;
        RIDGE_CUDNN_CHECK(cudnnConvolutionForward(d.dnn, &one, xd_.d, xv(d), wd_, d.at(w_.copy), cf_,
                                                  cudnnConvolutionFwdAlgo_t(fwd_.algo), d.ws, fwd_.ws, &zero, yd_.d,
                                                  yv(d)));
        if (bias_ >= 0) {
            const Shape& ys = p.shape(y());
            gpu::bias_forward(p.dt, yv(d), d.f(bias_), yv(d), {ys[0], ys[1], ys[2] * ys[3]}, d.s);
        }
    }

    bool has_dgrad() const override { return wants_dx(); }
    bool has_wgrad() const override { return w_.grad >= 0 || dbias_ >= 0; }

    void dgrad(Dev& d) override {
        if (!wants_dx()) return;
        const float one = 1;
        RIDGE_CUDNN_CHECK(cudnnConvolutionBackwardData(d.dnn, &one, wd_, d.at(w_.copy), yd_.d, dy(d), cd_,
                                                       cudnnConvolutionBwdDataAlgo_t(dgrad_.algo), d.ws, dgrad_.ws,
                                                       &one, xd_.d, dx(d)));
    }

    void wgrad(Dev& d) override {
        const float one = 1;
        if (w_.grad >= 0)
            RIDGE_CUDNN_CHECK(cudnnConvolutionBackwardFilter(d.dnn, &one, xd_.d, xv(d), yd_.d, dy(d), cw_,
                                                             cudnnConvolutionBwdFilterAlgo_t(wgrad_.algo), d.ws,
                                                             wgrad_.ws, &one, wd_, d.at(w_.grad)));
        if (dbias_ >= 0) {
            const Shape& ys = p.shape(y());
            gpu::bias_backward(p.dt, dy(d), d.f(dbias_), {ys[0], ys[1], ys[2] * ys[3]}, d.s);
        }
    }

    std::string algorithm() const override {
        std::string s = cat("fwd ", fwd_.algo >= 0 ? fwd_names[fwd_.algo] : "?");
        if (dgrad_.algo >= 0) s += cat(", dgrad ", bwd_data_names[dgrad_.algo]);
        if (wgrad_.algo >= 0) s += cat(", wgrad ", bwd_filter_names[wgrad_.algo]);
        return s;
    }

private:
    Conv2d op_;
    Param w_;
    int bias_ = -1, dbias_ = -1;
    TensorDesc xd_, yd_;
    cudnnFilterDescriptor_t wd_ = nullptr;
    cudnnConvolutionDescriptor_t cf_ = nullptr, cd_ = nullptr, cw_ = nullptr;
    Choice fwd_, dgrad_, wgrad_;
};

}  // namespace

std::unique_ptr<LayerRun> conv2d_layer(Plan& p, int node, const Conv2d& op) {
    return std::make_unique<ConvLayer>(p, node, op);
}

}  // namespace ridge::cudnn
