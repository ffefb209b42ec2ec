// A malformed network fails while it is built, with one message naming the layer, its input
// shape(s) and the rule broken.
#include <doctest/doctest.h>

#include "engine/dsl.h"

using namespace ridge;

namespace {
template <class F>
std::string build_error(F&& build) {
    try {
        Graph g{"bad"};
        build(g);
    } catch (const BuildError& e) {
        return e.what();
    }
    return "(built without error)";
}
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("add of tensors whose channels differ names the layer, both inputs and the rule") {
    std::string msg = build_error([](Graph& g) {
        Tensor x = g.input({1, 4, 8, 8});
        Scope s(x, "layer1.0");
        Tensor y = x | conv(8, 1);
        add(y, x);
    });
    CHECK(msg == "bad: layer layer1.0.add1 (add): inputs (1,8,8,8), (1,4,8,8): shapes (1,8,8,8) and (1,4,8,8) "
                 "do not match in dimension 1 (8 vs 4)");
}

TEST_CASE("concat of tensors whose spatial sizes differ") {
    std::string msg = build_error([](Graph& g) {
        Tensor x = g.input({1, 4, 8, 8});
        concat({x, x | conv(4, 3, {.stride = 2, .pad = 1})});
    });
    CHECK(has(msg, "layer concat1 (concat): inputs (1,4,8,8), (1,4,4,4)"));
    CHECK(has(msg, "outside the concat dimension 1"));
}

TEST_CASE("linear and conv whose weights expect other channels") {
    std::string lin = build_error([](Graph& g) { g.input({1, 512}) | named("fc", linear(1000, {.C = 2048})); });
    CHECK(lin == "bad: layer fc (linear): input (1,512): input has 512 features, weights expect 2048");
    std::string cv = build_error([](Graph& g) {
        Tensor x = g.input({1, 128, 28, 28});
        Scope s(x, "layer3.0");
        x | conv(64, 3, {.pad = 1, .C = 64});
    });
    CHECK(cv == "bad: layer layer3.0.conv1 (conv2d): input (1,128,28,28): input has 128 channels, weights expect 64");
}

TEST_CASE("kernel larger than the padded input") {
    std::string msg = build_error([](Graph& g) { g.input({1, 3, 4, 4}) | conv(8, 7, {.pad = 1}); });
    CHECK(has(msg, "layer conv1 (conv2d): input (1,3,4,4): kernel 7x7 is larger than the padded input 6x6"));
    std::string dil = build_error([](Graph& g) { g.input({1, 3, 6, 6}) | conv(8, 3, {.dilation = 3}); });
    CHECK(has(dil, "kernel 7x7 is larger than the padded input 6x6"));  // dilated extent 3*(3-1)+1
    std::string pool = build_error([](Graph& g) { g.input({1, 3, 2, 2}) | maxpool(3, {.stride = 2}); });
    CHECK(has(pool, "layer maxpool1 (maxpool): input (1,3,2,2): output size 0x0 is not positive: kernel 3x3 "
                    "does not fit the padded input"));
}

TEST_CASE("non-positive output size") {
    std::string msg = build_error([](Graph& g) { g.input({1, 3, 4, 4}) | adaptive_avgpool({0, 1}); });
    CHECK(has(msg, "layer adaptive_avgpool1 (adaptive_avgpool): input (1,3,4,4): output size must be positive"));
    std::string in = build_error([](Graph& g) { g.input({1, 3, 0, 4}); });
    CHECK(has(in, "input shape (1,3,0,4) has a non-positive size"));
}

TEST_CASE("groups that do not divide the channels") {
    std::string msg = build_error([](Graph& g) { g.input({1, 6, 8, 8}) | conv(8, 3, {.groups = 4}); });
    CHECK(has(msg, "layer conv1 (conv2d): input (1,6,8,8): groups 4 do not divide the 6 input channels"));
    std::string out = build_error([](Graph& g) { g.input({1, 8, 8, 8}) | conv(6, 3, {.groups = 4}); });
    CHECK(has(out, "groups 4 do not divide the 6 output channels"));
    std::string shuffle = build_error([](Graph& g) { g.input({1, 6, 2, 2}) | channel_shuffle(4); });
    CHECK(has(shuffle, "groups 4 do not divide the 6 channels"));
}

TEST_CASE("reshape whose element count differs") {
    std::string msg = build_error([](Graph& g) { g.input({2, 3, 4}) | reshape({2, 5, 2}); });
    CHECK(msg == "bad: layer reshape1 (reshape): input (2,3,4): element count mismatch: (2,3,4) has 24, (2,5,2) has 20");
    std::string infer = build_error([](Graph& g) { g.input({2, 3, 4}) | reshape({5, -1}); });
    CHECK(has(infer, "cannot reshape 24 elements into (5,-1)"));
}

TEST_CASE("other rules: matmul inner dims, permute, slice, pooling padding, duplicate names") {
    CHECK(has(build_error([](Graph& g) { matmul(g.input({2, 4, 5}), g.input({2, 6, 3})); }),
              "inner dimensions differ: a has 5 columns, b has 6 rows"));
    CHECK(has(build_error([](Graph& g) { g.input({2, 3, 4}) | permute({0, 0, 1}); }), "permute repeats dimension 0"));
    CHECK(has(build_error([](Graph& g) { g.input({1, 4, 2, 2}) | slice(1, 3, 2); }),
              "slice [3, 5) is outside dimension 1 of size 4"));
    CHECK(has(build_error([](Graph& g) { g.input({1, 4, 8, 8}) | maxpool(3, {.pad = 2}); }),
              "padding must be at most half the kernel"));
    CHECK(has(build_error([](Graph& g) {
                  Tensor x = g.input({1, 4});
                  x | named("fc", linear(2));
                  x | named("fc", linear(2));
              }),
              "layer fc (linear): input (1,4): a layer of this name already exists"));
    CHECK(has(build_error([](Graph& g) { g.input({1, 4, 8}) | conv(4, 1); }), "conv2d needs a 4-d input (N,C,H,W)"));
}
