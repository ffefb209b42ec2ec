// Vision Transformer (Dosovitskiy et al. 2020, "An Image is Worth 16x16 Words") as torchvision
// defines it: non-overlapping patches projected by a strided conv, a learned class token and
// position embedding, pre-norm encoder layers, and a linear head on the class token.
#include <cmath>

#include "netdefs/nets.h"

namespace ridge::nets {

namespace {

struct ViTSpec {
    int64_t patch;   // patch side, also the stem conv's kernel and stride
    int layers;      // encoder layers
    int64_t heads;   // attention heads
    int64_t width;   // D, the token width
    int64_t mlp_dim; // hidden width of each layer's MLP
};

// torchvision's nn.MultiheadAttention: one packed in-projection for q, k and v, then per-head
// softmax(q k^T / sqrt(head_dim)) v, merged and projected. Dropout on the attention weights is 0
// by default but is kept so the layer list matches.
// x (N,T,D)  qkv (N,3,heads,T,D/heads)  attn (N,heads,T,T)  y (N,T,D); the batch stays first.
Tensor self_attention(Tensor x, int64_t heads) {
    Scope s(x, "self_attention");
    int64_t D = x.dim(-1);
    Tensor qkv = x | named("in_proj", linear(3 * D)) | reshape({0, 0, 3, heads, -1}) | permute({0, 2, 3, 1, 4});
    Tensor q = qkv | select(1, 0) | scale(1.0 / std::sqrt(double(D / heads)));
    Tensor k = qkv | select(1, 1);
    Tensor v = qkv | select(1, 2);
    Tensor attn = matmul(q, k, /*transpose_b=*/true) | softmax() | dropout(0.0);
    return matmul(attn, v) | permute({0, 2, 1, 3}) | reshape({0, 0, -1}) | named("out_proj", linear(D));
}

Tensor mlp(Tensor x, int64_t hidden) {
    Scope s(x, "mlp");
    return x | linear(hidden) | gelu() | dropout(0.0) | linear(x.dim(-1)) | dropout(0.0);
}

// Pre-norm: each sublayer sees a normalized copy; the residual stream itself is never normalized.
Tensor encoder_block(Tensor x, const ViTSpec& spec) {
    Tensor attended = self_attention(x | named("ln_1", ln()), spec.heads) | dropout(0.0);
    Tensor h = add(attended, x);
    return add(h, mlp(h | named("ln_2", ln()), spec.mlp_dim));
}

Tensor vit(Tensor x, const ViTSpec& spec, int64_t classes) {
    // torchvision accepts only the 224x224 it was built for; ridge accepts any whole number of
    // patches (the position embedding then has one entry per patch, as when fine-tuning at 384),
    // but never a partial patch, which the strided projection would silently drop.
    if (x.dim(2) % spec.patch || x.dim(3) % spec.patch)
        throw BuildError(cat(x.graph().model(), ": input ", x.dim(2), "x", x.dim(3),
                             " is not a whole number of ", spec.patch, "x", spec.patch, " patches"));
    // (N,3,H,W) -> (N,D,H/p,W/p) -> (N,T,D): one token per patch.
    x = x | named("conv_proj", conv(spec.width, spec.patch, {.stride = spec.patch, .bias = true}))
          | flatten(2) | permute({0, 2, 1});
    x = x | named("class_token", class_token());
    {
        Scope s(x, "encoder");
        x = x | named("pos_embedding", pos_embedding()) | dropout(0.0);
        for (int i = 0; i < spec.layers; ++i) {
            Scope layer(x, cat("layers.encoder_layer_", i));
            x = encoder_block(x, spec);
        }
        x = x | named("ln", ln());
    }
    return x | select(1, 0) | named("heads.head", linear(classes));
}

}  // namespace

Tensor vit_b_16(Tensor x, int64_t classes) {
    return vit(x, {.patch = 16, .layers = 12, .heads = 12, .width = 768, .mlp_dim = 3072}, classes);
}

}  // namespace ridge::nets
