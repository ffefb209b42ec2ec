#!/usr/bin/env bash
# Installs what ridge needs from Debian 12's packages, and only what is missing; safe to re-run.
# CUDA (nvcc, cuDNN, cuBLAS) is not a Debian package: it is looked for in /usr/local/cuda and is
# optional; without it the GPU parts are not built.
set -euo pipefail

# ocl-icd-opencl-dev: Debian's oneDNN is built with its OpenCL GPU runtime, and its CMake config
# requires the OpenCL headers and loader; the package is only a Recommends of libdnnl-dev, and we
# install without recommends, so it must be named.
# libturbojpeg0-dev, libpng-dev: `ridge train` decodes JPEG and PNG images.
packages=(cmake make g++ doctest-dev libeigen3-dev libdnnl-dev ocl-icd-opencl-dev gnuplot-nox libturbojpeg0-dev libpng-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    if [ "$(id -u)" -eq 0 ]; then
        sudo=()
    elif command -v sudo >/dev/null; then
        sudo=(sudo)
    else
        echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
    echo "install-deps: all present (CUDA toolkit found)"
else
    echo "install-deps: all present (no CUDA toolkit in /usr/local/cuda: GPU parts will be skipped)"
fi
