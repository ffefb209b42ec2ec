#!/usr/bin/env python3
"""PyTorch CPU peer of ridge's executors: median inference latency (eval mode, torch.no_grad) and
median training step (forward, cross-entropy on random labels, backward, SGD step) of torchvision
nets, with a fixed thread count.

With --ridge PROBE (build/bench/onednn_probe) each configuration is also run through ridge's oneDNN
executor, alternating with PyTorch round by round, so both see the same machine load; the ratio
ridge/PyTorch of the medians is printed. Prints CSV with a header on stdout, the environment on
stderr. Exits 0 with one line "skipped: PyTorch not available" when torch is missing.

  python3 bench/torch_bench.py --nets resnet18,mobilenet_v2 --batches 1,16 --mode infer \\
      --ridge build/bench/onednn_probe
"""
import argparse
import statistics
import subprocess
import sys
import time


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nets", default="resnet18,resnet50,mobilenet_v2")
    p.add_argument("--batches", default="1,16")
    p.add_argument("--res", type=int, default=224)
    p.add_argument("--mode", choices=["infer", "train"], default="infer")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=10, help="timed runs per round")
    p.add_argument("--rounds", type=int, default=3, help="alternations of PyTorch and ridge")
    p.add_argument("--ridge", metavar="PROBE", help="path of onednn_probe to run side by side")
    p.add_argument("--fusion", choices=["fused", "unfused"], default="fused", help="ridge's mode")
    return p.parse_args()


def torch_times(torch, model, x, labels, mode, warmup, repeats):
    if mode == "infer":
        model.eval()

        def step():
            with torch.no_grad():
                model(x)
    else:
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(model(x), labels).backward()
            opt.step()

    for _ in range(warmup):
        step()
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        ms.append((time.perf_counter() - t0) * 1e3)
    return ms


def ridge_median(args, net, batch):
    cmd = [args.ridge, net, str(batch), str(args.res), args.mode, args.fusion, str(args.repeats), str(args.threads)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().split(",")
    return float(out[6])


def main():
    args = parse()
    try:
        import torch
        import torchvision
    except ImportError:
        print("skipped: PyTorch not available")
        return 0
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"# torch {torch.__version__}, torchvision {torchvision.__version__}, threads {torch.get_num_threads()}, "
          f"mkldnn {torch.backends.mkldnn.is_available()}", file=sys.stderr)
    header = "net,batch,res,mode,threads,torch_median_ms,torch_min_ms,torch_max_ms"
    if args.ridge:
        header += ",ridge_median_ms,ratio"
    print(header)
    for net in args.nets.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            model = getattr(torchvision.models, net)(weights=None)
            x = torch.rand(batch, 3, args.res, args.res) * 2 - 1
            labels = torch.randint(0, 1000, (batch,))
            torch_ms, ridge_ms, round_torch = [], [], []
            for _ in range(args.rounds):
                t = torch_times(torch, model, x, labels, args.mode, args.warmup, args.repeats)
                torch_ms += t
                round_torch.append(statistics.median(t))
                if args.ridge:
                    ridge_ms.append(ridge_median(args, net, batch))
            med = statistics.median(round_torch)
            spread = (max(torch_ms) - min(torch_ms)) / med
            if spread > 0.5:
                print(f"# warning: {net} batch {batch}: PyTorch times spread {spread:.0%} of the median", file=sys.stderr)
            line = f"{net},{batch},{args.res},{args.mode},{args.threads},{med:.2f},{min(torch_ms):.2f},{max(torch_ms):.2f}"
            if args.ridge:
                r = statistics.median(ridge_ms)
                line += f",{r:.2f},{r / med:.3f}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
