#pragma once
// A toy vision transformer shared by the executor tests.
#include <cmath>

#include "engine/dsl.h"

namespace ridge::testnets {

// ViT's encoder at toy size, written out with the same ops as netdefs/vit.cpp: patches by a
// strided conv, class token, position embedding, pre-norm attention and MLP blocks, head on the
// class token. x (N,3,16,16), 4x4 patches: 16 tokens + 1, width 16, 2 heads.
inline Graph tiny_vit(int64_t N) {
    Graph g("tiny_vit");
    const int64_t D = 16, heads = 2;
    Tensor x = g.input({N, 3, 16, 16});
    x = x | conv(D, 4, {.stride = 4, .bias = true}) | flatten(2) | permute({0, 2, 1}) |
        named("class_token", class_token()) | named("pos_embedding", pos_embedding()) | dropout(0.1);
    for (int l = 0; l < 2; ++l) {
        Scope s(x, cat("layer", l));
        Tensor qkv = x | named("ln_1", ln()) | named("in_proj", linear(3 * D)) | reshape({0, 0, 3, heads, -1}) |
                     permute({0, 2, 3, 1, 4});
        Tensor q = qkv | select(1, 0) | scale(1.0 / std::sqrt(double(D / heads)));
        Tensor attn = matmul(q, qkv | select(1, 1), true) | softmax() | dropout(0.1);
        Tensor a = matmul(attn, qkv | select(1, 2)) | permute({0, 2, 1, 3}) | reshape({0, 0, -1}) |
                   named("out_proj", linear(D));
        x = add(a, x);
        x = add(x, x | named("ln_2", ln()) | named("fc1", linear(2 * D)) | gelu() | named("fc2", linear(D)));
    }
    x | named("ln", ln()) | select(1, 0) | named("head", linear(10));
    return g;
}

}  // namespace ridge::testnets
