#!/usr/bin/env python3
"""The slow-layer flag over the zoo: `ridge bench` on every net, mode and batch, several passes.

A layer is flagged when one of its phases takes over 4x its roofline bound and over 20 us (see
`ridge bench --help`). On a shared 2-core host one pass flags bursts of layers that a moment's load
slowed, so the verdict is the layers flagged in every pass; the script prints those and, per pass,
how many were flagged. A run that ridge refuses (a batch that does not fit, say) is reported with
ridge's own line and counted, not hidden. After the first pass, a pass reruns only the runs in
which the pass before flagged a layer: the rest cannot have a layer flagged in every pass.

    /usr/bin/python3 bench/flag_survey.py --ridge build/cli/ridge --modes infer,train \
        --batches 1,8,16 --passes 2 --roof 235,35 --out bench/runs/flags_DATE

--out PREFIX writes PREFIX.csv (every flagged phase of every pass) and PREFIX.md (the summary).
Without --roof every run measures the ceilings with ridge's quick probes (about 2 s), which then
move with the host's load; a fixed --roof (from `ridge roofline measure`) keeps the bounds equal
across runs; --roof measure runs `ridge roofline measure` (about 20 s, on --threads) before each pass and
holds its FMA peak and STREAM triad for that pass. Whatever the choice, the summary gives each pass's
measured ceilings: a shared host's bandwidth moves by 10 % and more within an hour, and most
flagged layers sit near 4x (on the 2-core Zen 5, bounds 14 % higher, as at 87 instead of 99
GB/s, would have halved one survey's 298 layers flagged in both passes).
"""

import argparse
import csv
import io
import json
import math
import re
import os
import subprocess
import sys
import tempfile
import time

PHASES = ("fwd", "dgrad", "wgrad")


def fail(msg):
    print(f"flag_survey.py: {msg}", file=sys.stderr)
    sys.exit(2)


def positive_ints(text, what):
    try:
        values = [int(v) for v in text.split(",") if v]
    except ValueError:
        fail(f"{what} must be a comma-separated list of positive integers, got '{text}'")
    if not values or any(v <= 0 for v in values):
        fail(f"{what} must be a comma-separated list of positive integers, got '{text}'")
    return values


def zoo(ridge):
    out = subprocess.run([ridge, "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def measure(ridge, threads):
    """(FMA GFLOP/s, STREAM triad GB/s) of `ridge roofline measure` now, on the runs' threads; or
    (None, why) where it failed."""
    p = subprocess.run([ridge, "roofline", "measure", "--format", "json", "--threads", str(threads)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines()
        return None, f"ridge roofline measure: {lines[-1] if lines else f'exit status {p.returncode}'}"
    try:
        d = json.loads(p.stdout)
        flops, gbs = float(d["fp32_gflops"]), float(d["stream"]["triad_gbs"])
    except (ValueError, KeyError, TypeError) as e:
        return None, f"ridge roofline measure: unreadable JSON ({e})"
    if not (math.isfinite(flops) and math.isfinite(gbs) and flops > 0 and gbs > 0):
        return None, f"ridge roofline measure: ceilings {flops} GFLOP/s, {gbs} GB/s"
    return (flops, gbs), None


def bench(ridge, net, mode, batch, roof, args):
    """ridge's CSV rows for one run, or (None, its error line) when ridge refused it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "layers.csv")
        cmd = [ridge, "bench", net, "--mode", mode, "--batch", str(batch), "--repeat", str(args.repeat), "--warmup",
               str(args.warmup), "--threads", str(args.threads), "--format", "csv", "--out", out, "--no-ledger", "--quiet"]
        if roof:
            cmd += ["--roof", roof]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            lines = (p.stderr or p.stdout).strip().splitlines()
            return None, lines[-1] if lines else f"exit status {p.returncode}"
        with open(out, newline="") as f:
            return list(csv.DictReader(f)), None


def flagged_phases(row):
    """(phase, ms, bound_ms) of each phase over 4x its bound and over the floor, as ridge judged the row."""
    if row.get("slow") != "1":
        return []
    out = []
    for ph in PHASES:
        ms, bound = row.get(f"{ph}_ms") or "", row.get(f"{ph}_bound_ms") or ""
        if not ms or not bound:
            continue
        ms, bound = float(ms), float(bound)
        if ms > 4 * bound and ms > 0.020:
            out.append((ph, ms, bound))
    # ridge's own verdict wins where a rounded CSV figure sits at the edge.
    return out or [("?", float(row.get("fwd_ms") or 0), float(row.get("fwd_bound_ms") or 0))]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ridge", required=True, help="the ridge CLI (build/cli/ridge)")
    p.add_argument("--nets", help="comma-separated nets (default: every net of `ridge list`)")
    p.add_argument("--modes", default="infer,train", help="infer, train or both (default both)")
    p.add_argument("--batches", default="1,8,16")
    p.add_argument("--passes", type=int, default=2)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--roof", metavar="GFLOPS,GBS|measure",
                   help="fixed ceilings for every run, or `measure`: measured before each pass (default: ridge's "
                        "quick probes per run)")
    p.add_argument("--out", metavar="PREFIX", help="also write PREFIX.csv and PREFIX.md")
    args = p.parse_args()

    if not os.access(args.ridge, os.X_OK):
        fail(f"--ridge {args.ridge}: not an executable file")
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in ("infer", "train") for m in modes):
        fail(f"--modes takes infer and/or train, got '{args.modes}'")
    batches = positive_ints(args.batches, "--batches")
    for name, v in (("--passes", args.passes), ("--repeat", args.repeat), ("--threads", args.threads)):
        if v <= 0:
            fail(f"{name} must be positive, got {v}")
    if args.roof is not None and args.roof != "measure" and (
            not re.fullmatch(r"\d+(\.\d+)?,\d+(\.\d+)?", args.roof) or min(map(float, args.roof.split(","))) <= 0):
        fail(f"--roof takes GFLOPS,GBS (two positive numbers) or measure, got '{args.roof}'")
    if args.warmup < 0:
        fail(f"--warmup must not be negative, got {args.warmup}")
    known = zoo(args.ridge)
    nets = [n for n in args.nets.split(",") if n] if args.nets else known
    unknown = [n for n in nets if n not in known]
    if unknown:
        fail(f"unknown net(s): {', '.join(unknown)} (`ridge list` names them)")
    if args.out:
        d = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(d) or not os.access(d, os.W_OK):
            fail(f"--out {args.out}: the folder {d} is not a writable folder")

    flags = []  # (pass, net, mode, batch, layer, type, phase, ms, bound_ms)
    refused = {}  # (net, mode, batch) -> ridge's line
    per_pass = {}
    ceilings = {}  # pass -> (GFLOP/s, GB/s) measured at its start
    todo = [(net, mode, batch) for net in nets for mode in modes for batch in batches]
    start = time.time()
    for pss in range(1, args.passes + 1):
        per_pass[pss] = 0
        flagged_runs = []
        if not todo:
            continue
        print(f"\rpass {pss}/{args.passes}: measuring the ceilings\033[K", end="", file=sys.stderr, flush=True)
        measured, why = measure(args.ridge, args.threads)
        if measured:
            ceilings[pss] = measured
        elif args.roof == "measure" and not ceilings:
            fail(why)  # nothing to bound the first pass with
        else:  # the report loses a figure, not the passes before
            print(f"\nflag_survey.py: pass {pss}: {why}", file=sys.stderr)
        if args.roof == "measure":  # a failed measurement keeps the last pass's
            roof = "{:.1f},{:.1f}".format(*(measured or ceilings[max(ceilings)]))
        else:
            roof = args.roof
        for done, (net, mode, batch) in enumerate(todo, 1):
            print(f"\rpass {pss}/{args.passes}: {done}/{len(todo)} {net} {mode} b{batch}, "
                  f"{(time.time() - start) / 60:.1f} min, {per_pass[pss]} flagged\033[K",
                  end="", file=sys.stderr, flush=True)
            rows, error = bench(args.ridge, net, mode, batch, roof, args)
            if rows is None:
                refused[(net, mode, batch)] = error
                continue
            for row in rows:
                phases = flagged_phases(row)
                per_pass[pss] += bool(phases)
                for ph, ms, bound in phases:
                    flags.append((pss, net, mode, batch, row["layer"], row["type"], ph, ms, bound))
            if any(f[0] == pss and f[1:4] == (net, mode, batch) for f in flags):
                flagged_runs.append((net, mode, batch))
        print(file=sys.stderr)
        # A layer counts only when every pass flags it, so a later pass need only rerun the runs
        # the pass before flagged something in.
        todo = flagged_runs

    seen = {}
    for f in flags:
        seen.setdefault((f[1], f[2], f[3], f[4]), set()).add(f[0])
    in_all = sorted(k for k, s in seen.items() if len(s) == args.passes)

    roof_text = {None: "quick probes per run", "measure": "measured before each pass"}.get(args.roof, args.roof)
    md = io.StringIO()
    md.write(f"{len(nets)} nets, modes {','.join(modes)}, batches {','.join(map(str, batches))}, "
             f"{args.passes} passes, --repeat {args.repeat} --warmup {args.warmup} --threads {args.threads}, "
             f"roof {roof_text}, {(time.time() - start) / 60:.1f} min\n\n")
    md.write("| pass | layers flagged (a later pass reruns only the runs the one before flagged) "
             "| measured at its start: FMA GFLOP/s | STREAM triad GB/s |\n|--:|--:|--:|--:|\n")
    for pss, n in per_pass.items():
        flops, gbs = (f"{ceilings[pss][0]:.0f}", f"{ceilings[pss][1]:.1f}") if pss in ceilings else ("not run", "")
        md.write(f"| {pss} | {n} | {flops} | {gbs} |\n")
    md.write(f"\nFlagged in every pass: {len(in_all)}\n")
    for key in in_all:
        net, mode, batch, layer = key
        detail = "; ".join(f"pass {f[0]} {f[6]} {f[7]:.3f} ms against {f[8]:.3f}" for f in flags
                           if (f[1], f[2], f[3], f[4]) == key)
        md.write(f"- {net} {mode} b{batch} {layer}: {detail}\n")
    if refused:
        md.write(f"\nRefused by ridge: {len(refused)}\n")
        for (net, mode, batch), line in sorted(refused.items()):
            md.write(f"- {net} {mode} b{batch}: {line}\n")
    print(md.getvalue(), end="")

    if args.out:
        rows = io.StringIO()
        w = csv.writer(rows, lineterminator="\n")
        w.writerow(["pass", "net", "mode", "batch", "layer", "type", "phase", "ms", "bound_ms"])
        w.writerows(flags)
        for suffix, text in ((".csv", rows.getvalue()), (".md", md.getvalue())):
            tmp = args.out + suffix + ".tmp"
            with open(tmp, "w") as f:
                f.write(text)
            os.replace(tmp, args.out + suffix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
