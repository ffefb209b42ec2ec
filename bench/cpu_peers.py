#!/usr/bin/python3
"""ridge's oneDNN executor beside the CPU runtimes people pick, on the zoo, in one run.

Inference at each --infer-batches: ridge (`ridge bench`, fused oneDNN executor), PyTorch eager
(eval, no_grad), PyTorch frozen TorchScript (torch.jit.optimize_for_inference of the scripted
module, traced where scripting fails) and ONNX Runtime (npm onnxruntime-node, driven by
bench/ort_bench.js with --threads intra-op threads) on models exported with torch.onnx.export
(opset 13, dynamic batch). Training step at --train-batch (forward, cross-entropy on random
labels, backward; the SGD update not counted on either side): ridge against PyTorch eager.

Every configuration runs --rounds rounds; a round runs each runtime once (--warmup untimed and
--repeats timed steps), so all see the same machine load. The figure per runtime is the median of
its round medians; beside ridge/ORT, the median of the rounds' own ratios ("paired": each round's
two ran back to back, which cancels a host's drift between rounds). Prints a CSV row per
configuration on stdout as it goes, then the ratios table (ridge / ONNX Runtime and ridge / TorchScript for inference, ridge / eager for both) with
geometric means and the goal's verdict, and writes both with --out PREFIX (PREFIX.csv,
PREFIX.md). A bench, not a test: nothing in the build or in ctest runs it.

Needs Debian's python3-torch and python3-torchvision with libopenblas0-pthread (torch's matrix
products call libblas.so.3, which without it is the single-thread reference BLAS), node, and
onnxruntime-node installed into a git-ignored folder (default .ort):
    mkdir -p .ort && (cd .ort && npm install --ignore-scripts onnxruntime-node)
(--ignore-scripts: its install script downloads extras that are not needed; the linux-x64 CPU
library is inside the package.)

  /usr/bin/python3 bench/cpu_peers.py --ridge build/cli/ridge --nets resnet50,mobilenet_v2
  /usr/bin/python3 bench/cpu_peers.py --merge a.csv b.csv --out all   # one table from several runs
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch_common

NETS = ["alexnet", "vgg11", "vgg13", "vgg16", "vgg19", "vgg16_bn", "resnet18", "resnet34", "resnet50",
        "resnet101", "resnet152", "wide_resnet50_2", "wide_resnet101_2", "resnext50_32x4d", "squeezenet1_0",
        "squeezenet1_1", "googlenet", "inception_v3", "densenet121", "densenet169", "mobilenet_v2",
        "mobilenet_v3_large", "mobilenet_v3_small", "shufflenet_v2_x1_0", "mnasnet1_0", "efficientnet_b0",
        "efficientnet_b7", "regnet_y_400mf", "regnet_x_1_6gf", "convnext_tiny", "vit_b_16"]
DEFAULT_RES = {"inception_v3": 299, "efficientnet_b7": 600}
HERE = os.path.dirname(os.path.abspath(__file__))

# The goal (2 threads): inference geomean <= 0.9x ONNX Runtime and no net above 1.0x;
# training geomean <= 0.8x PyTorch eager and no net above 1.0x.
GOALS = {"infer": ("ort", 0.9, 1.0), "train": ("eager", 0.8, 1.0)}


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ridge", help="the ridge CLI (build/cli/ridge)")
    p.add_argument("--merge", nargs="+", metavar="CSV",
                   help="print (and with --out write) the table of earlier runs' CSV files; runs nothing")
    p.add_argument("--nets", default=",".join(NETS))
    p.add_argument("--infer-batches", default="1,16", help="inference batches ('' for none)")
    p.add_argument("--train-batch", type=int, default=8, help="training batch (0 for none)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=5, help="timed steps per runtime and round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ort", default=os.path.join(HERE, "..", ".ort"),
                   help="folder holding node_modules/onnxruntime-node (default .ort)")
    p.add_argument("--onnx-dir", default=os.path.join(HERE, "..", "build", "peers"),
                   help="where exported ONNX models are kept between runs (default build/peers)")
    p.add_argument("--runtimes", default="ridge,eager,torchscript,ort",
                   help="which to run; ratios need ridge and the peer")
    p.add_argument("--allow-reference-blas", action="store_true",
                   help="run PyTorch even on the reference BLAS (to repeat tables made before 2026-11-30 16:30)")
    p.add_argument("--out", metavar="PREFIX", help="also write PREFIX.csv and PREFIX.md")
    return p.parse_args()


def fail(msg):
    print(f"cpu_peers: {msg}", file=sys.stderr)
    sys.exit(2)


def build_model(torchvision, net):
    kwargs = {"weights": None}
    if net in ("googlenet", "inception_v3"):  # ridge's zoo builds them without auxiliary heads
        kwargs.update(aux_logits=False, init_weights=False)
    return getattr(torchvision.models, net)(**kwargs)


def timed(step, warmup, repeats):
    for _ in range(warmup):
        step()
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        ms.append((time.perf_counter() - t0) * 1e3)
    return ms


class Torch:
    def __init__(self, torch, torchvision, threads):
        self.torch, self.tv = torch, torchvision
        torch.set_num_threads(threads)
        torch.manual_seed(0)

    def infer_step(self, model, x):
        def step():
            with self.torch.no_grad():
                model(x)
        return step

    def train_step(self, model, x, labels):
        loss_fn = self.torch.nn.CrossEntropyLoss()

        def step():
            for p in model.parameters():
                p.grad = None
            loss_fn(model(x), labels).backward()
        return step

    def frozen(self, model, x):
        """optimize_for_inference freezes a scripted module and folds conv+bn, as deployment does."""
        torch = self.torch
        try:
            scripted = torch.jit.script(model)
        except Exception as e:  # some torchvision modules do not script; tracing fixes nothing but control flow
            print(f"# {type(model).__name__}: scripting failed ({str(e).splitlines()[0][:80]}); traced", file=sys.stderr)
            with torch.no_grad():
                scripted = torch.jit.trace(model, x[:1])
        return torch.jit.optimize_for_inference(scripted)

    def export_onnx(self, model, net, res, path):
        torch = self.torch
        if os.path.exists(path):
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + f".tmp{os.getpid()}"
        # With gradients enabled, torch 1.13's MultiheadAttention keeps to the ops ONNX has rather
        # than its fused inference kernel (_native_multi_head_attention), which does not export.
        with torch.enable_grad():
            torch.onnx.export(model.eval(), torch.rand(1, 3, res, res), tmp, opset_version=13, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
        os.replace(tmp, path)


def ridge_times(args, net, mode, batch):
    cmd = [args.ridge, "bench", net, "--batch", str(batch), "--mode", mode, "--threads", str(args.threads),
           "--warmup", str(args.warmup), "--repeat", str(args.repeats), "--no-layers", "--no-ledger", "--quiet",
           "--format", "json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:  # ridge's own line says why (a batch that does not fit beside PyTorch's memory, ...)
        raise RuntimeError(f"exit {r.returncode}: {r.stderr.strip()}")
    out = json.loads(r.stdout)
    return out["median_ms"], out["env"]


def ort_times(args, model_path, batch, res):
    cmd = ["node", os.path.join(HERE, "ort_bench.js"), "--ort", args.ort, "--model", model_path, "--input",
           f"{batch},3,{res},{res}", "--threads", str(args.threads), "--warmup", str(args.warmup), "--repeats",
           str(args.repeats)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    out = json.loads(r.stdout)
    return statistics.median(out["ms"]), out["version"]


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


def train_fits(args, net, batch):
    """Whether a training step's weights, gradients, momentum and saved activations (ridge's analytic
    count) fit in nine tenths of the memory available: every runtime keeps about that much, and one
    that does not fit would be killed by the kernel rather than fail."""
    out = subprocess.run([args.ridge, "summary", net, "--batch", str(batch), "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    need, have = json.loads(out)["totals"]["train_memory_bytes"], available_bytes()
    if have is not None and need > 0.9 * have:
        print(f"# {net} train batch {batch}: needs {need / 1e9:.1f} GB, {have / 1e9:.1f} GB available; skipped",
              file=sys.stderr)
        return False
    return True


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def ratio(a, b):
    return a / b if a and b else None


def paired(r, peer):
    """The median over rounds of ridge's round median over the peer's in the same round: the two ran
    minutes or seconds apart, so on a host whose speed drifts this cancels what the ratio of the
    two medians (which may come from different rounds) does not. None without the same number of
    rounds on both sides."""
    a, b = r.get("rounds", {}).get("ridge", []), r.get("rounds", {}).get(peer, [])
    if not a or len(a) != len(b) or not all(b):
        return None
    return statistics.median(x / y for x, y in zip(a, b))


def table(rows, env):
    """The markdown table of every configuration with its ratios, then geometric means and the goal."""
    lines = [f"{env}", "",
             "| net | mode | batch | ridge ms | ORT ms | TorchScript ms | eager ms | ridge/ORT | ridge/ORT paired | "
             "ridge/TorchScript | ridge/eager |", "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]

    def cell(v, fmt):
        return fmt.format(v) if v else "—"

    for r in rows:
        lines.append(f"| {r['net']} | {r['mode']} | {r['batch']} | {cell(r['ridge'], '{:.2f}')} | "
                     f"{cell(r['ort'], '{:.2f}')} | {cell(r['torchscript'], '{:.2f}')} | {cell(r['eager'], '{:.2f}')} | "
                     f"{cell(ratio(r['ridge'], r['ort']), '**{:.3f}**')} | {cell(paired(r, 'ort'), '{:.3f}')} | "
                     f"{cell(ratio(r['ridge'], r['torchscript']), '{:.3f}')} | "
                     f"{cell(ratio(r['ridge'], r['eager']), '{:.3f}' if r['mode'] == 'infer' else '**{:.3f}**')} |")
    lines += ["", "| mode | batch | against | nets | geometric mean | worst | goal |", "|---|--:|---|--:|--:|--:|---|"]
    for mode, batch in sorted({(r["mode"], r["batch"]) for r in rows}):
        for peer in ("ort", "torchscript", "eager"):
            rs = [(ratio(r["ridge"], r[peer]), r["net"]) for r in rows if r["mode"] == mode and r["batch"] == batch]
            rs = [x for x in rs if x[0]]
            if not rs:
                continue
            worst = max(rs)
            goal = ""
            if GOALS[mode][0] == peer:
                g, w = GOALS[mode][1], GOALS[mode][2]
                met = geomean([x for x, _ in rs]) <= g and worst[0] <= w
                goal = f"≤ {g} mean, ≤ {w} each: {'met' if met else 'missed'}"
            lines.append(f"| {mode} | {batch} | {peer} | {len(rs)} | {geomean([x for x, _ in rs]):.3f} | "
                         f"{worst[0]:.3f} ({worst[1]}) | {goal} |")
            ps = [(paired(r, peer), r["net"]) for r in rows if r["mode"] == mode and r["batch"] == batch]
            ps = [x for x in ps if x[0]]
            if peer == "ort" and ps:
                lines.append(f"| {mode} | {batch} | ort, paired by round | {len(ps)} | "
                             f"{geomean([x for x, _ in ps]):.3f} | {max(ps)[0]:.3f} ({max(ps)[1]}) | "
                             f"(the goal is read on the medians) |")
    return "\n".join(lines) + "\n"


CSV_HEADER = ("net,mode,batch,res,threads,ridge_ms,ort_ms,torchscript_ms,eager_ms,ridge_rounds,ort_rounds,"
              "torchscript_rounds,eager_rounds")


def write_out(prefix, csv_lines, text):
    for suffix, body in ((".csv", CSV_HEADER + "\n" + "\n".join(csv_lines) + "\n"), (".md", text)):
        tmp = f"{prefix}{suffix}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(body)
        os.replace(tmp, prefix + suffix)


def run_environment(csv_path):
    """The environment line of the PREFIX.md written beside PREFIX.csv (threads, rounds, versions,
    torch's BLAS, ridge's build, the CPU), or for a merged table its list of runs; None where there
    is none."""
    if not csv_path.endswith(".csv"):
        return None
    try:
        with open(csv_path[:-len(".csv")] + ".md", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or not lines[0].strip():
        return None
    if lines[0].strip() != "merged from:":
        return lines[0].strip()
    runs = []
    for line in lines[1:]:
        if not line.startswith("- "):
            break
        runs.append(line[2:])
    return "merged from " + "; ".join(runs) if runs else None


def merge(args):
    rows, lines, sources = [], [], []
    for path in args.merge:
        try:
            with open(path, encoding="utf-8") as f:
                content = f.read().splitlines()
        except OSError as e:
            fail(f"{path}: {e.strerror}")
        except UnicodeDecodeError:
            fail(f"{path} is not a cpu_peers CSV (not text)")
        if not content or content[0].strip() != CSV_HEADER:
            fail(f"{path} is not a cpu_peers CSV (its header differs)")
        for number, line in enumerate(content[1:], start=2):
            if not line:
                continue
            c = line.split(",")
            num = lambda v: float(v) if v else None
            try:
                rounds = {k: [float(v) for v in c[9 + i].split()] if len(c) > 9 + i else []
                          for i, k in enumerate(("ridge", "ort", "torchscript", "eager"))}
                rows.append({"net": c[0], "mode": c[1], "batch": int(c[2]), "ridge": num(c[5]), "ort": num(c[6]),
                             "torchscript": num(c[7]), "eager": num(c[8]), "rounds": rounds})
            except (IndexError, ValueError):
                fail(f"{path}:{number}: not a cpu_peers row")
            if c[1] not in GOALS:
                fail(f"{path}:{number}: mode {c[1]!r} is neither infer nor train")
            lines.append(line)
        env = run_environment(path)
        sources.append(f"- {os.path.basename(path)}: {env or 'no .md beside it, so its environment is not known'}")
    # Each run's environment as its .md recorded it: merged tables of runs on different builds,
    # BLAS libraries or hosts must say so.
    text = table(rows, "merged from:\n" + "\n".join(sources))
    print(text)
    if args.out:
        write_out(args.out, lines, text)
    return 0


def main():
    args = parse()
    if args.merge:
        return merge(args)
    if not args.ridge:
        fail("--ridge RIDGE is needed to run (or --merge CSV... to combine runs)")
    torch_common.threads_for_blas(args.threads)
    try:
        import torch
        import torchvision
    except ImportError:
        fail("PyTorch not available (apt-get install python3-torch python3-torchvision; run with /usr/bin/python3)")
    runtimes = set(args.runtimes.split(","))
    blas = torch_common.torch_blas()
    if blas == torch_common.REFERENCE_BLAS and runtimes & {"eager", "torchscript"} and not args.allow_reference_blas:
        fail("PyTorch's matrix products would run the reference BLAS (libblas3, about 4 GFLOP/s here), not a peer "
             "anyone deploys: apt-get install libopenblas0-pthread (or pass --allow-reference-blas)")
    unknown = runtimes - {"ridge", "eager", "torchscript", "ort"}
    if unknown:
        fail(f"unknown runtime {sorted(unknown)[0]} (ridge, eager, torchscript, ort)")
    nets = args.nets.split(",")
    for n in nets:
        if n not in NETS:
            fail(f"unknown net {n}")
    if not os.access(args.ridge, os.X_OK):
        fail(f"{args.ridge} is not an executable (build ridge first: make build)")
    if "ort" in runtimes and not os.path.isdir(os.path.join(args.ort, "node_modules", "onnxruntime-node")):
        fail(f"no onnxruntime-node under {args.ort}: mkdir -p .ort && (cd .ort && npm install --ignore-scripts "
             "onnxruntime-node)")
    bad_batches = f"--infer-batches wants batches of 1 or more, comma-separated ('' for none), not {args.infer_batches!r}"
    try:
        infer_batches = [int(b) for b in args.infer_batches.split(",") if b]
    except ValueError:
        fail(bad_batches)
    if any(b < 1 for b in infer_batches):
        fail(bad_batches)

    t = Torch(torch, torchvision, args.threads)
    ort_version = ""
    ridge_env = None
    print(CSV_HEADER, flush=True)
    rows, csv = [], []
    configs = [("infer", b) for b in infer_batches] + ([("train", args.train_batch)] if args.train_batch > 0 else [])
    for net in nets:
        res = DEFAULT_RES.get(net, 224)
        model = build_model(torchvision, net)
        onnx_path = os.path.join(args.onnx_dir, f"{net}.onnx")
        frozen = None
        for mode, batch in configs:
            if mode == "train" and not train_fits(args, net, batch):
                continue
            x = torch.rand(batch, 3, res, res) * 2 - 1
            labels = torch.randint(0, 1000, (batch,))
            steps = {}
            ort_ok = False
            if mode == "infer":
                model.eval()
                if "eager" in runtimes:
                    steps["eager"] = t.infer_step(model, x)
                if "torchscript" in runtimes and frozen is not False:
                    try:
                        if frozen is None:
                            frozen = t.frozen(model, x)
                        steps["torchscript"] = t.infer_step(frozen, x)
                    except Exception as e:
                        print(f"# {net}: TorchScript failed: {str(e).splitlines()[-1][:160]}", file=sys.stderr)
                        frozen = False
                ort_ok = "ort" in runtimes
                if ort_ok:
                    try:
                        t.export_onnx(model, net, res, onnx_path)
                    except Exception as e:
                        print(f"# {net}: ONNX export failed: {str(e).splitlines()[-1][:160]}", file=sys.stderr)
                        ort_ok = False
            else:
                model.train()
                if "eager" in runtimes:
                    steps["eager"] = t.train_step(model, x, labels)
            per_round = {k: [] for k in ("ridge", "ort", "torchscript", "eager")}
            failed = set()  # a runtime that fails a configuration sits out its other rounds

            def attempt(name, run):
                if name in failed:
                    return
                try:
                    per_round[name].append(run())
                except Exception as e:  # one runtime's failure must not end a run of hours
                    print(f"# {net} {mode} batch {batch}: {name} failed: {str(e).splitlines()[-1][:160]}",
                          file=sys.stderr)
                    failed.add(name)
                    per_round[name].clear()

            def run_ort():
                nonlocal ort_version
                m, ort_version = ort_times(args, onnx_path, batch, res)
                return m

            def run_ridge():
                nonlocal ridge_env
                m, env = ridge_times(args, net, mode, batch)
                if ridge_env is None and env.get("git", "").endswith("+dirty"):
                    # The table records the stamp too; a reader of the console should not miss it.
                    print(f"# warning: {args.ridge} was built from uncommitted sources (git {env['git']})",
                          file=sys.stderr)
                ridge_env = env
                return m

            for _ in range(args.rounds):
                for name, step in steps.items():
                    attempt(name, lambda: statistics.median(timed(step, args.warmup, args.repeats)))
                if mode == "infer" and ort_ok:
                    attempt("ort", run_ort)
                if "ridge" in runtimes:
                    attempt("ridge", run_ridge)
            med = {k: statistics.median(v) if v else None for k, v in per_round.items()}
            row = {"net": net, "mode": mode, "batch": batch, **med,
                   "rounds": {k: list(v) for k, v in per_round.items()}}
            rows.append(row)
            line = ",".join([net, mode, str(batch), str(res), str(args.threads)] +
                            [f"{med[k]:.3f}" if med[k] else "" for k in ("ridge", "ort", "torchscript", "eager")] +
                            [" ".join(f"{v:.2f}" for v in per_round[k]) for k in ("ridge", "ort", "torchscript", "eager")])
            csv.append(line)
            print(line, flush=True)
        del model, frozen

    load = os.getloadavg()
    env = (f"{args.threads} threads; {args.rounds} rounds of {args.warmup} warm-up + {args.repeats} timed steps per "
           f"runtime; medians of round medians (ms). torch {torch.__version__}, torchvision {torchvision.__version__}, "
           f"onnxruntime-node {ort_version or '—'}; torch's BLAS {blas}")
    if ridge_env:
        env += (f"; ridge git {ridge_env['git']}, oneDNN {ridge_env['onednn']}, {ridge_env['compiler']}; "
                f"{ridge_env['cpu']}, {ridge_env['cores']} cores")
    env += f"; load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    text = table(rows, env)
    print("\n" + text)
    if args.out:
        write_out(args.out, csv, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
