#!/usr/bin/env python3
"""PyTorch eager on the GPU beside `ridge bench --device cuda`, alternating round by round so both
see the same GPU state. For each net and precision (fp32: true fp32, TF32 disabled on both sides;
bf16: torch.autocast on PyTorch's side, --precision bf16 on ridge's):

  infer batch 1    latency        target: ridge <= 0.6x PyTorch (ridge replays a CUDA graph)
  infer batch 256  throughput     target: ridge >= 1.1x PyTorch
  train batch 64   step throughput (forward, cross-entropy, backward; SGD timed apart)
                                  target: ridge >= 1.1x PyTorch

PyTorch is timed with CUDA events around each step after warm-up; ridge reports the median of its
own event-timed steps (JSON median_ms). Prints CSV with a header on stdout (one row per
configuration, with the ratio and whether the target is met), the environment on stderr. Exits 0
with one line "skipped: ..." when torch or a CUDA device is missing.

  python3 bench/torch_bench_cuda.py --ridge build/cli/ridge --out results/torch_cuda.csv
"""
import argparse
import statistics
import sys

import torch_common

CONFIGS = [("infer", 1), ("infer", 256), ("train", 64)]


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nets", default="resnet50,mobilenet_v2,vgg16")
    p.add_argument("--precisions", default="fp32,bf16")
    torch_common.add_common_args(p, warmup=5, repeats=20)
    p.add_argument("--out", help="also write the CSV here")
    return p.parse_args()


def torch_times(torch, model, x, labels, mode, precision, warmup, repeats):
    """Median-ready list of step times in ms, and the SGD update times."""
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16")
    if mode == "infer":
        model.eval()

        def step():
            with torch.no_grad(), autocast:
                model(x)
        update = None
    else:
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-4)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=False)
            with autocast:
                loss = loss_fn(model(x), labels)
            loss.backward()
        update = opt.step
    for _ in range(warmup):
        step()
        if update:
            update()
    torch.cuda.synchronize()
    ms, update_ms = [], []
    for _ in range(repeats):
        e0, e1, e2 = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        e0.record()
        step()
        e1.record()
        if update:
            update()
        e2.record()
        torch.cuda.synchronize()
        ms.append(e0.elapsed_time(e1))
        update_ms.append(e1.elapsed_time(e2))
    return ms, update_ms


def ridge_run(args, net, mode, batch, precision):
    bench = [net, "--device", "cuda", "--precision", precision, "--batch", str(batch), "--res", str(args.res),
             "--mode", mode, "--warmup", str(args.warmup), "--repeat", str(args.repeats)]
    if mode == "infer" and batch == 1:
        bench.append("--cuda-graph")
    return torch_common.ridge_bench(args.ridge, bench)


def target(mode, batch, ratio):
    """ratio is ridge / PyTorch median time; returns the goal as text and whether it is met."""
    if mode == "infer" and batch == 1:
        return "latency<=0.6x", ratio <= 0.6
    return "throughput>=1.1x", ratio <= 1 / 1.1


def main():
    args = parse()
    imported = torch_common.import_torch()
    if not imported:
        return 0
    torch, torchvision = imported
    if not torch.cuda.is_available():
        print("skipped: no CUDA device for PyTorch")
        return 0
    torch.backends.cudnn.benchmark = True  # PyTorch's own algorithm search, as ridge's cudnnFind
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    print(f"# torch {torch.__version__}, torchvision {torchvision.__version__}, CUDA {torch.version.cuda}, "
          f"cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name(0)}", file=sys.stderr)
    header = "net,precision,mode,batch,res,torch_median_ms,torch_min_ms,torch_update_ms"
    if args.ridge:
        header += ",ridge_median_ms,ridge_update_ms,ratio,target,met"
    rows = [header]
    print(header, flush=True)
    for net in args.nets.split(","):
        for precision in args.precisions.split(","):
            for mode, batch in CONFIGS:
                model = getattr(torchvision.models, net)(weights=None).cuda()
                x = torch.rand(batch, 3, args.res, args.res, device="cuda") * 2 - 1
                labels = torch.randint(0, 1000, (batch,), device="cuda")
                rounds = torch_common.alternate(
                    args.rounds,
                    lambda: torch_times(torch, model, x, labels, mode, precision, args.warmup, args.repeats),
                    (lambda: ridge_run(args, net, mode, batch, precision)) if args.ridge else None)
                med = rounds.median()
                line = (f"{net},{precision},{mode},{batch},{args.res},{med:.3f},{min(rounds.torch_all):.3f},"
                        f"{statistics.median(rounds.torch_update):.3f}")
                if args.ridge:
                    r = statistics.median(rounds.ridge)
                    goal, met = target(mode, batch, r / med)
                    line += f",{r:.3f},{statistics.median(rounds.ridge_update):.3f},{r / med:.3f},{goal},{int(met)}"
                print(line, flush=True)
                rows.append(line)
                del model, x, labels
                torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
