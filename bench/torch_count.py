#!/usr/bin/python3
"""Counts parameters and multiply-accumulates of torchvision's own modules with forward hooks,
the way thop/ptflops do, for ridge's zoo.

Two uses:
  torch_count.py --reference > tests/data/torchvision_reference.csv
      the reference table the zoo test checks ridge against (several batch/resolution pairs);
  torch_count.py --min-res > tests/data/torchvision_min_resolution.csv
      the smallest square input each net accepts, a check on the shape rules at their edges;
  torch_count.py --time
      the time a hook-based counter takes over the zoo at batch 1, for README's comparison.

MACs counted: Conv2d N*K*P*Q*(C/G)*R*S, Linear (out elements)*in_features, and for
MultiheadAttention its input projection, q*k^T, attn*v and output projection (torch calls those
through F.linear / bmm inside the module, so no child hook sees them).
Needs Debian's python3-torchvision; exits 0 with a note on stderr when it is absent.
"""
import argparse
import sys
import time

try:
    import torch
    import torchvision
except ImportError:
    print("torch_count: PyTorch/torchvision not installed (apt-get install python3-torchvision); skipped",
          file=sys.stderr)
    sys.exit(0)

NETS = ["alexnet", "vgg11", "vgg13", "vgg16", "vgg19", "vgg16_bn", "resnet18", "resnet34", "resnet50",
        "resnet101", "resnet152", "wide_resnet50_2", "wide_resnet101_2", "resnext50_32x4d", "squeezenet1_0",
        "squeezenet1_1", "googlenet", "inception_v3", "densenet121", "densenet169", "mobilenet_v2",
        "mobilenet_v3_large", "mobilenet_v3_small", "shufflenet_v2_x1_0", "mnasnet1_0", "efficientnet_b0",
        "efficientnet_b7", "regnet_y_400mf", "regnet_x_1_6gf", "convnext_tiny", "vit_b_16"]
DEFAULT_RES = {"inception_v3": 299, "efficientnet_b7": 600}
FIXED_RES = {"vit_b_16"}  # position embeddings fix ViT's input to 224x224


def build(name):
    kwargs = {"weights": None}
    if name in ("googlenet", "inception_v3"):
        kwargs.update(aux_logits=False, init_weights=False)
    return getattr(torchvision.models, name)(**kwargs).eval()


def count(model, n, h, w):
    macs = 0

    def conv(m, inp, out):
        nonlocal macs
        macs += out.numel() * (m.in_channels // m.groups) * m.kernel_size[0] * m.kernel_size[1]

    def linear(m, inp, out):
        nonlocal macs
        macs += out.numel() * m.in_features

    def attention(m, inp, out):
        # torchvision passes query/key/value as keywords, which torch 1.13 hooks do not see;
        # the output (N,T,D) has the same shape as the query in self-attention.
        nonlocal macs
        y = out[0]
        N, T, D = y.shape if m.batch_first else (y.shape[1], y.shape[0], y.shape[2])
        macs += N * T * D * 3 * D + 2 * N * T * T * D + N * T * D * D

    handles = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            handles.append(m.register_forward_hook(conv))
        elif isinstance(m, torch.nn.Linear):
            handles.append(m.register_forward_hook(linear))
        elif isinstance(m, torch.nn.MultiheadAttention):
            handles.append(m.register_forward_hook(attention))
    with torch.no_grad():
        model(torch.zeros(n, 3, h, w))
    for handle in handles:
        handle.remove()
    params = sum(p.numel() for p in model.parameters())
    return params, macs


def configs(name):
    d = DEFAULT_RES.get(name, 224)
    out = [(1, d, d), (2, d, d)]
    if name not in FIXED_RES:
        out += [(1, 160, 160), (3, 193, 257)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", action="store_true", help="print the reference CSV")
    ap.add_argument("--min-res", action="store_true", help="print the smallest square input of each net")
    ap.add_argument("--time", action="store_true", help="time the counter over the zoo at batch 1")
    ap.add_argument("--nets", default=",".join(NETS), help="comma-separated subset")
    args = ap.parse_args()
    torch.set_num_threads(2)
    nets = args.nets.split(",")
    if args.reference:
        print(f"# torch {torch.__version__}, torchvision {torchvision.__version__}; bench/torch_count.py --reference")
        print("net,batch,height,width,params,macs")
        for name in nets:
            model = build(name)
            for n, h, w in configs(name):
                params, macs = count(model, n, h, w)
                print(f"{name},{n},{h},{w},{params},{macs}", flush=True)
    if args.min_res:
        print(f"# torch {torch.__version__}, torchvision {torchvision.__version__}; bench/torch_count.py --min-res")
        print("net,min_res")
        for name in nets:
            model = build(name)
            if name in FIXED_RES:
                continue  # accepts one size only: there is no minimum to compare
            for side in range(1, DEFAULT_RES.get(name, 224) + 1):
                try:
                    with torch.no_grad():
                        model(torch.zeros(1, 3, side, side))
                    print(f"{name},{side}", flush=True)
                    break
                except RuntimeError:
                    pass
    if args.time:
        start = time.perf_counter()
        for name in nets:
            t0 = time.perf_counter()
            d = DEFAULT_RES.get(name, 224)
            params, macs = count(build(name), 1, d, d)
            print(f"{name:20s} {params:>12d} params {macs:>15d} MACs {1e3 * (time.perf_counter() - t0):8.1f} ms")
        print(f"total over {len(nets)} nets: {time.perf_counter() - start:.2f} s "
              f"(torch {torch.__version__}, {torch.get_num_threads()} threads)")


if __name__ == "__main__":
    main()
