#!/usr/bin/env bash
# How long the analytic count of the whole zoo takes: ridge (every layer of all 31 nets, CSV) next
# to a forward-hook counter on torchvision's modules (bench/torch_count.py), in one run on this
# machine. ridge: median and range of 11 runs of the whole process. Usage: bench/compare_counters.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
ridge="${1:-build}/cli/ridge"
[ -x "$ridge" ] || { echo "compare_counters: $ridge not built (run make)" >&2; exit 1; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores"
times=()
for i in $(seq 11); do
    t0=$(date +%s%N)
    "$ridge" zoo --layers --format csv > /dev/null
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
layers=$("$ridge" zoo --layers --format csv | tail -n +2 | wc -l)
awk -v med="${sorted[5]}" -v lo="${sorted[0]}" -v hi="${sorted[10]}" -v layers="$layers" 'BEGIN {
    printf "ridge zoo --layers --format csv: 31 nets, %d layers: median %.1f ms (min %.1f, max %.1f) over 11 runs\n",
           layers, med / 1000, lo / 1000, hi / 1000 }'
if /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
    echo "PyTorch forward-hook counter over the same nets at batch 1 (model construction + one forward):"
    /usr/bin/python3 bench/torch_count.py --time | tail -n 1
else
    echo "PyTorch forward-hook counter: skipped (python3-torchvision not installed)"
fi
