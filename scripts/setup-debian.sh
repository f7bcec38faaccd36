#!/bin/sh
# Installs the Debian 12 packages gpuzones needs to build and test, if any
# is missing. Safe to run again: it does nothing when all are installed.
set -eu

PACKAGES="
meson ninja-build gcc pkg-config python3
libvulkan-dev glslc
mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
clang libclang-rt-14-dev
libepoxy-dev libegl-dev libgl-dev libgles-dev libegl-mesa0 libgl1-mesa-dri
ocl-icd-opencl-dev opencl-headers pocl-opencl-icd
libvulkan-volk-dev g++
xvfb libx11-dev libglx-mesa0
liblz4-dev
golang-go
protobuf-compiler
"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "gpuzones: installing:$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "gpuzones: run as root or install sudo" >&2; exit 1; }
    SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q $missing
