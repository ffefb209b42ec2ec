// Reference softmax cross-entropy, PyTorch's F.cross_entropy with mean reduction.
// logits (N,K)  labels (N)  dlogits (N,K)
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/cpu/kernel.h"

namespace ridge::ref {

namespace {

template <class Real>
Real cross_entropy(CViewT<Real> logits, const std::vector<int32_t>& labels, ViewT<Real> dlogits) {
    if (logits.shape.size() != 2 || int64_t(labels.size()) != logits.shape[0])
        throw std::invalid_argument(cat("softmax_cross_entropy: logits ", to_string(logits.shape), " and ",
                                        labels.size(), " labels; expected (N,K) and N"));
    const int64_t N = logits.shape[0], K = logits.shape[1];
    double loss = 0;
    for (int64_t n = 0; n < N; ++n) {
        const Real* z = logits.p + n * K;
        const int32_t t = labels[n];
        if (t < 0 || t >= K)
            throw std::invalid_argument(cat("softmax_cross_entropy: label ", t, " outside [0, ", K, ")"));
        // loss_n = log sum over k of exp(z[k]) - z[t], with the max shifted out so exp stays finite
        double m = z[0];
        for (int64_t k = 1; k < K; ++k) m = std::max(m, double(z[k]));
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += std::exp(z[k] - m);
        loss += std::log(sum) + m - z[t];
        // dlogits[n,k] = (softmax(z)[k] - [k == t]) / N
        if (dlogits.p)
            for (int64_t k = 0; k < K; ++k)
                dlogits.p[n * K + k] = Real((std::exp(z[k] - m) / sum - (k == t ? 1.0 : 0.0)) / double(N));
    }
    return Real(loss / double(N));
}

}  // namespace

float softmax_cross_entropy(CView logits, const std::vector<int32_t>& labels, View dlogits) {
    return cross_entropy(logits, labels, dlogits);
}

double softmax_cross_entropy(CViewT<double> logits, const std::vector<int32_t>& labels, ViewT<double> dlogits) {
    return cross_entropy(logits, labels, dlogits);
}

}  // namespace ridge::ref
