#!/usr/bin/env bash
# setup.sh - installs the Debian 12 packages that rlxc needs to build and test.
#
# Idempotent and quick when everything is there: each package is checked with
# dpkg-query first, and apt-get (update + install) runs only for the missing
# ones. Installing needs root; without it, the missing packages are listed and
# the script exits 1. Extend PACKAGES to add a dependency.
set -euo pipefail

PACKAGES="
build-essential clang clang-14 libclang-rt-14-dev make pkg-config
libcjson-dev libcriterion-dev libclang-dev
python3-numpy valgrind libopenblas-dev man-db time
libonnx-dev libprotobuf-c-dev protobuf-c-compiler libonnx-testdata
python3-onnx python3-torch python3-torchvision
libshaderc-dev glslang-dev glslc spirv-tools glslang-tools
libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm python3-sklearn
spirv-cross
"

missing=()
for pkg in $PACKAGES; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all packages present"
    exit 0
fi

echo "setup: missing packages: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "setup: not root; install them with: apt-get install -y ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q "${missing[@]}"
echo "setup: installed ${missing[*]}"
