#!/bin/sh
# Configures (once) and builds gpuzones into build/, warnings as errors.
set -eu
cd "$(dirname "$0")/.."
sh scripts/setup-debian.sh
[ -f build/build.ninja ] || meson setup build -Dwerror=true
ninja -C build
