#!/usr/bin/env python3
"""PyTorch peer of `ridge train`: the same fixed-iteration training runs through torchvision's
ImageFolder and a DataLoader with the same worker count, the same transforms (RandomResizedCrop,
horizontal flip, ImageNet normalization) and the same optimizer (SGD with momentum and weight
decay), alternated round by round with `ridge train` so both see the same machine load; prints
images/s per round and the ratio ridge / PyTorch of the medians. Run with Debian's interpreter,
/usr/bin/python3, which has python3-torch, python3-torchvision and python3-pil.

  /usr/bin/python3 bench/torch_train.py --ridge build/cli/ridge --nets resnet18,mobilenet_v2 \\
      --data /tmp/imagefolder --batch 32 --iters 20 --warmup-iters 3 --workers 2 --rounds 3
  /usr/bin/python3 bench/torch_train.py --ridge build/cli/ridge --synthetic ...

Helpers that write data:
  --make-data DIR          an ImageFolder of generated photograph-like JPEGs (see make_data)
  --sgd-reference          prints tests/data/sgd_torch.txt: three SGD steps of a small net, float64
  --decode-reference DIR   tests/data/images/: small JPEG and PNG files and, beside each, the RGB
                           pixels torchvision's ImageFolder loader gets from it (PIL's
                           Image.open(f).convert("RGB")) as a binary PPM
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import torch_common


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ridge", metavar="RIDGE", help="path of the ridge CLI to run side by side")
    p.add_argument("--nets", default="resnet18,mobilenet_v2")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--data", metavar="DIR", help="ImageFolder root with train/<class>/*.jpg")
    src.add_argument("--synthetic", action="store_true", help="random images and labels in memory")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--res", type=int, default=224)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup-iters", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=1e-4)
    p.add_argument("--rounds", type=int, default=3, help="alternations of PyTorch and ridge")
    p.add_argument("--make-data", metavar="DIR", help="write a generated ImageFolder to DIR and exit")
    p.add_argument("--classes", type=int, default=10, help="--make-data: class folders")
    p.add_argument("--train-per-class", type=int, default=100)
    p.add_argument("--val-per-class", type=int, default=20)
    p.add_argument("--allow-reference-blas", action="store_true",
                   help="time PyTorch even where its matrix products would call the reference BLAS")
    p.add_argument("--sgd-reference", action="store_true", help="print the SGD reference data and exit")
    p.add_argument("--decode-reference", metavar="DIR", help="write the decoding test images to DIR and exit")
    return p.parse_args()


def make_data(root, classes, train_per_class, val_per_class, seed=0):
    """Photograph-like JPEGs with ImageNet's typical sizes (sides 300 to 500 pixels, aspect 3:4 to
    4:3 and a few outside it) and quality (90, 4:2:0): a smooth two-color gradient whose hues lean
    towards the class's, a dozen filled ellipses and rectangles, a slight blur and then Gaussian
    noise per channel (sensor noise, texture), so the encoder sees edges, smooth regions and fine
    detail as in a photograph; the files come out at about ImageNet's bytes per pixel."""
    from PIL import Image, ImageDraw, ImageFilter
    rng = random.Random(seed)
    bases = [(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(classes)]
    for split, n in (("train", train_per_class), ("val", val_per_class)):
        for c in range(classes):
            d = os.path.join(root, split, "class%03d" % c)
            os.makedirs(d, exist_ok=True)
            base = bases[c]  # the class's hue, the same in train/ and val/
            for i in range(n):
                w, h = rng.randint(300, 500), rng.randint(300, 500)
                if rng.random() < 0.1:
                    w = int(h * rng.uniform(1.5, 2.0))
                jitter = lambda: tuple(min(255, max(0, v + rng.randint(-60, 60))) for v in base)
                a, b = jitter(), jitter()
                grad = Image.linear_gradient("L").resize((w, h)).rotate(rng.uniform(0, 360), expand=False)
                im = Image.composite(Image.new("RGB", (w, h), a), Image.new("RGB", (w, h), b), grad)
                draw = ImageDraw.Draw(im)
                for _ in range(12):
                    x0, y0 = rng.randrange(w), rng.randrange(h)
                    x1, y1 = x0 + rng.randint(10, w // 2), y0 + rng.randint(10, h // 2)
                    fill = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
                    (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=fill)
                im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 1.2)))
                noise = Image.merge("RGB", [Image.effect_noise((w, h), rng.uniform(20, 40)) for _ in range(3)])
                im = Image.blend(im, noise, 0.4)
                im.save(os.path.join(d, "%05d.jpg" % i), quality=90, subsampling=2)


def sgd_reference():
    """Three torch.optim.SGD steps on conv(2, 3x3, pad 1) -> batchnorm -> ReLU -> flatten ->
    linear(3) over a (4, 3, 4, 4) input, in float64, for two settings (momentum 0.9 with weight
    decay 0.01; momentum 0 with weight decay 0.05), from weights and input given by formulas that
    tests/test_sgd.cpp repeats: the learned tensors after the third step."""
    import torch
    torch.set_default_dtype(torch.float64)

    def tensor(shape, salt):
        n = 1
        for s in shape:
            n *= s
        return torch.tensor([((i * 37 + salt * 11) % 23 - 11) / 20.0 for i in range(n)]).reshape(shape)

    print("# bench/torch_train.py --sgd-reference (PyTorch %s, float64): momentum weight_decay tensor values..."
          % torch.__version__)
    for m, wd in ((0.9, 0.01), (0.0, 0.05)):
        conv = torch.nn.Conv2d(3, 2, 3, padding=1, bias=False)
        bn = torch.nn.BatchNorm2d(2)
        fc = torch.nn.Linear(32, 3)
        with torch.no_grad():
            conv.weight.copy_(tensor((2, 3, 3, 3), 1))
            bn.weight.copy_(1 + tensor((2,), 2))
            bn.bias.copy_(tensor((2,), 3))
            fc.weight.copy_(tensor((3, 32), 4))
            fc.bias.copy_(tensor((3,), 5))
        net = torch.nn.Sequential(conv, bn, torch.nn.ReLU(), torch.nn.Flatten(), fc)
        x = torch.tensor([((i * 13 + 5) % 17 - 8) / 8.0 for i in range(4 * 3 * 4 * 4)]).reshape(4, 3, 4, 4)
        y = torch.tensor([0, 2, 1, 2])
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=m, weight_decay=wd)
        for _ in range(3):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
        for name, p in (("conv.weight", conv.weight), ("bn.weight", bn.weight), ("bn.bias", bn.bias),
                        ("fc.weight", fc.weight), ("fc.bias", fc.bias)):
            print(m, wd, name, " ".join("%.12g" % v for v in p.detach().flatten().tolist()))


def decode_reference(out):
    """Odd sizes (partial MCUs at the right and bottom edges), 4:2:0 and 4:4:4 color, grayscale,
    progressive, CMYK (PIL stores it inverted, Adobe's way, as Photoshop does), and PNG in RGB,
    RGBA, grayscale and palette modes; each decoded back by PIL into the expected .ppm."""
    from PIL import Image
    os.makedirs(out, exist_ok=True)
    w, h = 23, 17
    rgb = Image.new("RGB", (w, h))
    rgb.putdata([((x * 11 + y * 3) % 256, (y * 15) % 256, 255 - (x * 9) % 256) if (x // 6 + y // 5) % 2
                 else (30 + x * 5, 200 - y * 7, (x * y) % 256) for y in range(h) for x in range(w)])
    cases = {
        "color420.jpg": (rgb, dict(quality=90, subsampling=2)),
        "color444.jpg": (rgb, dict(quality=95, subsampling=0)),
        "progressive.jpg": (rgb, dict(quality=85, progressive=True)),
        "gray.jpg": (rgb.convert("L"), dict(quality=90)),
        "cmyk.jpg": (rgb.convert("CMYK"), dict(quality=90)),
        "rgb.png": (rgb, {}),
        "rgba.png": (Image.merge("RGBA", (*rgb.split(), rgb.convert("L"))), {}),
        "gray.png": (rgb.convert("L"), {}),
        "palette.png": (rgb.convert("P", palette=Image.ADAPTIVE, colors=16), {}),
    }
    for name, (im, kw) in cases.items():
        path = os.path.join(out, name)
        im.save(path, **kw)
        with Image.open(path) as f:
            f.convert("RGB").save(os.path.join(out, os.path.splitext(name)[0] + "." + name.split(".")[1] + ".ppm"))


class RandomBatches:
    """--synthetic: a fresh batch of uniform pixels (normalized as images are) and labels per
    step, drawn in the training process, as ridge draws its synthetic batches."""

    def __init__(self, torch, batch, res, classes):
        self.torch, self.shape, self.classes = torch, (batch, 3, res, res), classes
        self.mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
        self.std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)

    def __iter__(self):
        while True:
            x = (self.torch.rand(self.shape) - self.mean) / self.std
            yield x, self.torch.randint(0, self.classes, (self.shape[0],))


def cpu_seconds():
    """This process's CPU time and that of its finished children (the DataLoader's workers)."""
    import resource
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def torch_run(args, net):
    """One run as `ridge train` defines it: warm-up iterations, then the measured ones timed on the
    monotonic clock from the first measured batch request to the last update. Returns images/s and
    the CPU seconds per image of the whole run (warm-up included, workers included once they have
    exited), as ridge's ledger counts user_s + sys_s."""
    import torch
    import torchvision
    from torchvision import transforms
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    cpu0 = cpu_seconds()
    if args.synthetic:
        classes, batches = 1000, iter(RandomBatches(torch, args.batch, args.res, 1000))
    else:
        tf = transforms.Compose([transforms.RandomResizedCrop(args.res), transforms.RandomHorizontalFlip(),
                                 transforms.ToTensor(),
                                 transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        ds = torchvision.datasets.ImageFolder(os.path.join(args.data, "train"), tf)
        classes = len(ds.classes)
        total = (args.warmup_iters + args.iters) * args.batch
        sampler = torch.utils.data.RandomSampler(ds, replacement=False, num_samples=total)
        loader = torch.utils.data.DataLoader(ds, batch_size=args.batch, sampler=sampler, drop_last=True,
                                             num_workers=args.workers, persistent_workers=False)
        batches = iter(loader)
    model = getattr(torchvision.models, net)(num_classes=classes)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    loss_fn = torch.nn.CrossEntropyLoss()
    start = None
    for i in range(args.warmup_iters + args.iters):
        if i == args.warmup_iters:
            start = time.perf_counter()
        x, y = next(batches)
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()
    images_per_s = args.iters * args.batch / (time.perf_counter() - start)
    del batches  # the DataLoader's workers exit and their CPU time is counted
    if not args.synthetic:
        del loader
    return images_per_s, (cpu_seconds() - cpu0) / ((args.warmup_iters + args.iters) * args.batch)


def ridge_run(args, net, log_dir):
    cmd = [args.ridge, "train", net, "--batch", str(args.batch), "--res", str(args.res), "--iters", str(args.iters),
           "--warmup-iters", str(args.warmup_iters), "--workers", str(args.workers), "--threads", str(args.threads),
           "--lr", str(args.lr), "--momentum", str(args.momentum), "--weight-decay", str(args.weight_decay),
           "--runs", "1", "--format", "json", "--quiet", "--log-dir", log_dir, "--label", net + "_vs_torch"]
    cmd += ["--synthetic"] if args.synthetic else ["--data", args.data]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["runs"][0]


def main():
    args = parse()
    if args.sgd_reference:
        sgd_reference()
        return
    if args.decode_reference:
        decode_reference(args.decode_reference)
        return
    if args.make_data:
        make_data(args.make_data, args.classes, args.train_per_class, args.val_per_class)
        return
    if not args.ridge or not (args.data or args.synthetic):
        sys.exit("torch_train.py: give --ridge RIDGE and --data DIR or --synthetic (see --help)")
    torch_common.threads_for_blas(args.threads)  # before torch is imported
    import torch
    blas = torch_common.torch_blas()
    if blas == torch_common.REFERENCE_BLAS and not args.allow_reference_blas:
        sys.exit("torch_train.py: PyTorch's matrix products would run the reference BLAS (libblas3), not a peer "
                 "anyone deploys: apt-get install libopenblas0-pthread (or pass --allow-reference-blas)")
    print("# PyTorch %s (BLAS %s), %d threads, %d workers, batch %d, %dx%d, %s; %d warm-up + %d iterations, %d rounds"
          % (torch.__version__, blas, args.threads, args.workers, args.batch, args.res, args.res,
             "synthetic" if args.synthetic else args.data, args.warmup_iters, args.iters, args.rounds), file=sys.stderr)
    print("net,round,torch_images_per_s,ridge_images_per_s,ratio,ridge_data_wait_share,torch_cpu_ms_per_image,"
          "ridge_cpu_ms_per_image,load_average")
    log_dir = tempfile.mkdtemp(prefix="torch_train_")
    summary = []
    for net in args.nets.split(","):
        t, r = [], []
        for k in range(args.rounds):
            ips, cpu = torch_run(args, net)
            t.append(ips)
            rr = ridge_run(args, net, log_dir)
            r.append(rr["images_per_s"])
            ridge_cpu = (rr["user_s"] + rr["sys_s"]) / ((args.warmup_iters + args.iters) * args.batch)
            print("%s,%d,%.3f,%.3f,%.3f,%.4f,%.1f,%.1f,%.2f" % (net, k + 1, t[-1], r[-1], r[-1] / t[-1],
                                                          rr["data_wait_share"], cpu * 1e3, ridge_cpu * 1e3,
                                                          os.getloadavg()[0]), flush=True)
        summary.append((net, statistics.median(t), statistics.median(r)))
    for net, t, r in summary:
        print("# %s: PyTorch %.2f images/s, ridge %.2f images/s (medians of %d rounds): ridge / PyTorch %.2fx"
              % (net, t, r, args.rounds, r / t), file=sys.stderr)


if __name__ == "__main__":
    main()
