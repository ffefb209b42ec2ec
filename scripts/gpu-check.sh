#!/usr/bin/env bash
# Everything the GPU work needs checked on a machine with a GPU, in one go (one device call):
# configure and build with the cudnn executor, ctest, compute-sanitizer memcheck on a small net,
# a ridge bench per precision, and the side-by-side benchmark against PyTorch. Each stage has its
# own time limit and its log under $OUT (default ./gpu-check-out); a failing stage does not stop
# the next. Dependencies (doctest, Eigen) come from $PWD/.devdeps/usr; cuDNN from the system or
# Python's nvidia-cudnn package.
# A device call lasts at most 10 minutes: STAGES picks a subset for one call, the build directory
# stays for the next (default: all of build test memcheck bench torch).
#   OUT=/tmp/out STAGES="build test memcheck" scripts/gpu-check.sh
#   OUT=/tmp/out STAGES="bench torch" scripts/gpu-check.sh
set -x
STAGES=" ${STAGES:-build test memcheck bench torch} "
want() { [[ "$STAGES" == *" $1 "* ]]; }
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
B=build-gpu
JOBS=$(nproc)
exec > >(tee "$OUT/gpu-check.log") 2>&1

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
nvcc --version > "$OUT/nvcc.txt" 2>&1

# cuDNN: beside the toolkit or in /usr, else the Python wheel (include/ and lib/ in one directory).
CUDNN_ROOT=${CUDNN_ROOT:-}
if [ -z "$CUDNN_ROOT" ] && ! ls /usr/local/cuda/include/cudnn.h /usr/include/cudnn.h /usr/include/*/cudnn.h >/dev/null 2>&1; then
    CUDNN_ROOT=$(python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null)
fi
echo "CUDNN_ROOT=$CUDNN_ROOT" > "$OUT/cudnn-root.txt"
if [ -n "$CUDNN_ROOT" ]; then
    # The wheel ships libcudnn.so.9 only: give the linker the unversioned name it looks for.
    if [ ! -e "$CUDNN_ROOT/lib/libcudnn.so" ] && [ -e "$CUDNN_ROOT/lib/libcudnn.so.9" ]; then
        mkdir -p "$PWD/.cudnn-link/lib" && ln -sf "$CUDNN_ROOT/lib/libcudnn.so.9" "$PWD/.cudnn-link/lib/libcudnn.so"
        ln -sfn "$CUDNN_ROOT/include" "$PWD/.cudnn-link/include"
        export LD_LIBRARY_PATH="$CUDNN_ROOT/lib:${LD_LIBRARY_PATH:-}"
        CUDNN_ROOT="$PWD/.cudnn-link"
    fi
    export LD_LIBRARY_PATH="$CUDNN_ROOT/lib:${LD_LIBRARY_PATH:-}"
fi

if want build; then
timeout 60 cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$PWD/.devdeps/usr" \
    ${CUDNN_ROOT:+-DCUDNN_ROOT="$CUDNN_ROOT"} > "$OUT/configure.log" 2>&1
grep "ridge:" "$OUT/configure.log"
timeout 300 cmake --build $B -j"$JOBS" > "$OUT/build.log" 2>&1
echo "build rc=$?"
fi

# The GPU tests (the CPU ones run in CI).
if want test; then
(cd $B && timeout 300 ctest --output-on-failure -R 'cuda|cudnn' > "$OUT/ctest-gpu.log" 2>&1; echo "ctest gpu rc=$?")
fi

RIDGE=$B/cli/ridge
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if want memcheck; then
timeout 180 "$SAN" --tool memcheck --leak-check full --error-exitcode 9 \
    $RIDGE bench resnet18 --device cuda --res 64 --batch 2 --mode train --warmup 0 --repeat 1 --no-ledger \
    > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$?"
fi

if want bench; then
for p in fp32 tf32 fp16 bf16; do
    timeout 60 $RIDGE bench resnet50 --device cuda --precision $p --batch 1,64 --mode train --repeat 10 \
        --json "$OUT/resnet50-train-$p.json" --ledger "$OUT/ledger_cuda.csv" > "$OUT/resnet50-train-$p.txt" 2>&1
    echo "bench $p rc=$?"
done
fi

if want torch; then
timeout 420 python3 bench/torch_bench_cuda.py --ridge $RIDGE --rounds 2 --repeats 10 \
    --out "$OUT/torch_cuda.csv" > "$OUT/torch_bench_cuda.log" 2>&1
echo "torch bench rc=$?"
fi
exit 0
