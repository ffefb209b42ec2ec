#!/usr/bin/env python3
"""PyTorch CPU peer of ridge's executors: median inference latency (eval mode, torch.no_grad) and
median training step (forward, cross-entropy on random labels, backward, SGD step) of torchvision
nets, with a fixed thread count.

With --ridge RIDGE (build/cli/ridge) each configuration is also run through `ridge bench` (the
oneDNN executor, fused), alternating with PyTorch round by round, so both see the same machine load;
the ratio ridge/PyTorch of the medians is printed. A training step is forward, cross-entropy and
backward on both sides; the SGD update is timed apart on both (update columns). Prints CSV with a header on stdout, the environment on
stderr. Exits 0 with one line "skipped: PyTorch not available" when torch is missing.

  python3 bench/torch_bench.py --nets resnet18,mobilenet_v2 --batches 1,16 --mode infer \\
      --ridge build/cli/ridge
"""
import argparse
import statistics
import sys
import time

import torch_common


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nets", default="resnet18,resnet50,mobilenet_v2")
    p.add_argument("--batches", default="1,16")
    p.add_argument("--mode", choices=["infer", "train"], default="infer")
    p.add_argument("--threads", type=int, default=2)
    torch_common.add_common_args(p, warmup=3, repeats=10)
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

    update = opt.step if mode == "train" else (lambda: None)
    for _ in range(warmup):
        step()
        update()
    ms, update_ms = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        update()
        ms.append((t1 - t0) * 1e3)
        update_ms.append((time.perf_counter() - t1) * 1e3)
    return ms, update_ms


def ridge_median(args, net, batch):
    return torch_common.ridge_bench(args.ridge, [
        net, "--batch", str(batch), "--res", str(args.res), "--mode", args.mode, "--threads", str(args.threads),
        "--warmup", str(args.warmup), "--repeat", str(args.repeats)])


def main():
    args = parse()
    torch_common.threads_for_blas(args.threads)
    imported = torch_common.import_torch()
    if not imported:
        return 0
    torch, torchvision = imported
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"# torch {torch.__version__}, torchvision {torchvision.__version__}, threads {torch.get_num_threads()}, "
          f"mkldnn {torch.backends.mkldnn.is_available()}, BLAS {torch_common.torch_blas()}", file=sys.stderr)
    header = "net,batch,res,mode,threads,torch_median_ms,torch_min_ms,torch_max_ms,torch_update_ms"
    if args.ridge:
        header += ",ridge_median_ms,ridge_update_ms,ratio"
    print(header)
    for net in args.nets.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            model = getattr(torchvision.models, net)(weights=None)
            x = torch.rand(batch, 3, args.res, args.res) * 2 - 1
            labels = torch.randint(0, 1000, (batch,))
            rounds = torch_common.alternate(
                args.rounds, lambda: torch_times(torch, model, x, labels, args.mode, args.warmup, args.repeats),
                (lambda: ridge_median(args, net, batch)) if args.ridge else None)
            med = rounds.median()
            spread = (max(rounds.torch_all) - min(rounds.torch_all)) / med
            if spread > 0.5:
                print(f"# warning: {net} batch {batch}: PyTorch times spread {spread:.0%} of the median", file=sys.stderr)
            line = (f"{net},{batch},{args.res},{args.mode},{args.threads},{med:.2f},{min(rounds.torch_all):.2f},"
                    f"{max(rounds.torch_all):.2f},{statistics.median(rounds.torch_update):.2f}")
            if args.ridge:
                r = statistics.median(rounds.ridge)
                line += f",{r:.2f},{statistics.median(rounds.ridge_update):.2f},{r / med:.3f}"
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
