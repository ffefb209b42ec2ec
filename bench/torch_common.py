"""What torch_bench.py (CPU) and torch_bench_cuda.py (GPU) share: their common options, the import of
PyTorch (a missing one is a skip, not a failure), which BLAS PyTorch's matrix products call (also
for cpu_peers.py), `ridge bench` run for one JSON result, and the round-by-round alternation of
PyTorch and ridge, so both see the same machine state."""
import json
import os
import statistics
import subprocess


def add_common_args(p, warmup, repeats):
    p.add_argument("--res", type=int, default=224)
    p.add_argument("--warmup", type=int, default=warmup)
    p.add_argument("--repeats", type=int, default=repeats, help="timed steps per round")
    p.add_argument("--rounds", type=int, default=3, help="alternations of PyTorch and ridge")
    p.add_argument("--ridge", metavar="RIDGE", help="path of the ridge CLI to run side by side")


def import_torch():
    """(torch, torchvision), or None after printing the one line that says the run is skipped."""
    try:
        import torch
        import torchvision
    except ImportError:
        print("skipped: PyTorch not available")
        return None
    return torch, torchvision


REFERENCE_BLAS = "the reference BLAS (libblas3)"


def torch_blas():
    """Which BLAS torch's matrix products (linear layers, attention) call. Debian's python3-torch links
    libblas.so.3, an alternative that points at libblas3's reference implementation (single thread,
    about 4 GFLOP/s on a Zen 3 core) unless OpenBLAS or BLIS provides it; liblapack.so.3 is a separate
    alternative, so only the mapping of libblas.so.3 itself says. Convolutions go to oneDNN either
    way."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "/" in line}
    for path in paths:
        folder, name = os.path.split(path)
        if name.startswith("libblas.so"):
            if "openblas" in folder:
                return "OpenBLAS"
            if "blis" in folder:
                return "BLIS"
            return REFERENCE_BLAS if folder.endswith("/blas") else f"unknown ({path})"
    for path in paths:  # a torch linked to its BLAS directly
        name = os.path.basename(path)
        if name.startswith("libopenblas"):
            return "OpenBLAS"
        if name.startswith("libmkl"):
            return "MKL"
    return "unknown"


def threads_for_blas(threads):
    """Has OpenBLAS (or BLIS) run --threads threads: torch.set_num_threads does not reach a BLAS torch
    was not built against, which takes one thread a core by default. Call before importing torch."""
    for var in ("OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[var] = str(threads)


def ridge_bench(ridge, args):
    """`ridge bench ARGS` for one configuration: its median step and update times in ms."""
    cmd = [ridge, "bench", *args, "--no-layers", "--no-ledger", "--quiet", "--format", "json"]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return out["median_ms"], out.get("update_ms", 0.0)


class Rounds:
    """Times of one configuration over the rounds: every PyTorch step, the per-round medians of
    PyTorch's steps and updates, and ridge's medians, one per round."""

    def __init__(self):
        self.torch_all, self.torch, self.torch_update, self.ridge, self.ridge_update = [], [], [], [], []

    def median(self):
        return statistics.median(self.torch)


def alternate(rounds, torch_round, ridge_round):
    """torch_round() returns (step times, update times) in ms; ridge_round() (median, update) in ms,
    or is None when ridge does not run."""
    r = Rounds()
    for _ in range(rounds):
        t, u = torch_round()
        r.torch_all += t
        r.torch.append(statistics.median(t))
        r.torch_update.append(statistics.median(u))
        if ridge_round:
            m, mu = ridge_round()
            r.ridge.append(m)
            r.ridge_update.append(mu)
    return r
