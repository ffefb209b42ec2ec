#!/usr/bin/env bash
# The GPU checks on a machine with a GPU, from scripts/gpu-pack.sh's bundle (no build there): the
# GPU tests (the op table three processes at once: the load under which a stream-order bug showed),
# the probes, a bench per precision, a training run, the profiler's counters, the CUDA kernels,
# compute-sanitizer memcheck, and PyTorch side by side with what time is left. Logs under $OUT.
#   OUT=/tmp/out BUDGET=450 scripts/gpu-prebuilt.sh [STAGES]   (default: tests cli memcheck torch)
set -u
BUDGET=${BUDGET:-450}
STAGES=" ${1:-tests cli memcheck torch} "
want() { [[ "$STAGES" == *" $1 "* ]]; }
T0=$(date +%s)
left() { echo $((BUDGET - ($(date +%s) - T0))); }
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$REPO/gpu-check-out}
mkdir -p "$OUT"
tar --no-overwrite-dir -xJf "$REPO/.gpu/bundle.tar.xz" -C / || { echo "gpu-prebuilt: no .gpu/bundle.tar.xz (scripts/gpu-pack.sh)"; exit 1; }
# shellcheck disable=SC1091
. /opt/ridge-gpu/paths
# The binaries read roofline/chips.csv and tests/data by the source path they were built at.
if [ "$SRC" != "$REPO" ] && [ ! -e "$SRC" ]; then mkdir -p "$(dirname "$SRC")" && ln -s "$REPO" "$SRC"; fi
NV=$(python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null)
DIRS=$(find $NV /usr/local/cuda/ \( -name 'libcudnn.so.9' -o -name 'libcublas.so.13' -o -name 'libcublasLt.so.13' \
    -o -name 'libcupti.so.13' \) 2>/dev/null | xargs -r -n1 dirname | sort -u | tr '\n' ':')
export LD_LIBRARY_PATH=/opt/ridge-gpu/lib:$DIRS${LD_LIBRARY_PATH:-}
R=$BUILD/cli/ridge
T=$BUILD/tests
{
    date; nvidia-smi; echo "revision $REVISION, source $SRC, build $BUILD"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    ldd "$R" | grep -E "not found|cudnn|cupti|dnnl"; nproc
    python3 -c 'import torch; print("torch", torch.__version__, "cuDNN", torch.backends.cudnn.version())'
} > "$OUT/env.txt" 2>&1
if ldd "$R" | grep -q "not found"; then
    echo "gpu-prebuilt: a library ridge links is missing here:"; ldd "$R" | grep "not found"; exit 1
fi

if want tests; then
    export OMP_NUM_THREADS=2
    op='-tc=every case of the op table*'
    for i in 1 2 3; do (timeout 150 "$T/test_cudnn" "$op" > /tmp/op$i.log 2>&1; echo "rc=$?" >> /tmp/op$i.log) & done
    (timeout 150 "$T/test_cudnn" -d "-tce=every case of the op table*,every zoo net: each tensor*" > /tmp/rest.log 2>&1
     echo "rc=$?" >> /tmp/rest.log) &
    (timeout 150 "$T/test_cuda_kernels" -d > /tmp/kern.log 2>&1; echo "rc=$?" >> /tmp/kern.log) &
    (timeout 150 "$T/test_cudnn_plan" -d "--test-case-exclude=*[may skip]" > /tmp/plan.log 2>&1; echo "rc=$?" >> /tmp/plan.log) &
    wait
    timeout 90 "$T/test_roofline_cuda" > /tmp/probes.log 2>&1; echo "rc=$?" >> /tmp/probes.log
    for f in op1 op2 op3 rest kern plan probes; do echo "##### $f"; tail -c 8000 /tmp/$f.log; done > "$OUT/tests.log"
    grep -E "^##### |test cases:|rc=" "$OUT/tests.log"
fi
if want cli; then
    run() {
        local t=$1 s; shift; echo "===== ($t s) $*"; s=$(date +%s%N)
        timeout "$t" "$@" 2>&1 | tail -c 6000
        echo "rc=${PIPESTATUS[0]} wall_ms=$((($(date +%s%N) - s) / 1000000))"
    }
    {
        run 60 "$R" roofline measure --device cuda --quick --format json
        for p in fp32 bf16; do run 60 "$R" bench resnet50 --device cuda --precision $p --batch 1,64 --mode train --repeat 10 --no-ledger; done
        run 40 "$R" bench resnet50 --device cuda --batch 1 --mode infer --cuda-graph --repeat 20 --no-ledger
        run 60 "$R" train resnet18 --synthetic --device cuda --batch 64 --iters 20 --warmup-iters 3 --runs 1 --log-dir /tmp/logs --quiet
        run 60 "$R" profile resnet18 --device cuda --batch 8
        run 60 "$BUILD/bench/kernels/ridge-kernels" cuda-se-scale cuda-se-gate-grad cuda-hardswish
    } > "$OUT/cli.log" 2>&1
    grep -E "^(=====|rc=)" "$OUT/cli.log"
fi
if want memcheck; then
    SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    timeout 150 "$SAN" --tool memcheck --leak-check full --error-exitcode 9 "$R" bench resnet18 --device cuda --res 64 \
        --batch 2 --mode train --warmup 0 --repeat 1 --no-ledger > "$OUT/memcheck.log" 2>&1
    echo "memcheck rc=$?" | tee -a "$OUT/memcheck.log"
fi
if want torch; then
    L=$(($(left) - 15))
    echo "torch bench: $L s left"
    if [ "$L" -gt 60 ]; then
        (cd "$REPO" && PYTHONUNBUFFERED=1 timeout "$L" python3 bench/torch_bench_cuda.py --ridge "$R" --rounds 2 --repeats 10 \
            --nets resnet50,mobilenet_v2 > "$OUT/torch.log" 2>&1; echo "torch rc=$?" >> "$OUT/torch.log")
        tail -16 "$OUT/torch.log"
    fi
fi
echo "total $(($(date +%s) - T0)) s"
