#!/usr/bin/env python3
"""One PyTorch eager training step at a time, forward and backward timed apart.

For the nets whose eager steps take minutes (vit_b_16 and convnext_tiny with Debian's PyTorch 1.13,
where cpu_peers.py's rounds would take an hour): builds torchvision.models.NET() in train mode,
then runs --steps steps of forward, cross-entropy on random labels and backward (no optimizer,
as in cpu_peers.py), printing each step's times as it finishes. A bench, not a test.

    /usr/bin/python3 bench/eager_train_step.py vit_b_16 --batch 8 --steps 2
"""
import argparse
import sys
import time

import torch_common


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("net", help="a torchvision.models constructor name, e.g. vit_b_16")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--res", type=int, default=224, help="image side (efficientnet_b7: 600)")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--allow-reference-blas", action="store_true",
                   help="run even where torch's matrix products would call the reference BLAS")
    a = p.parse_args()
    if a.batch < 1 or a.res < 1 or a.steps < 1 or a.threads < 1:
        p.error("--batch, --res, --steps and --threads must be positive")
    torch_common.threads_for_blas(a.threads)  # before torch is imported
    imported = torch_common.import_torch()
    if imported is None:
        return 0
    torch, torchvision = imported
    if not hasattr(torchvision.models, a.net):
        p.error(f"unknown net {a.net!r}")
    blas = torch_common.torch_blas()
    if blas == torch_common.REFERENCE_BLAS and not a.allow_reference_blas:
        sys.exit("eager_train_step.py: torch's matrix products would run the reference BLAS (libblas3), not a "
                 "peer anyone deploys: apt-get install libopenblas0-pthread (or pass --allow-reference-blas)")
    print(f"# torch {torch.__version__}, BLAS {blas}, {a.threads} threads", flush=True)
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    model = getattr(torchvision.models, a.net)()
    model.train()
    x = torch.randn(a.batch, 3, a.res, a.res)
    labels = torch.randint(0, 1000, (a.batch,))
    loss_fn = torch.nn.CrossEntropyLoss()
    for step in range(a.steps):
        t0 = time.perf_counter()
        loss = loss_fn(model(x), labels)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        model.zero_grad(set_to_none=True)
        print(f"{a.net} batch {a.batch} step {step}: forward {t1 - t0:.2f} s, backward {t2 - t1:.2f} s, "
              f"step {t2 - t0:.2f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
