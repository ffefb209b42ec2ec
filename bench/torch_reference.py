#!/usr/bin/python3
"""Checks ridge's reference executor against PyTorch on a whole net, forward and gradients.

    build/bench/ref_dump resnet18 2 64 64 DIR && bench/torch_reference.py DIR

ref_dump writes the graph (layer kinds, fields, tensor ids), the seeded weights, input and labels,
and the reference executor's output, loss and gradients after one training step. This script
rebuilds the graph op by op with torch.nn.functional, in float64 by default (--dtype float32 to
see what a float implementation gives), runs the same step with autograd, and prints for the
output and each learned tensor's gradient the norm-wise relative difference ||ref - torch|| /
||torch|| and the elementwise max |ref - torch| / max(1, |torch|) (HostTensor's max_rel_diff),
worst first.

Why norm-wise decides: a float forward drifts from the exact one by 1e-6..1e-4 through a deep
net with train-mode batchnorm on small maps; a ReLU input that close to 0 may take the other side,
which changes a few gradient elements by O(1) relative (max_rel) and the tensor far less.
kernels/README.md tabulates what the zoo gives.
Semantics as engine/backend/executor.h: batchnorm uses batch statistics, dropout is the identity,
GELU is exact, the loss is the mean softmax cross-entropy of the output read as (N, numel/N).
Exits 1 when a difference exceeds --tol. Needs PyTorch; the project never does.
"""
import argparse
import json
import os
import sys

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError:
    print("torch_reference: PyTorch not installed; skipped", file=sys.stderr)
    sys.exit(0)


def read(path, dtype, shape=None):
    a = np.fromfile(path, dtype=dtype)
    return torch.from_numpy(a if shape is None else a.reshape(shape))


def layer(node, x, p):
    """One ridge layer in torch: x the input tensors, p the parameter tensors in op_params() order."""
    k = node["kind"]
    if k == "conv2d":
        t, b, l, r = node["pad"]
        # ridge allows asymmetric padding; F.pad's order is (left, right, top, bottom)
        return F.conv2d(F.pad(x[0], (l, r, t, b)), p[0], p[1] if node["bias"] else None,
                        stride=node["stride"], dilation=node["dilation"], groups=node["groups"])
    if k == "linear":
        return F.linear(x[0], p[0], p[1] if node["bias"] else None)
    if k == "matmul":
        return torch.matmul(x[0], x[1].transpose(-1, -2) if node["transpose_b"] else x[1])
    if k == "batchnorm":
        return F.batch_norm(x[0], p[2].clone(), p[3].clone(), p[0], p[1], training=True, eps=1e-5)
    if k == "layernorm":
        y = x[0].movedim(node["dim"], -1)
        return F.layer_norm(y, y.shape[-1:], p[0], p[1], eps=1e-5).movedim(-1, node["dim"])
    acts = {"relu": F.relu, "relu6": F.relu6, "sigmoid": torch.sigmoid, "silu": F.silu, "gelu": F.gelu,
            "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid}
    if k in acts:
        return acts[k](x[0])
    if k in ("maxpool", "avgpool"):
        t, b, l, r = node["pad"]
        if t != b or l != r:
            raise ValueError(f"{node['name']}: torch pools take symmetric padding only")
        if k == "maxpool":
            return F.max_pool2d(x[0], node["kernel"], node["stride"], (t, l), ceil_mode=node["ceil_mode"])
        return F.avg_pool2d(x[0], node["kernel"], node["stride"], (t, l), ceil_mode=node["ceil_mode"],
                            count_include_pad=node["count_include_pad"])
    if k == "adaptive_avgpool":
        return F.adaptive_avg_pool2d(x[0], node["out"])
    if k == "add":
        return x[0] + x[1]
    if k == "mul":
        return x[0] * x[1]
    if k == "scale":
        return x[0] * node["s"]
    if k == "layer_scale":
        shape = [1] * x[0].dim()
        shape[node["dim"]] = -1
        return x[0] * p[0].reshape(shape)
    if k == "softmax":
        return F.softmax(x[0], dim=node["dim"])
    if k == "concat":
        return torch.cat(x, dim=node["dim"])
    if k == "channel_shuffle":
        n, c, h, w = x[0].shape
        g = node["groups"]
        return x[0].reshape(n, g, c // g, h, w).transpose(1, 2).reshape(n, c, h, w)
    if k == "flatten":
        return torch.flatten(x[0], node["start"], node["end"])
    if k == "reshape":
        return x[0].reshape(node["shape"])
    if k == "permute":
        return x[0].permute(node["order"])
    if k == "slice":
        return x[0].narrow(node["dim"], node["start"], node["length"])
    if k == "select":
        return x[0].select(node["dim"], node["index"])
    if k in ("dropout", "stochastic_depth"):
        return x[0]
    if k == "class_token":
        n, _, d = x[0].shape
        return torch.cat([p[0].reshape(1, 1, d).expand(n, 1, d), x[0]], dim=1)
    if k == "pos_embedding":
        return x[0] + p[0]
    raise ValueError(f"{node['name']}: no torch equivalent for {k}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--tol", type=float, default=1e-2, help="largest norm-wise relative difference accepted")
    ap.add_argument("--show", type=int, default=8, help="tensors listed, worst first")
    a = ap.parse_args()
    dt = getattr(torch, a.dtype)
    g = json.load(open(os.path.join(a.dir, "graph.json")))

    flat = read(os.path.join(a.dir, "weights.bin"), np.float32)
    ref_grads = read(os.path.join(a.dir, "grads.bin"), np.float32)
    params, learned, at = [], [], 0
    for node in g["nodes"]:
        ps = []
        for spec in node["params"]:
            n = int(np.prod(spec["shape"]))
            t = flat[at:at + n].reshape(spec["shape"]).to(dt)
            at += n
            if spec["learned"]:
                t.requires_grad_(True)
                learned.append((f"{node['name']}.{spec['name']}", t))
            ps.append(t)
        params.append(ps)

    x = read(os.path.join(a.dir, "input.bin"), np.float32, g["input_shape"]).to(dt)
    labels = read(os.path.join(a.dir, "labels.bin"), np.int32).long()
    tensors = {0: x}
    for node, ps in zip(g["nodes"], params):
        y = layer(node, [tensors[i] for i in node["inputs"]], ps)
        if list(y.shape) != node["shape"]:
            raise ValueError(f"{node['name']}: torch gives {list(y.shape)}, ridge {node['shape']}")
        tensors[node["output"]] = y
    out = tensors[g["output"]]
    loss = F.cross_entropy(out.reshape(out.shape[0], -1), labels)
    loss.backward()

    def max_rel(mine, theirs):
        # max |a-b| / max(1, |b|), HostTensor's max_rel_diff: one element is enough to raise it
        return float(((mine - theirs).abs() / theirs.abs().clamp(min=1)).max())

    def norm_rel(mine, theirs):
        # ||a-b|| / ||b||, floored at 1e-3 for gradients that are 0 in exact arithmetic (a beta
        # that a following batchnorm cancels) and float noise in practice
        return float((mine - theirs).norm() / max(float(theirs.norm()), 1e-3))

    ref_out = read(os.path.join(a.dir, "output.bin"), np.float32, list(out.shape)).double()
    theirs_out = out.detach().double()
    rows = [("output", norm_rel(ref_out, theirs_out), max_rel(ref_out, theirs_out)),
            # ref_dump writes a loss that is not finite as null
            ("loss", abs((float("nan") if g["loss"] is None else g["loss"]) - float(loss)) / abs(float(loss)), 0.0)]
    at, grads = 0, []
    for name, t in learned:
        n = t.numel()
        mine, theirs = ref_grads[at:at + n].reshape(t.shape).double(), t.grad.double()
        grads.append((name, norm_rel(mine, theirs), max_rel(mine, theirs), float(theirs.abs().max())))
        at += n
    print(f"{g['model']}: {len(g['nodes'])} layers, torch {torch.__version__} in {a.dtype}")
    print(f"  {'':48s} {'norm-wise':>9s} {'max_rel':>9s}")
    for name, d, m in rows:
        print(f"  {name:48s} {d:9.2e} {m:9.2e}")
    grads.sort(key=lambda r: -r[1])
    print(f"  gradients of {len(grads)} learned tensors, worst {min(a.show, len(grads))}:")
    for name, d, m, big in grads[:a.show]:
        print(f"  {name:48s} {d:9.2e} {m:9.2e}   max |g| {big:.3g}")
    worst = max([d for _, d, _ in rows] + [d for _, d, _, _ in grads])
    print(f"  worst norm-wise {worst:.2e} (tolerance {a.tol:g})")
    sys.exit(0 if worst <= a.tol else 1)


if __name__ == "__main__":
    main()
