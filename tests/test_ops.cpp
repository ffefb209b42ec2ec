// Every op's shape rule and cost formula against numbers computed by hand (arithmetic in the
// comments). Small odd shapes, so a swapped dimension or an off-by-one cannot hide.
#include <doctest/doctest.h>

#include "engine/analysis.h"
#include "engine/dsl.h"

using namespace ridge;

namespace {
// A graph to add layers to, and the cost of its last layer. Inputs need no gradient unless built
// with input(shape, true).
struct Probe {
    Graph g{"probe"};
    LayerCost last(DType t = DType::fp32) { return analyze(g, t).layers.back(); }
};

// Every count of one layer, each computed by hand in the test that uses it. Bytes follow
// engine/README.md: fwd traffic (X + Wt + Y)*b; bwd traffic (Y + Sv + Wt [if any dgrad] + DX +
// Wt)*b + extra; a layer with no weights and no input needing a gradient moves nothing backward.
struct Expect {
    int64_t params = 0, macs = 0, fwd = 0, dgrad = 0, wgrad = 0;
    int64_t act = 0, fwd_traffic = 0, saved = 0, bwd_traffic = 0;
};

void check(const LayerCost& L, const Expect& e) {
    CAPTURE(L.name);
    CHECK(L.c.params == e.params);
    CHECK(L.c.macs == e.macs);
    CHECK(L.c.fwd_flops == e.fwd);
    CHECK(L.c.dgrad_flops == e.dgrad);
    CHECK(L.c.wgrad_flops == e.wgrad);
    CHECK(L.c.param_bytes == 4 * e.params);
    CHECK(L.c.activation_bytes == e.act);
    CHECK(L.c.fwd_traffic_bytes == e.fwd_traffic);
    CHECK(L.c.saved_bytes == e.saved);
    CHECK(L.c.bwd_traffic_bytes == e.bwd_traffic);
}
}  // namespace

TEST_CASE("conv2d: stride, asymmetric padding, bias") {
    Probe p;
    // x (2,3,9,7), K=4, R,S = 3,2, stride (2,1), pad top 1 bottom 2 left 0 right 1
    Tensor y = p.g.input({2, 3, 9, 7}, true) | conv(4, {3, 2}, {.stride = {2, 1}, .pad = {1, 2, 0, 1}, .bias = true});
    // P = (9+1+2-3)/2+1 = 5, Q = (7+0+1-2)/1+1 = 7
    CHECK(y.shape() == Shape{2, 4, 5, 7});
    // params 4*3*3*2 + 4 = 76; MACs N*K*P*Q*C*R*S = 2*4*5*7*3*3*2 = 5040; N*K*P*Q = 280 bias adds.
    // X = 2*3*9*7 = 378, Y = 280, Wt = 76.
    check(p.last(), {.params = 76,
                     .macs = 5040,
                     .fwd = 2 * 5040 + 280,                            // 10360
                     .dgrad = 2 * 5040,                                // 10080
                     .wgrad = 2 * 5040 + 280,                          // 10360: db sums dy
                     .act = 280 * 4,                                   // 1120
                     .fwd_traffic = (378 + 76 + 280) * 4,              // 2936
                     .saved = 378 * 4,                                 // x: 1512
                     .bwd_traffic = (280 + 378 + 76 + 378 + 76) * 4});  // dy, x, w, dx, dw: 4752
    CHECK(p.last().category == Category::conv);
}

TEST_CASE("conv2d: grouped, depthwise, dilated, strided, and the first layer") {
    SUBCASE("grouped 3x2, G=4, stride (2,1), padding (1,0), bias; the input needs its gradient") {
        Probe p;
        // x (2,8,7,6), K=12, C/G = 2. P = (7+2-3)/2+1 = 4, Q = (6+0-2)/1+1 = 5.
        Tensor y = p.g.input({2, 8, 7, 6}, true) | conv(12, {3, 2}, {.stride = {2, 1}, .pad = {1, 0}, .groups = 4, .bias = true});
        CHECK(y.shape() == Shape{2, 12, 4, 5});
        // params K*C/G*R*S + K = 12*2*3*2 + 12 = 156. MACs N*K*P*Q*C/G*R*S = 2*12*4*5*2*3*2 = 5760.
        // N*K*P*Q = 480. X = 2*8*7*6 = 672, Y = 480, Wt = 156.
        check(p.last(), {.params = 156,
                         .macs = 5760,
                         .fwd = 2 * 5760 + 480,    // 12000
                         .dgrad = 2 * 5760,        // 11520: each group's transposed conv, no more
                         .wgrad = 2 * 5760 + 480,  // 12000: each group's correlation, no more
                         .act = 480 * 4,
                         .fwd_traffic = (672 + 156 + 480) * 4,                // 5232
                         .saved = 672 * 4,                                    // 2688
                         .bwd_traffic = (480 + 672 + 156 + 672 + 156) * 4});  // 8544
        CHECK(p.last().category == Category::conv);
    }
    SUBCASE("depthwise 3x3, dilation 2, stride 2, padding 2; the input needs its gradient") {
        Probe p;
        // x (1,6,9,9), K = G = 6, C/G = 1. The dilated window spans 2*(3-1)+1 = 5:
        // P = Q = (9+2+2-5)/2+1 = 5.
        Tensor y = p.g.input({1, 6, 9, 9}, true) | conv(6, 3, {.stride = 2, .pad = 2, .dilation = 2, .groups = 6});
        CHECK(y.shape() == Shape{1, 6, 5, 5});
        // params 6*1*3*3 = 54. MACs 1*6*5*5*1*3*3 = 1350. X = 486, Y = 150, Wt = 54.
        check(p.last(), {.params = 54,
                         .macs = 1350,
                         .fwd = 2700,
                         .dgrad = 2700,
                         .wgrad = 2700,  // dw[k,0,r,s] sums N*P*Q = 25 products: 6*9*25*2
                         .act = 150 * 4,
                         .fwd_traffic = (486 + 54 + 150) * 4,               // 2760
                         .saved = 486 * 4,                                  // 1944
                         .bwd_traffic = (150 + 486 + 54 + 486 + 54) * 4});  // 4920
        CHECK(p.last().category == Category::dwconv);
    }
    SUBCASE("depthwise with a channel multiplier: G = C, K = 2C") {
        Probe p;
        // x (2,4,5,5), K=8, G=4, 3x3, padding 1: P = Q = 5. params 8*1*3*3 = 72.
        // MACs 2*8*5*5*1*9 = 3600. X = 200, Y = 400, Wt = 72.
        p.g.input({2, 4, 5, 5}, true) | conv(8, 3, {.pad = 1, .groups = 4});
        check(p.last(), {.params = 72,
                         .macs = 3600,
                         .fwd = 7200,
                         .dgrad = 7200,
                         .wgrad = 7200,
                         .act = 400 * 4,
                         .fwd_traffic = (200 + 72 + 400) * 4,
                         .saved = 200 * 4,
                         .bwd_traffic = (400 + 200 + 72 + 200 + 72) * 4});
        CHECK(p.last().category == Category::dwconv);
    }
    SUBCASE("dilated 3x3 (dilation (2,3)), stride 1, no padding") {
        Probe p;
        // x (1,2,10,11) -> K=3; spans 2*2+1 = 5 rows, 3*2+1 = 7 columns: P = 6, Q = 5.
        Tensor y = p.g.input({1, 2, 10, 11}, true) | conv(3, 3, {.dilation = {2, 3}});
        CHECK(y.shape() == Shape{1, 3, 6, 5});
        // params 3*2*9 = 54. MACs 1*3*6*5*2*9 = 1620. X = 220, Y = 90.
        check(p.last(), {.params = 54,
                         .macs = 1620,
                         .fwd = 3240,
                         .dgrad = 3240,
                         .wgrad = 3240,
                         .act = 90 * 4,
                         .fwd_traffic = (220 + 54 + 90) * 4,
                         .saved = 220 * 4,
                         .bwd_traffic = (90 + 220 + 54 + 220 + 54) * 4});
    }
    SUBCASE("the first layer, on the image: no dgrad, and no weight read for it") {
        Probe p;
        // x (1,3,9,9) needs no gradient; K=4, 3x3, stride 2, padding 1: P = Q = (9+2-3)/2+1 = 5.
        Tensor y = p.g.input({1, 3, 9, 9}) | conv(4, 3, {.stride = 2, .pad = 1});
        CHECK(y.shape() == Shape{1, 4, 5, 5});
        // params 4*3*9 = 108. MACs 1*4*5*5*3*9 = 2700. X = 243, Y = 100.
        check(p.last(), {.params = 108,
                         .macs = 2700,
                         .fwd = 5400,
                         .dgrad = 0,
                         .wgrad = 5400,
                         .act = 100 * 4,
                         .fwd_traffic = (243 + 108 + 100) * 4,       // 1804
                         .saved = 243 * 4,                           // x, for dw
                         .bwd_traffic = (100 + 243 + 108) * 4});     // dy, x, dw: 1804
    }
    SUBCASE("depthwise 3x3 with dilation 2 and padding 2 keeps 10x10, on the image") {
        Probe p;
        Tensor y = p.g.input({1, 8, 10, 10}) | conv(8, 3, {.pad = 2, .dilation = 2, .groups = 8});
        CHECK(y.shape() == Shape{1, 8, 10, 10});  // (10+4-2*2-1)/1+1
        // params 8*9 = 72; MACs 8*10*10*9 = 7200; X = Y = 800.
        check(p.last(), {.params = 72,
                         .macs = 7200,
                         .fwd = 14400,
                         .dgrad = 0,
                         .wgrad = 14400,
                         .act = 800 * 4,
                         .fwd_traffic = (800 + 72 + 800) * 4,
                         .saved = 800 * 4,
                         .bwd_traffic = (800 + 800 + 72) * 4});
        CHECK(p.last().category == Category::dwconv);
    }
    SUBCASE("grouped 1x1, G=2, is not depthwise") {
        Probe p;
        p.g.input({1, 8, 5, 5}) | conv(4, 1, {.groups = 2});
        LayerCost L = p.last();
        CHECK(L.c.params == 4 * 4);  // K * C/G
        CHECK(L.c.macs == 4 * 5 * 5 * 4);
        CHECK(L.category == Category::conv);
    }
    SUBCASE("stride 2, 7x7, pad 3 at odd size") {
        Probe p;
        Tensor y = p.g.input({1, 3, 225, 225}) | conv(64, 7, {.stride = 2, .pad = 3});
        CHECK(y.shape() == Shape{1, 64, 113, 113});  // (225+6-7)/2+1 = 113
        CHECK(p.last().c.macs == int64_t(64) * 113 * 113 * 3 * 49);  // 120,107,712
    }
}

TEST_CASE("linear over the last dimension of a rank-3 input") {
    Probe p;
    Tensor y = p.g.input({2, 5, 6}, true) | linear(3);
    CHECK(y.shape() == Shape{2, 5, 3});
    // M = 10 rows, C = 6, K = 3: params 3*6 + 3 = 21; MACs 10*3*6 = 180; M*K = 30 bias adds.
    // X = 60, Y = 30, Wt = 21.
    check(p.last(), {.params = 21,
                     .macs = 180,
                     .fwd = 360 + 30,
                     .dgrad = 360,
                     .wgrad = 360 + 30,
                     .act = 30 * 4,
                     .fwd_traffic = (60 + 21 + 30) * 4,             // 444
                     .saved = 60 * 4,
                     .bwd_traffic = (30 + 60 + 21 + 60 + 21) * 4});  // 768
    Probe q;
    // x (4,7) needs no gradient, no bias: params 14, MACs 4*2*7 = 56; X = 28, Y = 8.
    q.g.input({4, 7}) | linear(2, {.bias = false});
    check(q.last(), {.params = 14,
                     .macs = 56,
                     .fwd = 112,
                     .wgrad = 112,
                     .act = 32,
                     .fwd_traffic = (28 + 14 + 8) * 4,
                     .saved = 28 * 4,
                     .bwd_traffic = (8 + 28 + 14) * 4});
}

TEST_CASE("matmul with b transposed, as q*k^T") {
    Probe q;
    Tensor x = q.g.input({2, 3, 4, 5}, true), w = q.g.input({2, 3, 6, 5}, true);
    Tensor y = matmul(x, w, true);
    CHECK(y.shape() == Shape{2, 3, 4, 6});
    // B = 6, M = 4, L = 5, J = 6: MACs 6*4*6*5 = 720. X = 120 + 180, Y = 144; both saved, both need dx.
    check(q.last(), {.macs = 720,
                     .fwd = 1440,
                     .dgrad = 4 * 720,  // da and db
                     .act = 144 * 4,
                     .fwd_traffic = (300 + 144) * 4,             // 1776
                     .saved = 300 * 4,                           // 1200
                     .bwd_traffic = (144 + 300 + 300) * 4});     // dy, a, b, da, db: 2976
    Probe r;
    Tensor x2 = r.g.input({2, 4, 5}), w2 = r.g.input({2, 5, 3}, true);
    CHECK(matmul(x2, w2).shape() == Shape{2, 4, 3});
    // only b needs its gradient: 2*B*M*J*L = 2*2*4*3*5 = 240; X = 40 + 30, Y = 24, DX = 30
    check(r.last(), {.macs = 120,
                     .fwd = 240,
                     .dgrad = 240,
                     .act = 24 * 4,
                     .fwd_traffic = (70 + 24) * 4,
                     .saved = 70 * 4,
                     .bwd_traffic = (24 + 70 + 30) * 4});
}

TEST_CASE("batchnorm and layernorm") {
    SUBCASE("batchnorm (2,3,4,4)") {
        Probe p;
        p.g.input({2, 3, 4, 4}, true) | bn();
        // E = 96, C = 3: gamma and beta learned (the running statistics are not parameters).
        // extra: fp32 mean and 1/std per channel, 2*3*4 = 24 bytes, in saved and read backward.
        check(p.last(), {.params = 6,
                         .fwd = 2 * 96,
                         .dgrad = 5 * 96,
                         .wgrad = 5 * 96,
                         .act = 96 * 4,
                         .fwd_traffic = (96 + 6 + 96) * 4,                  // 792
                         .saved = 96 * 4 + 24,                              // 408
                         .bwd_traffic = (96 + 96 + 6 + 96 + 6) * 4 + 24});  // 1224
        LayerCost H = p.last(DType::fp16);
        CHECK(H.c.saved_bytes == 96 * 2 + 2 * 3 * 4);  // statistics stay fp32
        CHECK(H.c.bwd_traffic_bytes == (96 + 96 + 6 + 96 + 6) * 2 + 24);
    }
    SUBCASE("layernorm over the last dim of (2,5,8)") {
        Probe p;
        p.g.input({2, 5, 8}, true) | ln();
        // E = 80, D = 8, 10 rows: extra fp32 mean and 1/std per row, 2*10*4 = 80 bytes.
        check(p.last(), {.params = 16,
                         .fwd = 7 * 80,
                         .dgrad = 9 * 80,
                         .wgrad = 5 * 80,
                         .act = 80 * 4,
                         .fwd_traffic = (80 + 16 + 80) * 4,                   // 704
                         .saved = 80 * 4 + 80,                                // 400
                         .bwd_traffic = (80 + 80 + 16 + 80 + 16) * 4 + 80});  // 1168
    }
    SUBCASE("channels-first layernorm normalizes dim 1") {
        Probe p;
        // (1,6,2,2) over C = 6: 4 rows; the input needs no gradient, gamma and beta do.
        p.g.input({1, 6, 2, 2}) | ln(1);
        check(p.last(), {.params = 12,
                         .fwd = 7 * 24,
                         .wgrad = 5 * 24,
                         .act = 24 * 4,
                         .fwd_traffic = (24 + 12 + 24) * 4,
                         .saved = 24 * 4 + 2 * 4 * 4,
                         .bwd_traffic = (24 + 24 + 12) * 4 + 32});
    }
}

TEST_CASE("activations: FLOPs per element and what they keep") {
    struct Case {
        Activation a;
        int64_t fwd, dgrad;
        bool keeps_output;
    };
    const Case cases[] = {{relu(), 1, 1, true},       {relu6(), 2, 2, false},     {sigmoid(), 4, 3, true},
                          {silu(), 5, 9, false},      {gelu(), 5, 11, false},     {hardswish(), 5, 6, false},
                          {hardsigmoid(), 4, 3, false}};
    for (const Case& c : cases) {
        CAPTURE(fn_name(c.a.fn));
        Probe p;
        Tensor x = p.g.input({2, 3}, true);
        Tensor y = x | c.a;
        CHECK(y.shape() == Shape{2, 3});
        // E = 6; the one saved tensor (x or y) has 6 elements either way
        check(p.last(), {.fwd = 6 * c.fwd,
                         .dgrad = 6 * c.dgrad,
                         .act = 24,
                         .fwd_traffic = (6 + 6) * 4,
                         .saved = 6 * 4,
                         .bwd_traffic = (6 + 6 + 6) * 4});  // dy, the saved tensor, dx
        CHECK(layer_work(p.g, p.g.nodes().back(), DType::fp32).saves_output == c.keeps_output);
        CHECK(p.g.nodes().back().name == cat(fn_name(c.a.fn), fn_name(c.a.fn) == "relu6" ? "_1" : "1"));
        // On the image, nothing before it learns: no backward at all.
        Probe q;
        q.g.input({2, 3}) | c.a;
        check(q.last(), {.fwd = 6 * c.fwd, .act = 24, .fwd_traffic = 48});
    }
}

TEST_CASE("pooling: windows clipped by padding, ceil_mode") {
    SUBCASE("max 3x3 stride 2 pad 1 on 5x5") {
        Probe p;
        Tensor y = p.g.input({1, 1, 5, 5}, true) | maxpool(3, {.stride = 2, .pad = 1});
        CHECK(y.shape() == Shape{1, 1, 3, 3});
        // rows covered per window: [0,2) [1,4) [3,5) -> 2+3+2 = 7 on each axis; X = 25, Y = 9;
        // extra: int64 argmax per output, 9*8 = 72 bytes
        check(p.last(), {.fwd = 7 * 7 - 9,  // n-1 compares per window
                         .dgrad = 9,
                         .act = 36,
                         .fwd_traffic = (25 + 9) * 4,
                         .saved = 25 * 4 + 72,
                         .bwd_traffic = (9 + 25 + 25) * 4 + 72});  // dy, x, dx, argmax: 308
    }
    SUBCASE("max 3x3 stride 2 ceil_mode on 6x6 gains a partial window") {
        Probe p;
        Tensor y = p.g.input({1, 1, 6, 6}) | maxpool(3, {.stride = 2, .ceil_mode = true});
        CHECK(y.shape() == Shape{1, 1, 3, 3});  // floor mode would give 2
        CHECK(p.last().c.fwd_flops == 8 * 8 - 9);  // windows cover 3+3+2 rows
    }
    SUBCASE("ceil_mode keeps a partial window larger than the input, as PyTorch does") {
        Probe p;
        Tensor y = p.g.input({1, 1, 2, 2}) | maxpool(3, {.stride = 2, .ceil_mode = true});
        CHECK(y.shape() == Shape{1, 1, 1, 1});     // (2-3+1)/2+1; floor mode has no window at all
        CHECK(p.last().c.fwd_flops == 2 * 2 - 1);  // the one window covers all 4 inputs
    }
    SUBCASE("ceil_mode drops a window that would start in the right padding") {
        Probe p;
        Tensor y = p.g.input({1, 1, 5, 5}) | maxpool(3, {.stride = 3, .pad = 1, .ceil_mode = true});
        CHECK(y.shape() == Shape{1, 1, 2, 2});  // ceil((5+2-3)/3)+1 = 3, but 2*3 >= 5+1
    }
    SUBCASE("avg 3x3 stride 2 pad 1 on 5x5") {
        Probe p;
        p.g.input({1, 1, 5, 5}, true) | avgpool(3, {.stride = 2, .pad = 1, .count_include_pad = false});
        check(p.last(), {.fwd = 49,  // n-1 adds and a divide per window: 7*7 covered elements
                         .dgrad = 49 + 9,
                         .act = 36,
                         .fwd_traffic = (25 + 9) * 4,
                         .saved = 0,
                         .bwd_traffic = (9 + 25) * 4});  // dy, dx
    }
    SUBCASE("avg 3x3 stride 2 ceil_mode on (2,3,6,6): the last window is partial") {
        Probe p;
        Tensor y = p.g.input({2, 3, 6, 6}, true) | avgpool(3, {.stride = 2, .ceil_mode = true});
        CHECK(y.shape() == Shape{2, 3, 3, 3});
        // rows [0,3) [2,5) [4,6): 3+3+2 = 8 per axis; N*C = 6 planes; X = 216, Y = 54
        check(p.last(), {.fwd = 6 * 8 * 8,              // 384
                         .dgrad = 6 * (8 * 8 + 9),       // 438
                         .act = 54 * 4,
                         .fwd_traffic = (216 + 54) * 4,
                         .bwd_traffic = (54 + 216) * 4});
    }
    SUBCASE("adaptive average pool with windows that overlap") {
        Probe p;
        Tensor y = p.g.input({1, 2, 5, 7}, true) | adaptive_avgpool({3, 2});
        CHECK(y.shape() == Shape{1, 2, 3, 2});
        // rows [0,2) [1,4) [3,5) -> 7; columns [0,4) [3,7) -> 8; X = 70, Y = 12
        check(p.last(), {.fwd = 2 * 7 * 8,
                         .dgrad = 2 * 7 * 8 + 2 * 3 * 2,
                         .act = 48,
                         .fwd_traffic = (70 + 12) * 4,
                         .bwd_traffic = (12 + 70) * 4});
    }
}

TEST_CASE("elementwise with broadcasting") {
    SUBCASE("add: the broadcast input's gradient is a sum") {
        Probe p;
        Tensor a = p.g.input({2, 3, 4, 4}, true), b = p.g.input({2, 3, 1, 1}, true);
        CHECK(add(a, b).shape() == Shape{2, 3, 4, 4});
        // E = 96; a's gradient is dy itself, b's sums 96 terms into 6. X = 96 + 6, DX = 102.
        check(p.last(), {.fwd = 96,
                         .dgrad = 96,
                         .act = 96 * 4,
                         .fwd_traffic = (96 + 6 + 96) * 4,
                         .bwd_traffic = (96 + 102) * 4});  // dy, da, db
    }
    SUBCASE("add of equal shapes routes the gradient for free") {
        Probe p;
        Tensor a = p.g.input({2, 3}, true), b = p.g.input({2, 3}, true);
        add(a, b);
        check(p.last(), {.fwd = 6, .act = 24, .fwd_traffic = (12 + 6) * 4, .bwd_traffic = (6 + 12) * 4});
    }
    SUBCASE("mul as squeeze-excitation scale") {
        Probe p;
        Tensor a = p.g.input({2, 3, 4, 4}, true), s = p.g.input({2, 3, 1, 1}, true);
        mul(a, s);
        // da = dy*s (96); ds = sum(dy*a) over each plane (2*96). Both inputs saved: 96 + 6.
        check(p.last(), {.fwd = 96,
                         .dgrad = 96 + 2 * 96,
                         .act = 96 * 4,
                         .fwd_traffic = (102 + 96) * 4,
                         .saved = 102 * 4,
                         .bwd_traffic = (96 + 102 + 102) * 4});  // dy, a and s, da and ds: 1200
    }
    SUBCASE("mul where only the gate needs its gradient") {
        Probe p;
        Tensor a = p.g.input({2, 3, 4, 4}), s = p.g.input({2, 3, 1, 1}, true);
        mul(a, s);
        check(p.last(), {.fwd = 96,
                         .dgrad = 2 * 96,
                         .act = 96 * 4,
                         .fwd_traffic = (102 + 96) * 4,
                         .saved = 102 * 4,
                         .bwd_traffic = (96 + 102 + 6) * 4});
    }
    SUBCASE("scale and layer scale") {
        Probe p;
        p.g.input({1, 4, 3, 3}, true) | scale(0.125);
        // E = 36: nothing saved (the constant is known)
        check(p.last(), {.fwd = 36, .dgrad = 36, .act = 144, .fwd_traffic = 72 * 4, .bwd_traffic = 72 * 4});
        Probe q;
        q.g.input({1, 4, 3, 3}, true) | layer_scale(1);
        // gamma (4): dx = dy*gamma (36), dgamma = sum(dy*x) (72); x saved
        check(q.last(), {.params = 4,
                         .fwd = 36,
                         .dgrad = 36,
                         .wgrad = 72,
                         .act = 144,
                         .fwd_traffic = (36 + 4 + 36) * 4,
                         .saved = 36 * 4,
                         .bwd_traffic = (36 + 36 + 4 + 36 + 4) * 4});  // 464
    }
}

TEST_CASE("softmax") {
    Probe p;
    p.g.input({2, 7}, true) | softmax();
    check(p.last(), {.fwd = 5 * 14,
                     .dgrad = 4 * 14,
                     .act = 56,
                     .fwd_traffic = 28 * 4,
                     .saved = 14 * 4,                     // the output
                     .bwd_traffic = (14 + 14 + 14) * 4});  // dy, y, dx
}

TEST_CASE("data movement and views") {
    SUBCASE("concat copies") {
        Probe p;
        Tensor a = p.g.input({1, 2, 3, 3}), b = p.g.input({1, 5, 3, 3});
        CHECK(concat({a, b}).shape() == Shape{1, 7, 3, 3});
        check(p.last(), {.act = 63 * 4, .fwd_traffic = (18 + 45 + 63) * 4});
        Probe q;
        Tensor c = q.g.input({1, 2, 3, 3}, true), d = q.g.input({1, 5, 3, 3}, true);
        concat({c, d});
        // backward splits dy into the two input gradients: read 63, write 18 + 45
        check(q.last(), {.act = 63 * 4, .fwd_traffic = (63 + 63) * 4, .bwd_traffic = (63 + 63) * 4});
    }
    SUBCASE("channel shuffle and permute copy") {
        Probe p;
        Tensor x = p.g.input({1, 6, 2, 2}, true);
        CHECK((x | channel_shuffle(3)).shape() == Shape{1, 6, 2, 2});
        check(p.last(), {.act = 96, .fwd_traffic = 2 * 24 * 4, .bwd_traffic = 2 * 24 * 4});
        CHECK((p.g.input({2, 3, 4}) | permute({0, 2, 1})).shape() == Shape{2, 4, 3});
        check(p.last(), {.act = 96, .fwd_traffic = 2 * 24 * 4});
    }
    SUBCASE("views write nothing; a slice's or select's gradient writes its input's") {
        Probe p;
        Tensor x = p.g.input({2, 3, 4, 5}, true);
        CHECK((x | flatten()).shape() == Shape{2, 60});
        CHECK((x | flatten(2)).shape() == Shape{2, 3, 20});
        CHECK((x | reshape({0, -1, 5})).shape() == Shape{2, 12, 5});
        CHECK((x | slice(1, 1, 2)).shape() == Shape{2, 2, 4, 5});
        CHECK((x | select(1, 0)).shape() == Shape{2, 4, 5});
        CHECK((x | dropout(0.5)).shape() == x.shape());
        CHECK((x | stochastic_depth(0.1)).shape() == x.shape());
        const Analysis a = analyze(p.g, DType::fp32);
        REQUIRE(a.layers.size() == 7);
        for (size_t i : {0, 1, 2, 5, 6}) check(a.layers[i], {});
        // X = 120. The slice: dy (80) read, x's gradient (120) written, zeros outside its region.
        check(a.layers[3], {.bwd_traffic = (80 + 120) * 4});
        check(a.layers[4], {.bwd_traffic = (40 + 120) * 4});  // the select: dy (40), dx (120)
    }
    SUBCASE("slices or selects that tile their input write their regions only") {
        Probe p;
        Tensor x = p.g.input({2, 6, 4}, true);
        x | slice(1, 0, 2);
        x | slice(-2, 2, 4);  // the same dimension, counted from the end
        Tensor y = p.g.input({2, 3, 4}, true);
        for (int64_t i : {2, 0, 1}) y | select(1, i);
        Tensor z = p.g.input({2, 6, 4}, true);  // a gap: [0, 2) and [3, 6) leave row 2 to zeros
        z | slice(1, 0, 2);
        z | slice(1, 3, 3);
        Tensor w = p.g.input({2, 3, 4}, true);  // all of dimension 1, and a reader of another
        w | slice(1, 0, 3);
        w | select(2, 0);
        Tensor v = p.g.input({2, 6, 4}, true);  // overlapping: [0, 4) and [2, 6)
        v | slice(1, 0, 4);
        v | slice(1, 2, 4);
        Tensor u = p.g.input({2, 4, 4}, true);  // [0, 2) and [2, 4), but of two dimensions
        u | slice(1, 0, 2);
        u | slice(2, 2, 2);
        p.g.input({2, 3, 4}) | slice(1, 0, 1);  // no gradient wanted: no backward
        const Analysis a = analyze(p.g, DType::fp32);
        REQUIRE(a.layers.size() == 14);
        check(a.layers[0], {.bwd_traffic = (16 + 16) * 4});  // dy (2x2x4), its region of dx
        check(a.layers[1], {.bwd_traffic = (32 + 32) * 4});
        for (size_t i : {2, 3, 4}) check(a.layers[i], {.bwd_traffic = (8 + 8) * 4});
        check(a.layers[5], {.bwd_traffic = (16 + 48) * 4});  // dx (48) written whole
        check(a.layers[6], {.bwd_traffic = (24 + 48) * 4});
        check(a.layers[7], {.bwd_traffic = (24 + 24) * 4});
        check(a.layers[8], {.bwd_traffic = (6 + 24) * 4});
        for (size_t i : {9, 10}) check(a.layers[i], {.bwd_traffic = (32 + 48) * 4});
        for (size_t i : {11, 12}) check(a.layers[i], {.bwd_traffic = (16 + 32) * 4});
        check(a.layers[13], {});
    }
}

TEST_CASE("class token and position embedding") {
    Probe p;
    Tensor x = p.g.input({2, 4, 8}, true) | class_token();
    CHECK(x.shape() == Shape{2, 5, 8});
    // token (8); its gradient sums dy[n,0,:] over N = 2: 16 adds. X = 64, Y = 80.
    check(p.last(), {.params = 8,
                     .wgrad = 2 * 8,
                     .act = 80 * 4,
                     .fwd_traffic = (64 + 8 + 80) * 4,               // 608
                     .bwd_traffic = (80 + 8 + 64 + 8) * 4});          // dy, w, dx, dw: 640
    x | pos_embedding();
    // e (5,8) added to each of N = 2 sequences: 80 adds; de sums over N: 80. X = Y = 80.
    check(p.last(), {.params = 40,
                     .fwd = 2 * 5 * 8,
                     .wgrad = 2 * 5 * 8,
                     .act = 80 * 4,
                     .fwd_traffic = (80 + 40 + 80) * 4,               // 800
                     .bwd_traffic = (80 + 40 + 80 + 40) * 4});        // 960
}

TEST_CASE("a count beyond 64 bits is refused, never wrapped") {
    CHECK_THROWS_AS(checked_mul(int64_t(1) << 40, int64_t(1) << 30), CountOverflow);
    CHECK_THROWS_AS(checked_add(INT64_MAX, 1), CountOverflow);
    CHECK(checked_mul(int64_t(1) << 31, int64_t(1) << 31) == int64_t(1) << 62);
    Probe p;
    Tensor x = p.g.input({1 << 20, 1 << 20, 1 << 10});  // 2^50 elements: the shape itself fits
    x | linear(1 << 20);  // MACs M*K*C = 2^40 * 2^20 * 2^10 = 2^70 do not
    CHECK_THROWS_AS(analyze(p.g, DType::fp32), CountOverflow);
}

TEST_CASE("explain prints the formulas the analysis evaluates") {
    Probe p;
    p.g.input({1, 256, 28, 28}) | conv(256, 3, {.stride = 2, .pad = 1});
    Work w = layer_work(p.g, p.g.nodes().back(), DType::fp32);
    REQUIRE(w.lines.size() >= 2);
    CHECK(w.lines[1].first == "MACs");
    CHECK(w.lines[1].second.sym == "N*K*P*Q*C/G*R*S");
    CHECK(w.lines[1].second.num == "1*256*14*14*256*3*3");
    CHECK(w.lines[1].second.v == 115605504);
    CHECK(w.lines[1].second.v == p.last().c.macs);
}
