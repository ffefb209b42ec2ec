#!/usr/bin/env bash
# Packs a CUDA build of this machine for a GPU machine that has the driver, CUDA 13's libraries and
# cuDNN 9 (as PyTorch's wheels) but not Debian's packages: the binaries the GPU checks run, the
# Debian libraries they link that such a machine lacks, and the paths compiled into them (the build
# folder, and the source folder for roofline/chips.csv and tests/data). Building there costs device
# minutes (configure, a full build on 16 cores, nvcc); this costs none. scripts/gpu-prebuilt.sh
# unpacks and runs it there.
#   scripts/gpu-pack.sh [BUILD_DIR]      (default: build) -> .gpu/bundle.tar.xz, about 14 MB
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
bins=(cli/ridge tests/test_cuda_kernels tests/test_cudnn tests/test_cudnn_plan tests/test_roofline_cuda
      bench/kernels/ridge-kernels)
for b in "${bins[@]}"; do
    [ -x "$BUILD/$b" ] || { echo "gpu-pack: $BUILD/$b is missing: build with CUDA and cuDNN first" >&2; exit 1; }
done
grep -q "^RIDGE_CUDA_ARCHS" "$BUILD/CMakeCache.txt" || { echo "gpu-pack: $BUILD has no CUDA (RIDGE_CUDA_ARCHS unset)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for b in "${bins[@]}"; do
    mkdir -p "$stage$BUILD/$(dirname "$b")"
    cp "$BUILD/$b" "$stage$BUILD/$b"
done
# Debian's libraries by the name the binary asks for; CUDA's, cuDNN's and the C runtime's come from
# the GPU machine.
mkdir -p "$stage/opt/ridge-gpu/lib"
ldd "$BUILD/cli/ridge" | awk '/=> \// {print $1, $3}' | while read -r name path; do
    case "$name" in
        libdnnl*|libturbojpeg*|libpng*|libOpenCL*|libgomp*) cp -L "$path" "$stage/opt/ridge-gpu/lib/$name" ;;
    esac
done
printf 'SRC=%s\nBUILD=%s\nREVISION=%s\n' "$SRC" "$BUILD" "$(git -C "$SRC" rev-parse --short=12 HEAD)" > "$stage/opt/ridge-gpu/paths"
mkdir -p "$SRC/.gpu"
tmp="$SRC/.gpu/bundle.tar.xz.tmp"
# Files only: a directory entry would reset the mode of /tmp or /opt where it is unpacked.
(cd "$stage" && find . -type f | sort) | tar -C "$stage" -cf - -T - | xz -T2 -6 > "$tmp"
mv "$tmp" "$SRC/.gpu/bundle.tar.xz"
echo "gpu-pack: $(du -h "$SRC/.gpu/bundle.tar.xz" | cut -f1) in .gpu/bundle.tar.xz ($BUILD at $(git -C "$SRC" rev-parse --short HEAD)); carry .gpu"
