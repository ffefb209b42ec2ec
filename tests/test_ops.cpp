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
}  // namespace

TEST_CASE("conv2d: stride, asymmetric padding, bias") {
    Probe p;
    // x (2,3,9,7), K=4, R,S = 3,2, stride (2,1), pad top 1 bottom 2 left 0 right 1
    Tensor y = p.g.input({2, 3, 9, 7}, true) | conv(4, {3, 2}, {.stride = {2, 1}, .pad = {1, 2, 0, 1}, .bias = true});
    // P = (9+1+2-3)/2+1 = 5, Q = (7+0+1-2)/1+1 = 7
    CHECK(y.shape() == Shape{2, 4, 5, 7});
    LayerCost L = p.last();
    CHECK(L.c.params == 4 * 3 * 3 * 2 + 4);          // 76
    CHECK(L.c.macs == 2 * 4 * 5 * 7 * 3 * 3 * 2);    // 5040
    CHECK(L.c.fwd_flops == 2 * 5040 + 2 * 4 * 5 * 7);  // 10360: bias adds one per output
    CHECK(L.c.dgrad_flops == 2 * 5040);
    CHECK(L.c.wgrad_flops == 2 * 5040 + 280);
    // X = 378, Y = 280, Wt = 76 elements of 4 bytes
    CHECK(L.c.activation_bytes == 280 * 4);
    CHECK(L.c.fwd_traffic_bytes == (378 + 76 + 280) * 4);
    CHECK(L.c.saved_bytes == 378 * 4);
    CHECK(L.c.bwd_traffic_bytes == (280 + 378 + 76 + 378 + 76) * 4);  // dy, x, w, dx, dw
    CHECK(L.category == Category::conv);
}

TEST_CASE("conv2d: dilation, depthwise and grouped") {
    SUBCASE("depthwise 3x3, dilation 2, pad 2 keeps 10x10") {
        Probe p;
        Tensor y = p.g.input({1, 8, 10, 10}) | conv(8, 3, {.pad = 2, .dilation = 2, .groups = 8});
        CHECK(y.shape() == Shape{1, 8, 10, 10});  // (10+4-2*2-1)/1+1
        LayerCost L = p.last();
        CHECK(L.c.params == 8 * 1 * 3 * 3);
        CHECK(L.c.macs == 8 * 10 * 10 * 9);
        CHECK(L.c.dgrad_flops == 0);  // the network input needs no gradient
        CHECK(L.category == Category::dwconv);
    }
    SUBCASE("grouped 1x1, G=2, is not depthwise") {
        Probe p;
        p.g.input({1, 8, 5, 5}) | conv(4, 1, {.groups = 2});
        LayerCost L = p.last();
        CHECK(L.c.params == 4 * 4);           // K * C/G
        CHECK(L.c.macs == 4 * 5 * 5 * 4);
        CHECK(L.category == Category::conv);
    }
    SUBCASE("stride 2, 7x7, pad 3 at odd size") {
        Probe p;
        Tensor y = p.g.input({1, 3, 225, 225}) | conv(64, 7, {.stride = 2, .pad = 3});
        CHECK(y.shape() == Shape{1, 64, 113, 113});  // (225+6-7)/2+1 = 113
    }
}

TEST_CASE("linear over the last dimension of a rank-3 input") {
    Probe p;
    Tensor y = p.g.input({2, 5, 6}, true) | linear(3);
    CHECK(y.shape() == Shape{2, 5, 3});
    LayerCost L = p.last();  // M = 10 rows, C = 6, K = 3
    CHECK(L.c.params == 3 * 6 + 3);
    CHECK(L.c.macs == 10 * 3 * 6);
    CHECK(L.c.fwd_flops == 360 + 30);
    CHECK(L.c.dgrad_flops == 360);
    CHECK(L.c.wgrad_flops == 360 + 30);
    Probe q;
    q.g.input({4, 7}) | linear(2, {.bias = false});
    CHECK(q.last().c.params == 14);
}

TEST_CASE("matmul with b transposed, as q*k^T") {
    Probe q;
    Tensor x = q.g.input({2, 3, 4, 5}, true), w = q.g.input({2, 3, 6, 5}, true);
    Tensor y = matmul(x, w, true);
    CHECK(y.shape() == Shape{2, 3, 4, 6});
    LayerCost L = q.last();  // B = 6, M = 4, L = 5, J = 6
    CHECK(L.c.macs == 6 * 4 * 6 * 5);      // 720
    CHECK(L.c.fwd_flops == 1440);
    CHECK(L.c.dgrad_flops == 4 * 720);     // da and db
    CHECK(L.c.params == 0);
    Probe r;
    Tensor x2 = r.g.input({2, 4, 5}), w2 = r.g.input({2, 5, 3}, true);
    CHECK(matmul(x2, w2).shape() == Shape{2, 4, 3});
    CHECK(r.last().c.dgrad_flops == 2 * 2 * 4 * 3 * 5);  // only b needs its gradient
}

TEST_CASE("batchnorm and layernorm") {
    SUBCASE("batchnorm (2,3,4,4)") {
        Probe p;
        p.g.input({2, 3, 4, 4}, true) | bn();
        LayerCost L = p.last();  // E = 96, C = 3
        CHECK(L.c.params == 6);
        CHECK(L.c.fwd_flops == 2 * 96);
        CHECK(L.c.dgrad_flops == 5 * 96);
        CHECK(L.c.wgrad_flops == 5 * 96);
        CHECK(L.c.saved_bytes == 96 * 4 + 2 * 3 * 4);  // x and fp32 mean/istd per channel
        LayerCost H = p.last(DType::fp16);
        CHECK(H.c.saved_bytes == 96 * 2 + 2 * 3 * 4);  // statistics stay fp32
    }
    SUBCASE("layernorm over the last dim of (2,5,8)") {
        Probe p;
        p.g.input({2, 5, 8}, true) | ln();
        LayerCost L = p.last();  // E = 80, D = 8, 10 rows
        CHECK(L.c.params == 16);
        CHECK(L.c.fwd_flops == 7 * 80);
        CHECK(L.c.dgrad_flops == 9 * 80);
        CHECK(L.c.wgrad_flops == 5 * 80);
        CHECK(L.c.saved_bytes == 80 * 4 + 2 * 10 * 4);
    }
    SUBCASE("channels-first layernorm normalizes dim 1") {
        Probe p;
        p.g.input({1, 6, 2, 2}) | ln(1);
        CHECK(p.last().c.params == 12);
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
        LayerCost L = p.last();
        CHECK(L.c.fwd_flops == 6 * c.fwd);
        CHECK(L.c.dgrad_flops == 6 * c.dgrad);
        CHECK(L.c.wgrad_flops == 0);
        CHECK(L.c.saved_bytes == 6 * 4);
        CHECK(layer_work(p.g, p.g.nodes().back(), DType::fp32).saves_output == c.keeps_output);
        CHECK(p.g.nodes().back().name == cat(fn_name(c.a.fn), fn_name(c.a.fn) == "relu6" ? "_1" : "1"));
    }
}

TEST_CASE("pooling: windows clipped by padding, ceil_mode") {
    SUBCASE("max 3x3 stride 2 pad 1 on 5x5") {
        Probe p;
        Tensor y = p.g.input({1, 1, 5, 5}, true) | maxpool(3, {.stride = 2, .pad = 1});
        CHECK(y.shape() == Shape{1, 1, 3, 3});
        // rows covered per window: [0,2) [1,4) [3,5) -> 2+3+2 = 7 on each axis
        LayerCost L = p.last();
        CHECK(L.c.fwd_flops == 7 * 7 - 9);      // n-1 compares per window
        CHECK(L.c.dgrad_flops == 9);
        CHECK(L.c.saved_bytes == 25 * 4 + 9 * 8);  // x and int64 argmax
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
        LayerCost L = p.last();
        CHECK(L.c.fwd_flops == 49);          // n-1 adds and a divide per window
        CHECK(L.c.dgrad_flops == 49 + 9);
        CHECK(L.c.saved_bytes == 0);
    }
    SUBCASE("adaptive average pool with windows that overlap") {
        Probe p;
        Tensor y = p.g.input({1, 2, 5, 7}, true) | adaptive_avgpool({3, 2});
        CHECK(y.shape() == Shape{1, 2, 3, 2});
        // rows [0,2) [1,4) [3,5) -> 7; columns [0,4) [3,7) -> 8
        LayerCost L = p.last();
        CHECK(L.c.fwd_flops == 2 * 7 * 8);
        CHECK(L.c.dgrad_flops == 2 * 7 * 8 + 2 * 3 * 2);
    }
}

TEST_CASE("elementwise with broadcasting") {
    SUBCASE("add: the broadcast input's gradient is a sum") {
        Probe p;
        Tensor a = p.g.input({2, 3, 4, 4}, true), b = p.g.input({2, 3, 1, 1}, true);
        CHECK(add(a, b).shape() == Shape{2, 3, 4, 4});
        LayerCost L = p.last();
        CHECK(L.c.fwd_flops == 96);
        CHECK(L.c.dgrad_flops == 96);
        CHECK(L.c.fwd_traffic_bytes == (96 + 6 + 96) * 4);
    }
    SUBCASE("add of equal shapes routes the gradient for free") {
        Probe p;
        Tensor a = p.g.input({2, 3}, true), b = p.g.input({2, 3}, true);
        add(a, b);
        CHECK(p.last().c.dgrad_flops == 0);
    }
    SUBCASE("mul as squeeze-excitation scale") {
        Probe p;
        Tensor a = p.g.input({2, 3, 4, 4}, true), s = p.g.input({2, 3, 1, 1}, true);
        mul(a, s);
        LayerCost L = p.last();
        CHECK(L.c.fwd_flops == 96);
        CHECK(L.c.dgrad_flops == 96 + 2 * 96);  // da = dy*s; ds = sum(dy*a)
        CHECK(L.c.saved_bytes == (96 + 6) * 4);
    }
    SUBCASE("scale and layer scale") {
        Probe p;
        p.g.input({1, 4, 3, 3}, true) | scale(0.125);
        CHECK(p.last().c.fwd_flops == 36);
        CHECK(p.last().c.dgrad_flops == 36);
        Probe q;
        q.g.input({1, 4, 3, 3}, true) | layer_scale(1);
        LayerCost L = q.last();
        CHECK(L.c.params == 4);
        CHECK(L.c.fwd_flops == 36);
        CHECK(L.c.dgrad_flops == 36);
        CHECK(L.c.wgrad_flops == 72);
    }
}

TEST_CASE("softmax") {
    Probe p;
    p.g.input({2, 7}, true) | softmax();
    LayerCost L = p.last();
    CHECK(L.c.fwd_flops == 5 * 14);
    CHECK(L.c.dgrad_flops == 4 * 14);
    CHECK(L.c.saved_bytes == 14 * 4);  // the output
}

TEST_CASE("data movement and views") {
    SUBCASE("concat copies") {
        Probe p;
        Tensor a = p.g.input({1, 2, 3, 3}), b = p.g.input({1, 5, 3, 3});
        CHECK(concat({a, b}).shape() == Shape{1, 7, 3, 3});
        LayerCost L = p.last();
        CHECK(L.c.fwd_flops == 0);
        CHECK(L.c.fwd_traffic_bytes == (18 + 45 + 63) * 4);
        CHECK(L.c.activation_bytes == 63 * 4);
    }
    SUBCASE("channel shuffle and permute copy") {
        Probe p;
        Tensor x = p.g.input({1, 6, 2, 2});
        CHECK((x | channel_shuffle(3)).shape() == Shape{1, 6, 2, 2});
        CHECK(p.last().c.fwd_traffic_bytes == 2 * 24 * 4);
        CHECK((p.g.input({2, 3, 4}) | permute({0, 2, 1})).shape() == Shape{2, 4, 3});
        CHECK(p.last().c.fwd_traffic_bytes == 2 * 24 * 4);
    }
    SUBCASE("views write and move nothing") {
        Probe p;
        Tensor x = p.g.input({2, 3, 4, 5}, true);
        CHECK((x | flatten()).shape() == Shape{2, 60});
        CHECK((x | flatten(2)).shape() == Shape{2, 3, 20});
        CHECK((x | reshape({0, -1, 5})).shape() == Shape{2, 12, 5});
        CHECK((x | slice(1, 1, 2)).shape() == Shape{2, 2, 4, 5});
        CHECK((x | select(1, 0)).shape() == Shape{2, 4, 5});
        CHECK((x | dropout(0.5)).shape() == x.shape());
        CHECK((x | stochastic_depth(0.1)).shape() == x.shape());
        for (const LayerCost& L : analyze(p.g, DType::fp32).layers) {
            CAPTURE(L.name);
            CHECK(L.c.activation_bytes == 0);
            CHECK(L.c.fwd_traffic_bytes == 0);
            CHECK(L.c.bwd_traffic_bytes == 0);
            CHECK(L.c.fwd_flops + L.c.dgrad_flops + L.c.wgrad_flops == 0);
        }
    }
}

TEST_CASE("class token and position embedding") {
    Probe p;
    Tensor x = p.g.input({2, 4, 8}, true) | class_token();
    CHECK(x.shape() == Shape{2, 5, 8});
    LayerCost T = p.last();
    CHECK(T.c.params == 8);
    CHECK(T.c.wgrad_flops == 2 * 8);
    x | pos_embedding();
    LayerCost E = p.last();
    CHECK(E.c.params == 5 * 8);
    CHECK(E.c.fwd_flops == 2 * 5 * 8);
    CHECK(E.c.wgrad_flops == 2 * 5 * 8);
    CHECK(E.c.dgrad_flops == 0);
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
